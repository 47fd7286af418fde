// Per-method gRPC server metrics: sharedos_rpc_server_seconds{method} (latency from the call's
// arrival to its status) and sharedos_rpc_server_handled_total{method, code}. Installed by
// ServerRunner on every listener when ServerOptions::metrics is set, after the malformed-request
// interceptor (so the status counted is the one sent).
//
// Bounded: a call answered UNIMPLEMENTED (a method no service registered, whatever name the
// client sent) is counted under method "other", and so is every method beyond the first 256.
// A method's series are resolved once, at its first call; later calls cost one lookup under a
// reader lock. Thread-safe.

#ifndef SHAREDOS_COMMON_SERVER_RPC_METRICS_H_
#define SHAREDOS_COMMON_SERVER_RPC_METRICS_H_

#include <array>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/metrics/metrics.h"
#include "grpcpp/support/server_interceptor.h"

namespace sharedos::common::server {

class RpcMetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // The most methods given series of their own.
  static constexpr size_t kMaxMethods = 256;

  // Series of one method.
  struct MethodSeries {
    prometheus::Histogram* latency = nullptr;
    std::array<prometheus::Counter*, 17> handled{};  // By grpc::StatusCode.
  };

  // Borrows `metrics`, which must outlive every server this factory is installed on.
  explicit RpcMetricsInterceptorFactory(metrics::Metrics& metrics);

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

  // The series of `method` (or of "other"); never null.
  const MethodSeries* SeriesFor(const std::string& method, bool unimplemented)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const MethodSeries* Resolve(const std::string& method) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& handled_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<MethodSeries>> series_ ABSL_GUARDED_BY(mu_);
  const MethodSeries* other_ = nullptr;
};

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_RPC_METRICS_H_
