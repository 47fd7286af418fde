#include "common/server/readiness.h"

#include <algorithm>

#include "absl/status/status.h"
#include "common/logging/log.h"

namespace sharedos::common::server {

absl::Status CheckHealthInterval(absl::Duration interval) {
  if (interval <= absl::ZeroDuration() || interval > absl::Minutes(10)) {
    return absl::InvalidArgumentError("--health_interval: must be more than 0s and at most 10m");
  }
  return absl::OkStatus();
}

std::unique_ptr<Readiness> Readiness::Start(grpc::HealthCheckServiceInterface* health,
                                            std::vector<DependencyCheck> checks,
                                            absl::Duration interval, metrics::Metrics* metrics,
                                            const Clock& clock) {
  std::unique_ptr<Readiness> readiness(
      new Readiness(health, std::move(checks), interval, metrics, clock));
  readiness->Round();
  readiness->thread_ = std::thread([r = readiness.get()] { r->Loop(); });
  return readiness;
}

Readiness::Readiness(grpc::HealthCheckServiceInterface* health, std::vector<DependencyCheck> checks,
                     absl::Duration interval, metrics::Metrics* metrics, const Clock& clock)
    : health_(health),
      checks_(std::move(checks)),
      interval_(std::max(interval, absl::Milliseconds(10))),
      clock_(clock),
      up_(checks_.size(), false),
      details_(checks_.size()) {
  if (metrics == nullptr) return;
  auto& family = prometheus::BuildGauge()
                     .Name("sharedos_dependency_up")
                     .Help("1 while the dependency answers its readiness probe, 0 while not.")
                     .Register(metrics->registry());
  for (const DependencyCheck& check : checks_) {
    gauges_.push_back(&family.Add({{"dependency", check.name}}));
  }
}

Readiness::~Readiness() { Stop(); }

void Readiness::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool Readiness::ready() {
  absl::MutexLock lock(&mu_);
  return std::all_of(up_.begin(), up_.end(), [](bool up) { return up; });
}

std::vector<std::string> Readiness::details() {
  absl::MutexLock lock(&mu_);
  return details_;
}

std::vector<std::pair<std::string, bool>> Readiness::dependencies() {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, bool>> states;
  for (size_t i = 0; i < checks_.size(); ++i) states.emplace_back(checks_[i].name, up_[i]);
  return states;
}

void Readiness::Round() {
  const absl::Duration timeout = std::min(interval_, kMaxProbeTimeout);
  std::vector<absl::Status> results;
  for (const DependencyCheck& check : checks_) results.push_back(check.probe(timeout));
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  bool all_up = true;
  for (size_t i = 0; i < checks_.size(); ++i) {
    const bool up = results[i].ok();
    all_up = all_up && up;
    if (!gauges_.empty()) gauges_[i]->Set(up ? 1 : 0);
    details_[i] = up || !checks_[i].show_detail ? "" : std::string(results[i].message());
    if (reported_ && up == up_[i]) continue;
    // The code only: a probe's message may name where the dependency is.
    logging::Log(up ? logging::Level::kInfo : logging::Level::kWarning, "health.changed", "",
                 {{"dependency", checks_[i].name},
                  {"up", up},
                  {"code", absl::StatusCodeToString(results[i].code())}});
    up_[i] = up;
  }
  reported_ = true;
  health_->SetServingStatus(all_up);
}

void Readiness::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
      if (clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping), interval_)) return;
    }
    Round();
  }
}

}  // namespace sharedos::common::server
