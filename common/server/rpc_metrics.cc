#include "common/server/rpc_metrics.h"

#include <utility>

#include "absl/time/clock.h"
#include "grpcpp/support/interceptor.h"
#include "grpcpp/support/status.h"

namespace sharedos::common::server {
namespace {

using grpc::experimental::InterceptionHookPoints;

constexpr std::array<const char*, 17> kCodeNames = {
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
};

class RpcMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(RpcMetricsInterceptorFactory& factory, std::string method)
      : factory_(factory), method_(std::move(method)), start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      const int code = static_cast<int>(status.error_code());
      const auto* series =
          factory_.SeriesFor(method_, status.error_code() == grpc::StatusCode::UNIMPLEMENTED);
      series->latency->Observe(metrics::SecondsSince(start_));
      series->handled[code >= 0 && code < 17 ? code : 2]->Increment();
    }
    methods->Proceed();
  }

 private:
  RpcMetricsInterceptorFactory& factory_;
  const std::string method_;
  const absl::Time start_;
};

}  // namespace

RpcMetricsInterceptorFactory::RpcMetricsInterceptorFactory(metrics::Metrics& metrics)
    : latency_(prometheus::BuildHistogram()
                   .Name("sharedos_rpc_server_seconds")
                   .Help("gRPC server latency from a call's arrival to its status, by method.")
                   .Register(metrics.registry())),
      handled_(prometheus::BuildCounter()
                   .Name("sharedos_rpc_server_handled_total")
                   .Help("gRPC calls answered, by method and status code.")
                   .Register(metrics.registry())) {
  absl::MutexLock lock(&mu_);
  other_ = Resolve("other");
}

const RpcMetricsInterceptorFactory::MethodSeries* RpcMetricsInterceptorFactory::Resolve(
    const std::string& method) {
  auto series = std::make_unique<MethodSeries>();
  series->latency = &latency_.Add({{"method", method}}, metrics::LatencyBuckets());
  for (size_t code = 0; code < kCodeNames.size(); ++code) {
    series->handled[code] = &handled_.Add({{"method", method}, {"code", kCodeNames[code]}});
  }
  const MethodSeries* resolved = series.get();
  series_.emplace(method, std::move(series));
  return resolved;
}

const RpcMetricsInterceptorFactory::MethodSeries* RpcMetricsInterceptorFactory::SeriesFor(
    const std::string& method, bool unimplemented) {
  if (unimplemented) return other_;
  {
    absl::ReaderMutexLock lock(&mu_);
    if (auto it = series_.find(method); it != series_.end()) return it->second.get();
  }
  absl::MutexLock lock(&mu_);
  if (auto it = series_.find(method); it != series_.end()) return it->second.get();
  if (series_.size() > kMaxMethods) return other_;
  return Resolve(method);
}

grpc::experimental::Interceptor* RpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RpcMetricsInterceptor(*this, info->method() == nullptr ? "" : info->method());
}

}  // namespace sharedos::common::server
