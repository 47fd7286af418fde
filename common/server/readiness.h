// Health that means ready (grpc.health.v1): a service is SERVING only while every dependency it
// needs answers — its store, the services it calls, audit_svc for a writer in remote mode — and
// NOT_SERVING while one does not, SERVING again when it is back. Each dependency is a named,
// cheap probe with a short deadline, polled on an interval by a thread of its own; every
// transition is one "health.changed" log line, and with metrics each dependency is the gauge
// sharedos_dependency_up{dependency="<name>"} (names are fixed words: bounded labels).

#ifndef SHAREDOS_COMMON_SERVER_READINESS_H_
#define SHAREDOS_COMMON_SERVER_READINESS_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/metrics/metrics.h"
#include "common/time/clock.h"
#include "grpcpp/health_check_service_interface.h"

namespace sharedos::common::server {

// One dependency: a fixed name ("store", "grantstore", "authorizer", "audit") and its probe,
// which must answer within `timeout` (OK: up).
struct DependencyCheck {
  std::string name;
  std::function<absl::Status(absl::Duration timeout)> probe;
  // Whether the probe's message, while it is down, is shown as the dependency's detail
  // (sharedosctl status). Only for probes whose messages name no location or secret.
  bool show_detail = false;
};

// The longest a probe may take; a shorter interval shortens it.
inline constexpr absl::Duration kMaxProbeTimeout = absl::Seconds(1);

// A --health_interval value: more than 0 and at most 10 minutes. Errors: INVALID_ARGUMENT naming
// the flag.
absl::Status CheckHealthInterval(absl::Duration interval);

// Polls the checks and reports their conjunction as the health of every service of a server.
// Thread-safe.
class Readiness {
 public:
  // Runs every check once before returning (a server is not SERVING before its first round),
  // then every `interval` (> 0) until Stop. `health` and `metrics` (null: none) are borrowed and
  // must outlive this.
  // The interval is waited out on `clock` (borrowed; must outlive this).
  static std::unique_ptr<Readiness> Start(grpc::HealthCheckServiceInterface* health,
                                          std::vector<DependencyCheck> checks,
                                          absl::Duration interval, metrics::Metrics* metrics,
                                          const Clock& clock = RealClock());
  ~Readiness();
  Readiness(const Readiness&) = delete;
  Readiness& operator=(const Readiness&) = delete;

  // Stops polling (the health status stays as last set). Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // Whether every dependency answered in the last round.
  bool ready() ABSL_LOCKS_EXCLUDED(mu_);
  // Each dependency and whether it answered in the last round, in check order.
  std::vector<std::pair<std::string, bool>> dependencies() ABSL_LOCKS_EXCLUDED(mu_);
  // Each dependency's detail from the last round (in check order): its probe's message while
  // down when the check shows it (DependencyCheck::show_detail), else empty.
  std::vector<std::string> details() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Readiness(grpc::HealthCheckServiceInterface* health, std::vector<DependencyCheck> checks,
            absl::Duration interval, metrics::Metrics* metrics, const Clock& clock);
  // One round: every probe, then health and gauges set from the results.
  void Round() ABSL_LOCKS_EXCLUDED(mu_);
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  grpc::HealthCheckServiceInterface* const health_;
  const std::vector<DependencyCheck> checks_;
  const absl::Duration interval_;
  const Clock& clock_;
  std::vector<prometheus::Gauge*> gauges_;

  absl::Mutex mu_;
  std::vector<bool> up_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> details_ ABSL_GUARDED_BY(mu_);
  bool reported_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_READINESS_H_
