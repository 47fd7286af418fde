// The built-in message transport across envelope replicas (ADR 0013). Each world's messaging —
// its inboxes, its route leases, its requests awaiting replies — lives at one replica, the
// world's home: the replica whose name ranks first for the world by rendezvous hashing
// (WorldHome) over the replica set, which every replica computes alike from its own name and
// --replica_peers. A dispatch or a wait of a world another replica homes goes to that replica's
// MessageTransport service (routes_service.h, PeerTransportService); the host's MessageRoutes
// calls go there too (TurnForwarder::ServeWorld). So a message sent through any replica, the
// reply to it, a revocation and a Receive all meet in one LocalMessageTransport, exactly as in
// one process.
//
// A home that cannot be reached fails closed: its peer transport's error (UNAVAILABLE
// "MessageTransport.<Method> failed: …") becomes message_delivery_failed or
// message_reply_resolution_failed in the kernel; nothing is delivered elsewhere. A home that
// restarts starts empty (the built-in transport is memory only, as in one process). Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_MESSAGING_REPLICATED_TRANSPORT_H_
#define SHAREDOS_ENVELOPE_SVC_MESSAGING_REPLICATED_TRANSPORT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "envelope_svc/messaging/local_transport.h"
#include "envelope_svc/messaging/message_transport.h"

namespace sharedos::envelope::messaging {

// The replica among `replicas` (non-empty) that homes world `namespace_id`: the one whose
// "<replica>\n<namespace_id>" ranks highest (64-bit FNV-1a, then MurmurHash3's finalizer) —
// rendezvous hashing: the same on every replica and every build, and only the worlds of a
// replica that joins or leaves the set move.
std::string WorldHome(absl::string_view namespace_id, const std::vector<std::string>& replicas);

class ReplicatedMessageTransport final : public MessageTransportInterface {
 public:
  // `local` is the built-in transport of this replica, named `self`; `peers` the other
  // replicas' transports by name (GrpcMessageTransports to their PeerTransportService). Borrows
  // `local`.
  ReplicatedMessageTransport(
      std::string self, LocalMessageTransport& local,
      std::map<std::string, std::unique_ptr<MessageTransportInterface>> peers);

  // The home of `namespace_id` (this replica's name or a peer's).
  std::string HomeOf(absl::string_view namespace_id) const;
  bool IsHome(absl::string_view namespace_id) const { return HomeOf(namespace_id) == self_; }

  // At the world's home. Errors: the home's transport's (a peer unreachable: UNAVAILABLE).
  absl::StatusOr<v1::MessageDeliveryResult> Send(absl::string_view namespace_id,
                                                 const protocol::v1::Address& owner,
                                                 const protocol::v1::MessageEnvelope& message,
                                                 absl::Time deadline) override;
  absl::StatusOr<protocol::v1::MessageEnvelope> AwaitReply(
      absl::string_view namespace_id, const protocol::v1::MessageEnvelope& request,
      absl::Time deadline) override;

 private:
  MessageTransportInterface& At(const std::string& home) const;

  const std::string self_;
  LocalMessageTransport& local_;
  const std::map<std::string, std::unique_ptr<MessageTransportInterface>> peers_;
  // self_ and every peer's name.
  std::vector<std::string> replicas_;
};

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_MESSAGING_REPLICATED_TRANSPORT_H_
