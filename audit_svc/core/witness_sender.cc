#include "audit_svc/core/witness_sender.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "audit_svc/core/checkpoint.h"
#include "common/logging/log.h"
#include "common/text/url.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::common::logging::Level;
using ::sharedos::common::logging::Log;
using ::sharedos::common::metrics::WitnessMetrics;

// The witness's own words in a log line: a short, bounded excerpt (the logger escapes controls).
std::string Excerpt(const std::string& body) { return body.substr(0, 256); }

}  // namespace

absl::StatusOr<std::unique_ptr<WitnessSender>> WitnessSender::Create(
    std::unique_ptr<common::http::HttpClient> client, Options options) {
  absl::StatusOr<common::text::HttpUrl> url = common::text::ParseHttpUrl(options.url);
  if (!url.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--checkpoint_witness: ", url.status().message()));
  }
  if (options.max_pending == 0) {
    return absl::InvalidArgumentError("--checkpoint_witness: a queue of at least one checkpoint");
  }
  if (options.initial_backoff <= absl::ZeroDuration() ||
      options.max_backoff < options.initial_backoff) {
    return absl::InvalidArgumentError("--checkpoint_witness: backoff not positive");
  }
  // The host only: a URL's path or query may carry a secret of the witness's (a token).
  std::string host = url->origin.substr(url->origin.find("://") + 3);
  return std::unique_ptr<WitnessSender>(
      new WitnessSender(std::move(client), std::move(options), std::move(host)));
}

WitnessSender::WitnessSender(std::unique_ptr<common::http::HttpClient> client, Options options,
                             std::string host)
    : client_(std::move(client)),
      options_(std::move(options)),
      host_(std::move(host)),
      metrics_(options_.metrics) {
  thread_ = std::thread([this] { Loop(); });
}

WitnessSender::~WitnessSender() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void WitnessSender::Offer(const v1::SignedCheckpoint& checkpoint) {
  absl::MutexLock lock(&mu_);
  pending_.push_back(checkpoint);
  if (pending_.size() > options_.max_pending) {
    pending_.pop_front();
    ++stats_.dropped;
    metrics_.Dropped();
  }
  stats_.pending = static_cast<int64_t>(pending_.size());
  metrics_.Pending(stats_.pending);
}

WitnessSender::Stats WitnessSender::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void WitnessSender::Loop() {
  absl::Duration backoff = absl::ZeroDuration();
  while (true) {
    v1::SignedCheckpoint oldest;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !pending_.empty();
      };
      if (backoff > absl::ZeroDuration()) {
        // After a failure: wait out the backoff (a new checkpoint does not cut it short).
        mu_.AwaitWithTimeout(absl::Condition(&stopping_), backoff);
      }
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      oldest = pending_.front();
    }
    if (PostOldest(oldest)) {
      backoff = absl::ZeroDuration();
      absl::MutexLock lock(&mu_);
      // The front is still `oldest` unless Offer dropped it meanwhile (a full queue).
      if (!pending_.empty() && pending_.front().sequence() == oldest.sequence() &&
          pending_.front().signature() == oldest.signature()) {
        pending_.pop_front();
      }
      stats_.pending = static_cast<int64_t>(pending_.size());
      metrics_.Pending(stats_.pending);
    } else {
      backoff = backoff == absl::ZeroDuration() ? options_.initial_backoff
                                                : std::min(backoff * 2, options_.max_backoff);
    }
  }
}

bool WitnessSender::PostOldest(const v1::SignedCheckpoint& checkpoint) {
  const absl::StatusOr<common::http::HttpAnswer> answer = client_->Post(
      options_.url, CheckpointJson(checkpoint), "application/json", kMaxWitnessAnswerBytes);
  const bool delivered = answer.ok() && answer->status >= 200 && answer->status < 300;
  const bool refused = answer.ok() && answer->status >= 400 && answer->status < 500;
  bool recovered = false;
  {
    absl::MutexLock lock(&mu_);
    if (delivered) {
      recovered = failing_;
      failing_ = false;
      ++stats_.delivered;
      stats_.delivered_sequence = checkpoint.sequence();
    } else if (refused) {
      ++stats_.refused;
    } else {
      ++stats_.failed_attempts;
      failing_ = true;
    }
  }
  if (delivered) {
    metrics_.Posted(WitnessMetrics::Post::kDelivered);
    metrics_.Delivered(checkpoint.sequence());
    if (recovered) {
      Log(Level::kInfo, "audit.witness.delivered", "",
          {{"witness", host_}, {"sequence", static_cast<long long>(checkpoint.sequence())}});
    }
    return true;
  }
  if (refused) {
    // Final: the witness will not take this checkpoint however often it is sent. A 409 means it
    // holds a later or a different checkpoint of this key: this log was rolled back or rewritten
    // (or the checkpoint is a replay).
    metrics_.Posted(WitnessMetrics::Post::kRefused);
    Log(Level::kError, "audit.witness.refused", "",
        {{"witness", host_},
         {"status", answer->status},
         {"sequence", static_cast<long long>(checkpoint.sequence())},
         {"key_id", checkpoint.key_id()},
         {"answer", Excerpt(answer->body)}});
    return true;
  }
  metrics_.Posted(WitnessMetrics::Post::kFailed);
  int64_t pending;
  {
    absl::MutexLock lock(&mu_);
    pending = stats_.pending;
  }
  Log(Level::kWarning, "audit.witness.unreachable", "",
      {{"witness", host_},
       {"error", answer.ok() ? absl::StrCat("HTTP ", answer->status)
                             : std::string(answer.status().message())},
       {"sequence", static_cast<long long>(checkpoint.sequence())},
       {"pending", static_cast<long long>(pending)},
       {"note", "the log is still signed locally; retried with backoff"}});
  return false;
}

}  // namespace sharedos::audit::core
