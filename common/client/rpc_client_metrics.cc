#include "common/client/rpc_client_metrics.h"

#include <utility>

#include "absl/time/clock.h"
#include "grpcpp/support/interceptor.h"

namespace sharedos::common::client {
namespace {

using grpc::experimental::InterceptionHookPoints;

class ClientMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  // Made when the call starts (gRPC creates a call's interceptors then).
  explicit ClientMetricsInterceptor(prometheus::Histogram* latency)
      : latency_(latency), start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_STATUS)) {
      latency_->Observe(metrics::SecondsSince(start_));
    }
    methods->Proceed();
  }

 private:
  prometheus::Histogram* const latency_;
  const absl::Time start_;
};

class ClientMetricsFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit ClientMetricsFactory(std::shared_ptr<ClientLatencySeries> series)
      : series_(std::move(series)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    return new ClientMetricsInterceptor(series_->For(info->method()));
  }

 private:
  const std::shared_ptr<ClientLatencySeries> series_;
};

absl::Mutex installed_mu(absl::kConstInit);
std::shared_ptr<ClientLatencySeries>& Installed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(installed_mu) {
  static auto* installed = new std::shared_ptr<ClientLatencySeries>();
  return *installed;
}

}  // namespace

ClientLatencySeries::ClientLatencySeries(metrics::Metrics& metrics)
    : registry_(metrics.shared_registry()),
      family_(prometheus::BuildHistogram()
                  .Name("sharedos_rpc_client_seconds")
                  .Help("Latency of the calls a SharedOS process makes to its dependencies, from "
                        "a call's start to its status, by method.")
                  .Register(*registry_)),
      other_(&family_.Add({{"method", "other"}}, metrics::LatencyBuckets())) {}

prometheus::Histogram* ClientLatencySeries::For(const std::string& method) {
  absl::MutexLock lock(&mu_);
  if (auto found = series_.find(method); found != series_.end()) return found->second;
  if (series_.size() >= kMaxMethods) return other_;
  prometheus::Histogram* histogram = &family_.Add({{"method", method}}, metrics::LatencyBuckets());
  series_.emplace(method, histogram);
  return histogram;
}

void InstallClientMetrics(metrics::Metrics* metrics) {
  auto series = metrics == nullptr ? nullptr : std::make_shared<ClientLatencySeries>(*metrics);
  absl::MutexLock lock(&installed_mu);
  Installed() = std::move(series);
}

std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface> NewClientMetricsFactory() {
  absl::MutexLock lock(&installed_mu);
  if (Installed() == nullptr) return nullptr;
  return std::make_unique<ClientMetricsFactory>(Installed());
}

}  // namespace sharedos::common::client
