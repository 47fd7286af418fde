// The process's Prometheus metrics, one place: a registry every component adds its pre-resolved
// counters to at construction, and the HTTP exposer that serves it on --metrics_port.
//
// Components take a `Metrics*` through their options; null means no metrics (unit tests and
// benches). Label sets are bounded by construction: components label only with fixed enums
// (outcomes, reason codes, statuses, method names of registered services), never with an id, an
// actor or a path. Thread-safe: prometheus-cpp counters, gauges and histograms are atomic, and
// families are built once at start-up.

#ifndef SHAREDOS_COMMON_METRICS_METRICS_H_
#define SHAREDOS_COMMON_METRICS_METRICS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace sharedos::common::metrics {

// Latency buckets in seconds, 50 µs to 10 s: wide enough for an in-process decision and a
// commit under fsync.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets();

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  prometheus::Registry& registry() { return *registry_; }
  const std::shared_ptr<prometheus::Registry>& shared_registry() const { return registry_; }

  // The text exposition format, as /metrics answers it.
  std::string Serialize() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
};

// Serves a registry at http://<host>:<port>/metrics until destroyed.
class MetricsExposer {
 public:
  // Plain HTTP: only a loopback host is accepted. Port 0 picks a free one.
  // Errors: INVALID_ARGUMENT ("metrics_host": not loopback; "metrics_port": out of range);
  // UNAVAILABLE (cannot bind).
  static absl::StatusOr<std::unique_ptr<MetricsExposer>> Start(Metrics& metrics,
                                                               const std::string& host, int port);
  ~MetricsExposer();

  int port() const { return port_; }
  // "http://host:port/metrics".
  std::string url() const;

 private:
  struct Impl;
  MetricsExposer(std::unique_ptr<Impl> impl, std::string host, int port);

  std::unique_ptr<Impl> impl_;
  std::string host_;
  int port_;
};

// Prints "<name> metrics on <url>" (the line tools and tests wait for). Flushes stdout.
void ReportMetricsListening(const std::string& name, const MetricsExposer& exposer);

// Seconds since `start`, for Histogram::Observe.
double SecondsSince(absl::Time start);

}  // namespace sharedos::common::metrics

#endif  // SHAREDOS_COMMON_METRICS_METRICS_H_
