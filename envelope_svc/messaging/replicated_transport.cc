#include "envelope_svc/messaging/replicated_transport.h"

#include <cstdint>
#include <utility>

#include "common/logging/log.h"

namespace sharedos::envelope::messaging {
namespace {

namespace logging = ::sharedos::common::logging;

uint64_t Rank(absl::string_view replica, absl::string_view namespace_id) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](absl::string_view text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
  };
  mix(replica);
  mix("\n");
  mix(namespace_id);
  // FNV-1a alone hardly mixes its last bytes into the high bits (names that differ in their
  // last character would rank alike); MurmurHash3's finalizer spreads them.
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdull;
  hash ^= hash >> 33;
  hash *= 0xc4ceb9fe1a85ec53ull;
  hash ^= hash >> 33;
  return hash;
}

// A peer home's failure is logged once here (never the message): the kernel's code says only
// that delivery failed.
template <typename T>
absl::StatusOr<T> Logged(absl::StatusOr<T> answer, absl::string_view home,
                         absl::string_view method) {
  if (!answer.ok() && answer.status().code() == absl::StatusCode::kUnavailable) {
    logging::Log(logging::Level::kWarning, "replica.messaging_home_unreachable", "",
                 {{"home", home}, {"method", method}});
  }
  return answer;
}

}  // namespace

std::string WorldHome(absl::string_view namespace_id, const std::vector<std::string>& replicas) {
  std::string best;
  uint64_t best_hash = 0;
  for (const std::string& replica : replicas) {
    const uint64_t hash = Rank(replica, namespace_id);
    // Ties (never seen in practice) go to the smaller name, so every replica agrees.
    if (best.empty() || hash > best_hash || (hash == best_hash && replica < best)) {
      best = replica;
      best_hash = hash;
    }
  }
  return best;
}

ReplicatedMessageTransport::ReplicatedMessageTransport(
    std::string self, LocalMessageTransport& local,
    std::map<std::string, std::unique_ptr<MessageTransportInterface>> peers)
    : self_(std::move(self)), local_(local), peers_(std::move(peers)) {
  replicas_.push_back(self_);
  for (const auto& [name, transport] : peers_) {
    if (name != self_) replicas_.push_back(name);
  }
}

std::string ReplicatedMessageTransport::HomeOf(absl::string_view namespace_id) const {
  return WorldHome(namespace_id, replicas_);
}

MessageTransportInterface& ReplicatedMessageTransport::At(const std::string& home) const {
  if (home == self_) return local_;
  return *peers_.at(home);
}

absl::StatusOr<v1::MessageDeliveryResult> ReplicatedMessageTransport::Send(
    absl::string_view namespace_id, const protocol::v1::Address& owner,
    const protocol::v1::MessageEnvelope& message, absl::Time deadline) {
  const std::string home = HomeOf(namespace_id);
  return Logged(At(home).Send(namespace_id, owner, message, deadline), home, "Send");
}

absl::StatusOr<protocol::v1::MessageEnvelope> ReplicatedMessageTransport::AwaitReply(
    absl::string_view namespace_id, const protocol::v1::MessageEnvelope& request,
    absl::Time deadline) {
  const std::string home = HomeOf(namespace_id);
  return Logged(At(home).AwaitReply(namespace_id, request, deadline), home, "AwaitReply");
}

}  // namespace sharedos::envelope::messaging
