#include "envelope_svc/messaging/local_transport.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "common/server/access_policy.h"
#include "common/time/proto_time.h"

namespace sharedos::envelope::messaging {

namespace pb = ::sharedos::protocol::v1;

namespace {

// Identifiers and address keys never hold NUL, so the keys below are unambiguous.
const std::string kSep(1, '\0');

// A revocation of every owner's route (a host of "*").
constexpr absl::string_view kEveryOwner = "*";

}  // namespace

std::string LocalMessageTransport::RouteKey(absl::string_view namespace_id, absl::string_view owner,
                                            const pb::Address& sender,
                                            const pb::Address& receiver) {
  return absl::StrCat(namespace_id, kSep, owner, kSep, capability::AddressKey(sender), kSep,
                      capability::AddressKey(receiver));
}

std::string LocalMessageTransport::OwnerKey(absl::string_view namespace_id,
                                            absl::string_view owner) {
  return absl::StrCat(namespace_id, kSep, owner);
}

std::string LocalMessageTransport::InboxKey(absl::string_view namespace_id,
                                            const pb::Address& receiver) {
  return absl::StrCat(namespace_id, kSep, capability::AddressKey(receiver));
}

std::string LocalMessageTransport::PendingKey(absl::string_view namespace_id,
                                              absl::string_view message_id) {
  return absl::StrCat(namespace_id, kSep, message_id);
}

v1::MessageDeliveryResult LocalMessageTransport::Receipt(const pb::MessageEnvelope& message,
                                                         v1::MessageDeliveryStatus status,
                                                         absl::string_view code) const {
  v1::MessageDeliveryResult receipt;
  receipt.set_message_id(message.id());
  receipt.set_status(status);
  if (absl::StatusOr<google::protobuf::Timestamp> now = common::ToProtoTimestamp(clock_.Now());
      now.ok()) {
    *receipt.mutable_timestamp() = *now;
  }
  if (!code.empty()) {
    receipt.mutable_error()->set_code(std::string(code));
    receipt.mutable_error()->set_message(code == kRouteLeaseRevoked
                                             ? "The route's lease is revoked."
                                             : "The receiver's inbox is full.");
    receipt.mutable_error()->set_retryable(false);
  }
  return receipt;
}

void LocalMessageTransport::Remember(std::string pending_key, const pb::MessageEnvelope& request) {
  if (pending_.contains(pending_key)) return;
  while (order_.size() >= kMaxPending) {
    pending_.erase(order_.front());
    order_.pop_front();
  }
  Reply waiting;
  waiting.sender = request.sender();
  waiting.receiver = request.receiver();
  pending_.emplace(pending_key, std::move(waiting));
  order_.push_back(std::move(pending_key));
}

void LocalMessageTransport::Lease(std::string route) {
  if (!leased_.insert(route).second) return;
  lease_order_.push_back(std::move(route));
  // A forgotten lease is granted again at the next dispatch; revocations are kept apart.
  while (lease_order_.size() > kMaxLeased) {
    leased_.erase(lease_order_.front());
    lease_order_.pop_front();
  }
}

absl::StatusOr<v1::MessageDeliveryResult> LocalMessageTransport::Send(
    absl::string_view namespace_id, const pb::Address& owner, const pb::MessageEnvelope& message,
    absl::Time /*deadline*/) {
  const std::string owner_key = capability::AddressKey(owner);
  absl::MutexLock lock(&mu_);
  // The lease is re-checked at every dispatch, whatever the kernel decided: the owner's route,
  // or a revocation of every owner's.
  const std::string route = RouteKey(namespace_id, owner_key, message.sender(), message.receiver());
  if (revoked_.contains(route) ||
      revoked_.contains(
          RouteKey(namespace_id, kEveryOwner, message.sender(), message.receiver()))) {
    return Receipt(message, v1::MESSAGE_DELIVERY_STATUS_DENIED, kRouteLeaseRevoked);
  }
  Lease(route);
  if (!message.reply_to().empty()) {
    auto waiting = pending_.find(PendingKey(namespace_id, message.reply_to()));
    // A reply comes from the request's receiver to its sender; anyone else naming the request's
    // id sends an ordinary message.
    if (waiting != pending_.end() && !waiting->second.arrived &&
        capability::AddressEquals(message.sender(), waiting->second.receiver) &&
        capability::AddressEquals(message.receiver(), waiting->second.sender)) {
      waiting->second.arrived = true;
      waiting->second.message = message;
      return Receipt(message, v1::MESSAGE_DELIVERY_STATUS_DELIVERED, "");
    }
  }
  std::deque<Received>& inbox = inboxes_[InboxKey(namespace_id, message.receiver())];
  size_t& held_for_owner = held_per_owner_[OwnerKey(namespace_id, owner_key)];
  if (inbox.size() >= kMaxInbox || held_for_owner >= kMaxHeldPerOwner || held_ >= kMaxHeld) {
    if (inbox.empty()) inboxes_.erase(InboxKey(namespace_id, message.receiver()));
    if (held_for_owner == 0) held_per_owner_.erase(OwnerKey(namespace_id, owner_key));
    return Receipt(message, v1::MESSAGE_DELIVERY_STATUS_FAILED, kRouteInboxFull);
  }
  inbox.push_back({owner_key, message});
  ++held_for_owner;
  ++held_;
  Remember(PendingKey(namespace_id, message.id()), message);
  return Receipt(message, v1::MESSAGE_DELIVERY_STATUS_ACCEPTED, "");
}

absl::StatusOr<pb::MessageEnvelope> LocalMessageTransport::AwaitReply(
    absl::string_view namespace_id, const pb::MessageEnvelope& request, absl::Time deadline) {
  const std::string key = PendingKey(namespace_id, request.id());
  absl::MutexLock lock(&mu_);
  auto arrived = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = pending_.find(key);
    return it == pending_.end() || it->second.arrived;
  };
  if (!pending_.contains(key)) return absl::NotFoundError("the message was never accepted");
  mu_.AwaitWithDeadline(absl::Condition(&arrived), deadline);
  auto it = pending_.find(key);
  if (it == pending_.end()) return absl::NotFoundError("the request was forgotten");
  if (!it->second.arrived) return absl::DeadlineExceededError("no reply in time");
  pb::MessageEnvelope reply = std::move(it->second.message);
  pending_.erase(it);
  order_.erase(std::find(order_.begin(), order_.end(), key));
  return reply;
}

std::vector<LocalMessageTransport::Received> LocalMessageTransport::Receive(
    absl::string_view namespace_id, const pb::Address& receiver, const Owners& owners, size_t max,
    absl::Time deadline) {
  const std::string key = InboxKey(namespace_id, receiver);
  absl::MutexLock lock(&mu_);
  auto any = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = inboxes_.find(key);
    if (it == inboxes_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [&](const Received& held) {
      return common::server::ScopeCovers(owners, held.owner);
    });
  };
  mu_.AwaitWithDeadline(absl::Condition(&any), deadline);
  std::vector<Received> out;
  auto it = inboxes_.find(key);
  if (it == inboxes_.end()) return out;
  const size_t take = std::min(max, kMaxReceive);
  std::deque<Received>& inbox = it->second;
  for (auto held = inbox.begin(); held != inbox.end() && out.size() < take;) {
    if (!common::server::ScopeCovers(owners, held->owner)) {
      ++held;  // another owner's: stays for its host
      continue;
    }
    auto per_owner = held_per_owner_.find(OwnerKey(namespace_id, held->owner));
    if (per_owner != held_per_owner_.end() && --per_owner->second == 0) {
      held_per_owner_.erase(per_owner);
    }
    --held_;
    out.push_back(std::move(*held));
    held = inbox.erase(held);
  }
  if (inbox.empty()) inboxes_.erase(it);
  return out;
}

absl::StatusOr<bool> LocalMessageTransport::RevokeRoute(absl::string_view namespace_id,
                                                        absl::string_view owner,
                                                        const pb::Address& sender,
                                                        const pb::Address& receiver) {
  const std::string route = RouteKey(namespace_id, owner, sender, receiver);
  absl::MutexLock lock(&mu_);
  if (!revoked_.contains(route)) {
    size_t& per_owner = revoked_per_owner_[OwnerKey(namespace_id, owner)];
    if (per_owner >= kMaxRevokedPerOwner || revoked_.size() >= kMaxRevoked) {
      if (per_owner == 0) revoked_per_owner_.erase(OwnerKey(namespace_id, owner));
      return absl::ResourceExhaustedError(absl::StrCat(
          "route revocations: the built-in transport holds at most ", kMaxRevokedPerOwner,
          " per world and owner and ", kMaxRevoked,
          " in all; a revocation is never dropped — use a host MessageTransport to hold more"));
    }
    ++per_owner;
    revoked_.insert(route);
  }
  bool was_leased = false;
  if (owner == kEveryOwner) {
    // Every owner's lease on the route ends.
    for (auto it = leased_.begin(); it != leased_.end();) {
      const std::string& key = *it;
      const bool same_route =
          absl::StartsWith(key, absl::StrCat(namespace_id, kSep)) &&
          absl::EndsWith(key, absl::StrCat(kSep, capability::AddressKey(sender), kSep,
                                           capability::AddressKey(receiver)));
      if (same_route) {
        was_leased = true;
        leased_.erase(it++);
      } else {
        ++it;
      }
    }
  } else {
    was_leased = leased_.erase(route) > 0;
  }
  return was_leased;
}

}  // namespace sharedos::envelope::messaging
