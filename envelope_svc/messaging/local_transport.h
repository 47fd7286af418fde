// The built-in in-process message transport (sharedosd's embedded default): it delivers a
// message to another agent's inbox, from which that agent's host opens the agent's turn with
// the message (ExecutionRequest.message), and carries the reply back to a waiting
// messages.request. Every message and route belongs to the owner of the turn that sent it
// (docs/adr/0014, T5): a host takes from an inbox only the messages of the owners it serves, and
// revokes only their routes. It holds a route lease per route (world, owner, sender, receiver): a
// lease is granted on a route's first dispatch and re-checked at every dispatch; a revoked lease
// (the owner's, or a revocation of every owner's) refuses the dispatch with a DENIED receipt
// route_lease_revoked (seed ADR 0025) — the kernel has already allowed the message, and a lease
// is not authority. A reply is matched on its reply_to and on coming from the request's receiver
// to its sender; anything else is an ordinary message. Bounded, each bound a clear answer:
// kMaxInbox messages wait per receiver and kMaxHeldPerOwner per (world, owner), kMaxHeld in all
// (more are FAILED route_inbox_full); kMaxPending requests await replies (the oldest forgotten);
// kMaxLeased leases are remembered (the oldest forgotten: a forgotten lease is granted again at
// the next dispatch, it never outlives a revocation); kMaxRevokedPerOwner revocations per (world,
// owner) and kMaxRevoked in all (more are RESOURCE_EXHAUSTED naming the bound — a revocation is
// never dropped). Payloads are held in memory only, never logged. Thread-safe.

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
  static constexpr size_t kMaxHeldPerOwner = 4096;
  static constexpr size_t kMaxHeld = 65536;
  static constexpr size_t kMaxPending = 4096;
  static constexpr size_t kMaxLeased = 65536;
  static constexpr size_t kMaxRevokedPerOwner = 4096;
  static constexpr size_t kMaxRevoked = 65536;
  // At most this many messages per Receive.
  static constexpr size_t kMaxReceive = 64;

  // The owners a Receive reaches: those a list covers (common::server::ScopeCovers).
  using Owners = std::vector<std::string>;

  // `clock` stamps receipts (the world's clock); waits are real time.
  explicit LocalMessageTransport(const common::Clock& clock = common::RealClock())
      : clock_(clock) {}

  // A message for the receiver goes to its inbox as `owner`'s (ACCEPTED); a reply to a request
  // awaiting one, from its receiver to its sender, is handed to it (DELIVERED). A route whose
  // lease is revoked: DENIED route_lease_revoked; a bound reached: FAILED route_inbox_full.
  absl::StatusOr<v1::MessageDeliveryResult> Send(absl::string_view namespace_id,
                                                 const protocol::v1::Address& owner,
                                                 const protocol::v1::MessageEnvelope& message,
                                                 absl::Time deadline) override
      ABSL_LOCKS_EXCLUDED(mu_);
  // Errors: NOT_FOUND (never accepted, or forgotten); DEADLINE_EXCEEDED (no reply in time).
  absl::StatusOr<protocol::v1::MessageEnvelope> AwaitReply(
      absl::string_view namespace_id, const protocol::v1::MessageEnvelope& request,
      absl::Time deadline) override ABSL_LOCKS_EXCLUDED(mu_);

  // A message taken from an inbox, with the owner of the turn that sent it.
  struct Received {
    std::string owner;  // address key
    protocol::v1::MessageEnvelope message;
  };

  // Up to `max` (≤ kMaxReceive) messages waiting for `receiver` in the world whose owner
  // `owners` covers, oldest first, taken from its inbox (the others stay); waits until
  // `deadline` (real time) for the first one. Empty when none came.
  std::vector<Received> Receive(absl::string_view namespace_id,
                                const protocol::v1::Address& receiver, const Owners& owners,
                                size_t max, absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);

  // Revokes the lease of `owner`'s route sender → receiver in the world ("*": every owner's):
  // every later dispatch on it is refused. Idempotent. Answers whether the route had a live
  // lease. Errors: RESOURCE_EXHAUSTED (kMaxRevokedPerOwner or kMaxRevoked reached, naming it).
  absl::StatusOr<bool> RevokeRoute(absl::string_view namespace_id, absl::string_view owner,
                                   const protocol::v1::Address& sender,
                                   const protocol::v1::Address& receiver) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Reply {
    // The request's sender and receiver: a reply comes from the one to the other.
    protocol::v1::Address sender;
    protocol::v1::Address receiver;
    bool arrived = false;
    protocol::v1::MessageEnvelope message;
  };

  static std::string RouteKey(absl::string_view namespace_id, absl::string_view owner,
                              const protocol::v1::Address& sender,
                              const protocol::v1::Address& receiver);
  static std::string OwnerKey(absl::string_view namespace_id, absl::string_view owner);
  static std::string InboxKey(absl::string_view namespace_id,
                              const protocol::v1::Address& receiver);
  static std::string PendingKey(absl::string_view namespace_id, absl::string_view message_id);
  v1::MessageDeliveryResult Receipt(const protocol::v1::MessageEnvelope& message,
                                    v1::MessageDeliveryStatus status, absl::string_view code) const;
  void Remember(std::string pending_key, const protocol::v1::MessageEnvelope& request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Lease(std::string route) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const common::Clock& clock_;
  absl::Mutex mu_;
  // Routes with a live lease (oldest first in lease_order_), and revoked ones with their count
  // per (world, owner).
  absl::flat_hash_set<std::string> leased_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> lease_order_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> revoked_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, size_t> revoked_per_owner_ ABSL_GUARDED_BY(mu_);
  // Inboxes by (world, receiver); messages held per (world, owner) and in all.
  absl::flat_hash_map<std::string, std::deque<Received>> inboxes_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, size_t> held_per_owner_ ABSL_GUARDED_BY(mu_);
  size_t held_ ABSL_GUARDED_BY(mu_) = 0;
  // Accepted requests that may be replied to, by (world, message id); oldest first in order_.
  absl::flat_hash_map<std::string, Reply> pending_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_MESSAGING_LOCAL_TRANSPORT_H_
