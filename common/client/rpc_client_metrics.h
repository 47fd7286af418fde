// sharedos_rpc_client_seconds{method}: the latency of every call a SharedOS channel makes
// (channel.h), from its start to its status, by the method called — the per-dependency view
// beside the server side's sharedos_rpc_server_seconds (common/server/rpc_metrics.h).
//
// Process-wide: a binary with --metrics_port installs its registry once at start-up
// (service_flags.cc, sharedosd), before it makes its channels; a channel made with none
// installed records nothing. Bounded: the first kMaxMethods methods get series of their own,
// later ones count as "other". Thread-safe.

#ifndef SHAREDOS_COMMON_CLIENT_RPC_CLIENT_METRICS_H_
#define SHAREDOS_COMMON_CLIENT_RPC_CLIENT_METRICS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics/metrics.h"
#include "grpcpp/support/client_interceptor.h"

namespace sharedos::common::client {

// The latency series of one registry, by method.
class ClientLatencySeries {
 public:
  static constexpr size_t kMaxMethods = 256;

  // Shares `metrics`' registry (it stays alive while a channel made with it is).
  explicit ClientLatencySeries(metrics::Metrics& metrics);

  // The histogram of `method` (or of "other" past the bound); never null.
  prometheus::Histogram* For(const std::string& method) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Histogram>& family_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, prometheus::Histogram*> series_ ABSL_GUARDED_BY(mu_);
  prometheus::Histogram* other_;
};

// Installs `metrics` for the channels made from now on; null: none (later channels record
// nothing). Channels made earlier keep what they had.
void InstallClientMetrics(metrics::Metrics* metrics);

// The interceptor factory of the installed series for a new channel; null when none is installed.
std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface> NewClientMetricsFactory();

}  // namespace sharedos::common::client

#endif  // SHAREDOS_COMMON_CLIENT_RPC_CLIENT_METRICS_H_
