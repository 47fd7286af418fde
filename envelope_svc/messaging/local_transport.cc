#include "envelope_svc/messaging/local_transport.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "common/time/proto_time.h"

namespace sharedos::envelope::messaging {

namespace pb = ::sharedos::protocol::v1;

std::string LocalMessageTransport::RouteKey(absl::string_view namespace_id,
                                            const pb::Address& sender,
                                            const pb::Address& receiver) {
  // Identifiers never hold NUL, so the key is unambiguous.
  return absl::StrCat(namespace_id, std::string(1, '\0'), capability::AddressKey(sender),
                      std::string(1, '\0'), capability::AddressKey(receiver));
}

std::string LocalMessageTransport::InboxKey(absl::string_view namespace_id,
                                            const pb::Address& receiver) {
  return absl::StrCat(namespace_id, std::string(1, '\0'), capability::AddressKey(receiver));
}

std::string LocalMessageTransport::PendingKey(absl::string_view namespace_id,
                                              absl::string_view message_id) {
  return absl::StrCat(namespace_id, std::string(1, '\0'), message_id);
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

void LocalMessageTransport::Remember(std::string pending_key) {
  if (pending_.contains(pending_key)) return;
  while (order_.size() >= kMaxPending) {
    pending_.erase(order_.front());
    order_.pop_front();
  }
  pending_.emplace(pending_key, Reply());
  order_.push_back(std::move(pending_key));
}

absl::StatusOr<v1::MessageDeliveryResult> LocalMessageTransport::Send(
    absl::string_view namespace_id, const pb::MessageEnvelope& message, absl::Time /*deadline*/) {
  absl::MutexLock lock(&mu_);
  // The lease is re-checked at every dispatch, whatever the kernel decided.
  const std::string route = RouteKey(namespace_id, message.sender(), message.receiver());
  if (revoked_.contains(route)) {
    return Receipt(message, v1::MESSAGE_DELIVERY_STATUS_DENIED, kRouteLeaseRevoked);
  }
  leased_.insert(route);
  if (!message.reply_to().empty()) {
    auto waiting = pending_.find(PendingKey(namespace_id, message.reply_to()));
    if (waiting != pending_.end() && !waiting->second.arrived) {
      waiting->second.arrived = true;
      waiting->second.message = message;
      return Receipt(message, v1::MESSAGE_DELIVERY_STATUS_DELIVERED, "");
    }
  }
  std::deque<pb::MessageEnvelope>& inbox = inboxes_[InboxKey(namespace_id, message.receiver())];
  if (inbox.size() >= kMaxInbox) {
    return Receipt(message, v1::MESSAGE_DELIVERY_STATUS_FAILED, kRouteInboxFull);
  }
  inbox.push_back(message);
  Remember(PendingKey(namespace_id, message.id()));
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

std::vector<pb::MessageEnvelope> LocalMessageTransport::Receive(absl::string_view namespace_id,
                                                                const pb::Address& receiver,
                                                                size_t max, absl::Time deadline) {
  const std::string key = InboxKey(namespace_id, receiver);
  absl::MutexLock lock(&mu_);
  auto any = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto it = inboxes_.find(key);
    return it != inboxes_.end() && !it->second.empty();
  };
  mu_.AwaitWithDeadline(absl::Condition(&any), deadline);
  std::vector<pb::MessageEnvelope> out;
  auto it = inboxes_.find(key);
  if (it == inboxes_.end()) return out;
  const size_t take = std::min({max, kMaxReceive, it->second.size()});
  for (size_t i = 0; i < take; ++i) {
    out.push_back(std::move(it->second.front()));
    it->second.pop_front();
  }
  if (it->second.empty()) inboxes_.erase(it);
  return out;
}

bool LocalMessageTransport::RevokeRoute(absl::string_view namespace_id, const pb::Address& sender,
                                        const pb::Address& receiver) {
  const std::string route = RouteKey(namespace_id, sender, receiver);
  absl::MutexLock lock(&mu_);
  revoked_.insert(route);
  return leased_.erase(route) > 0;
}

}  // namespace sharedos::envelope::messaging
