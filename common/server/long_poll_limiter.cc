#include "common/server/long_poll_limiter.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sharedos::common::server {

namespace {

absl::Mutex defaults_mu(absl::kConstInit);
LongPollLimiter::Options* defaults ABSL_GUARDED_BY(defaults_mu) = nullptr;

}  // namespace

void LongPollLimiter::SetDefaults(Options options) {
  absl::MutexLock lock(&defaults_mu);
  if (defaults == nullptr) defaults = new Options();
  *defaults = options;
}

LongPollLimiter::Options LongPollLimiter::Defaults() {
  absl::MutexLock lock(&defaults_mu);
  return defaults == nullptr ? Options() : *defaults;
}

LongPollLimiter::Slot::~Slot() {
  if (limiter_ != nullptr) limiter_->Release(principal_);
}

absl::StatusOr<LongPollLimiter::Slot> LongPollLimiter::Acquire(absl::string_view principal,
                                                               absl::string_view method) {
  absl::MutexLock lock(&mu_);
  auto it = by_principal_.find(principal);
  const size_t own = it == by_principal_.end() ? 0 : it->second;
  if (own >= options_.max_per_principal) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "concurrent long-polls of credential \"", principal, "\" in ", method, ": ", own, " of ",
        options_.max_per_principal,
        " (quota max_long_polls_per_principal; --max_long_polls_per_principal raises it)"));
  }
  if (total_ >= options_.max_total) {
    return absl::ResourceExhaustedError(
        absl::StrCat("concurrent long-polls in ", method, ": ", total_, " of ", options_.max_total,
                     " (quota max_long_polls; --max_long_polls raises it)"));
  }
  ++by_principal_[principal];
  ++total_;
  return Slot(this, std::string(principal));
}

void LongPollLimiter::Release(const std::string& principal) {
  absl::MutexLock lock(&mu_);
  --total_;
  auto it = by_principal_.find(principal);
  if (it != by_principal_.end() && --it->second == 0) by_principal_.erase(it);
}

size_t LongPollLimiter::held(absl::string_view principal) const {
  absl::MutexLock lock(&mu_);
  auto it = by_principal_.find(principal);
  return it == by_principal_.end() ? 0 : it->second;
}

size_t LongPollLimiter::held() const {
  absl::MutexLock lock(&mu_);
  return total_;
}

}  // namespace sharedos::common::server
