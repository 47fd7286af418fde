// Ships each signed checkpoint of this log to a witness (--checkpoint_witness=<url>): another
// SharedOS audit service, or any HTTP endpoint, that keeps what it receives off this host
// (docs/adr/0023). The checkpoint loop hands each checkpoint over (Offer) and goes on; a thread of
// the sender's own POSTs them, oldest first, each as the JSON line `sharedosctl audit checkpoint`
// prints. A witness that is down or slow never holds up the loop or the log: each request is
// bounded in time, a failure is a warning line (naming the witness's host only, never the URL's
// path or query) and a metric, and the checkpoint is retried with a backoff that doubles up to a
// bound; the queue is bounded too (the oldest dropped first: a later checkpoint covers more of the
// log). A 4xx answer is final for that checkpoint (a 409 says the witness holds a later or a
// different one: a rollback or a rewrite of this log, or a replay) and logged as an error.
// Thread-safe.
#ifndef SHAREDOS_AUDIT_SVC_CORE_WITNESS_SENDER_H_
#define SHAREDOS_AUDIT_SVC_CORE_WITNESS_SENDER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/http/http_client.h"
#include "common/metrics/sinks.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::audit::core {

// The largest answer read from a witness (its message; the rest is cut).
inline constexpr size_t kMaxWitnessAnswerBytes = 4096;

class WitnessSender {
 public:
  struct Options {
    // http:// or https:// (checked by Create).
    std::string url;
    // The first wait after a failed attempt; it doubles per failure up to max_backoff and is
    // reset by a delivery.
    absl::Duration initial_backoff = absl::Seconds(1);
    absl::Duration max_backoff = absl::Seconds(60);
    // Checkpoints waiting at most; beyond, the oldest is dropped.
    size_t max_pending = 64;
    common::metrics::Metrics* metrics = nullptr;
  };

  // What the sender did so far (tests, status).
  struct Stats {
    int64_t delivered = 0;
    int64_t refused = 0;
    int64_t failed_attempts = 0;
    int64_t dropped = 0;
    int64_t pending = 0;
    // The last sequence the witness accepted; -1 when none.
    int64_t delivered_sequence = -1;
  };

  // Errors: INVALID_ARGUMENT "--checkpoint_witness: …" (not an http(s) URL; user info in it;
  // max_pending 0; a backoff not positive).
  static absl::StatusOr<std::unique_ptr<WitnessSender>> Create(
      std::unique_ptr<common::http::HttpClient> client, Options options);
  // Stops the thread (a request in flight ends at its time-out); checkpoints still waiting are
  // not sent (the log keeps them signed locally; the next start ships its own).
  ~WitnessSender();
  WitnessSender(const WitnessSender&) = delete;
  WitnessSender& operator=(const WitnessSender&) = delete;

  // Queues `checkpoint` to be posted; returns at once.
  void Offer(const v1::SignedCheckpoint& checkpoint) ABSL_LOCKS_EXCLUDED(mu_);

  Stats stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // The witness's host as logged ("witness.example:8443").
  const std::string& host() const { return host_; }

 private:
  WitnessSender(std::unique_ptr<common::http::HttpClient> client, Options options,
                std::string host);
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);
  // One attempt at the oldest waiting checkpoint; true when it left the queue (delivered or
  // refused), false to retry it after the backoff.
  bool PostOldest(const v1::SignedCheckpoint& checkpoint) ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<common::http::HttpClient> client_;
  const Options options_;
  const std::string host_;
  common::metrics::WitnessMetrics metrics_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<v1::SignedCheckpoint> pending_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  // The last attempt failed (the next delivery is logged as the witness reached again).
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace sharedos::audit::core

#endif  // SHAREDOS_AUDIT_SVC_CORE_WITNESS_SENDER_H_
