#include "common/metrics/metrics.h"

#include <cstdio>
#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "prometheus/exposer.h"
#include "prometheus/text_serializer.h"

namespace sharedos::common::metrics {
namespace {

bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host.rfind("127.", 0) == 0;
}

}  // namespace

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* const buckets = new prometheus::Histogram::BucketBoundaries{
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
      0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};
  return *buckets;
}

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {}

std::string Metrics::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

struct MetricsExposer::Impl {
  std::unique_ptr<prometheus::Exposer> exposer;
};

absl::StatusOr<std::unique_ptr<MetricsExposer>> MetricsExposer::Start(Metrics& metrics,
                                                                      const std::string& host,
                                                                      int port) {
  if (!IsLoopback(host)) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics_host: plain HTTP is served only on loopback, not ", host));
  }
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("metrics_port: out of range: ", port));
  }
  auto impl = std::make_unique<Impl>();
  try {
    impl->exposer = std::make_unique<prometheus::Exposer>(absl::StrCat(host, ":", port));
  } catch (const std::exception&) {
    return absl::UnavailableError(absl::StrCat("metrics: cannot listen on ", host, ":", port));
  }
  const std::vector<int> ports = impl->exposer->GetListeningPorts();
  if (ports.empty() || ports.front() == 0) {
    return absl::UnavailableError(absl::StrCat("metrics: cannot listen on ", host, ":", port));
  }
  impl->exposer->RegisterCollectable(metrics.shared_registry());
  const int bound = ports.front();
  return std::unique_ptr<MetricsExposer>(new MetricsExposer(std::move(impl), host, bound));
}

MetricsExposer::MetricsExposer(std::unique_ptr<Impl> impl, std::string host, int port)
    : impl_(std::move(impl)), host_(std::move(host)), port_(port) {}

MetricsExposer::~MetricsExposer() = default;

std::string MetricsExposer::url() const {
  return absl::StrCat("http://", host_, ":", port_, "/metrics");
}

void ReportMetricsListening(const std::string& name, const MetricsExposer& exposer) {
  std::printf("%s metrics on %s\n", name.c_str(), exposer.url().c_str());
  std::fflush(stdout);
}

double SecondsSince(absl::Time start) { return absl::ToDoubleSeconds(absl::Now() - start); }

}  // namespace sharedos::common::metrics
