#include "envelope_svc/core/turn.h"

#include <utility>

#include "capability/reason_codes.h"
#include "common/crypto/random.h"

namespace sharedos::envelope::core {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::Value;

Value RuntimeManifest::ToValue(v1::Runtime runtime) const {
  return values::Object({{"id", values::Str(IdOf(runtime))},
                         {"version", values::Str(version)},
                         {"protocolVersion", values::Str("1")}});
}

Turn::Offer Turn::OfferOf(absl::string_view name) const {
  Offer offer;
  offer.tool = tools.has_value() ? tools->Find(name) : nullptr;
  if (offer.tool == nullptr) {
    offer.cause = capability::kCauseNotRegistered;
  } else if (!namespaces.Enables(offer.tool->tool_namespace())) {
    offer.cause = capability::kCauseNamespaceDisabled;
  } else if (offered.contains(offer.tool)) {
    // Offered: cause stays empty.
  } else if (auto it = withheld.find(offer.tool); it != withheld.end()) {
    offer.withheld = &it->second;
    offer.cause = it->second.code;
  } else {
    offer.cause = capability::kCauseNotOffered;
  }
  return offer;
}

void Turn::Describe(const protocol::v1::CapabilityRequest& request) {
  for (auto it = described.begin(); it != described.end(); ++it) {
    if (it->id() == request.id()) {
      described.erase(it);
      break;
    }
  }
  if (described.size() >= kMaxDescribed) described.erase(described.begin());
  described.push_back(request);
}

const protocol::v1::CapabilityRequest* Turn::Described(absl::string_view id) const {
  for (const protocol::v1::CapabilityRequest& request : described) {
    if (request.id() == id) return &request;
  }
  return nullptr;
}

void Turn::Emit(absl::string_view type, Value data, absl::Time at) {
  pb::ExecutionEvent& event = events.emplace_back();
  event.set_version("1");
  event.set_event_id(common::NewUuidV4());
  event.set_execution_id(request.execution_id());
  event.set_trace_id(context.trace_id());
  event.set_sequence(static_cast<int64_t>(events.size()) - 1);
  event.set_type(std::string(type));
  *event.mutable_data() = std::move(data);
  *event.mutable_occurred_at() = values::TimestampOf(at);
  changed.SignalAll();
}

}  // namespace sharedos::envelope::core
