// The built-in in-process message transport (sharedosd's embedded default): it delivers a
// message to another agent's inbox, from which that agent's host opens the agent's turn with
// the message (ExecutionRequest.message), and carries the reply back to a waiting
// messages.request. It holds a route lease per route (world, sender, receiver): a lease is
// granted on a route's first dispatch and re-checked at every dispatch; a revoked (or closed)
// lease refuses the dispatch with a DENIED receipt route_lease_revoked (seed ADR 0025) — the
// kernel has already allowed the message, and a lease is not authority. Bounded: at most
// kMaxInbox messages wait per receiver (more are FAILED route_inbox_full) and kMaxPending
// requests await replies (the oldest forgotten). Payloads are held in memory only, never
// logged. Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_MESSAGING_LOCAL_TRANSPORT_H_
#define SHAREDOS_ENVELOPE_SVC_MESSAGING_LOCAL_TRANSPORT_H_

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "envelope_svc/messaging/message_transport.h"
#include "sharedos/protocol/v1/common.pb.h"

namespace sharedos::envelope::messaging {

inline constexpr absl::string_view kRouteLeaseRevoked = "route_lease_revoked";
inline constexpr absl::string_view kRouteInboxFull = "route_inbox_full";

class LocalMessageTransport : public MessageTransportInterface {
 public:
  static constexpr size_t kMaxInbox = 1024;
  static constexpr size_t kMaxPending = 4096;
  // At most this many messages per Receive.
  static constexpr size_t kMaxReceive = 64;

  // `clock` stamps receipts (the world's clock); waits are real time.
  explicit LocalMessageTransport(const common::Clock& clock = common::RealClock())
      : clock_(clock) {}

  // A message for the receiver goes to its inbox (ACCEPTED); a reply to a request awaiting one
  // is handed to it (DELIVERED). A route whose lease is revoked: DENIED route_lease_revoked.
  absl::StatusOr<v1::MessageDeliveryResult> Send(absl::string_view namespace_id,
                                                 const protocol::v1::MessageEnvelope& message,
                                                 absl::Time deadline) override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Errors: NOT_FOUND (never accepted, or forgotten); DEADLINE_EXCEEDED (no reply in time).
  absl::StatusOr<protocol::v1::MessageEnvelope> AwaitReply(
      absl::string_view namespace_id, const protocol::v1::MessageEnvelope& request,
      absl::Time deadline) override ABSL_LOCKS_EXCLUDED(mu_);

  // Up to `max` (≤ kMaxReceive) messages waiting for `receiver` in the world, oldest first,
  // taken from its inbox; waits until `deadline` (real time) for the first one. Empty when
  // none came.
  std::vector<protocol::v1::MessageEnvelope> Receive(absl::string_view namespace_id,
                                                     const protocol::v1::Address& receiver,
                                                     size_t max, absl::Time deadline)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Revokes the route's lease (sender → receiver in the world): every later dispatch on it is
  // refused. Idempotent. Returns whether the route had a live lease.
  bool RevokeRoute(absl::string_view namespace_id, const protocol::v1::Address& sender,
                   const protocol::v1::Address& receiver) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Reply {
    bool arrived = false;
    protocol::v1::MessageEnvelope message;
  };

  static std::string RouteKey(absl::string_view namespace_id, const protocol::v1::Address& sender,
                              const protocol::v1::Address& receiver);
  static std::string InboxKey(absl::string_view namespace_id,
                              const protocol::v1::Address& receiver);
  static std::string PendingKey(absl::string_view namespace_id, absl::string_view message_id);
  v1::MessageDeliveryResult Receipt(const protocol::v1::MessageEnvelope& message,
                                    v1::MessageDeliveryStatus status, absl::string_view code) const;
  void Remember(std::string pending_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const common::Clock& clock_;
  absl::Mutex mu_;
  // Routes with a live lease, and revoked ones.
  absl::flat_hash_set<std::string> leased_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> revoked_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::deque<protocol::v1::MessageEnvelope>> inboxes_
      ABSL_GUARDED_BY(mu_);
  // Accepted requests that may be replied to, by (world, message id); oldest first in order_.
  absl::flat_hash_map<std::string, Reply> pending_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_MESSAGING_LOCAL_TRANSPORT_H_
