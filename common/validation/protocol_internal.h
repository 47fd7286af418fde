// The checks common/validation/protocol.cc defines for the messages of common, context,
// grant and message.proto, shared with protocol_execution.cc (tool, execution and audit
// .proto). Internal to //common/validation:protocol; use protocol.h. Stateless; thread-safe.

#ifndef SHAREDOS_COMMON_VALIDATION_PROTOCOL_INTERNAL_H_
#define SHAREDOS_COMMON_VALIDATION_PROTOCOL_INTERNAL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/unknown_fields.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/message.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::common::validation::internal {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::RepeatedPtrField;
using ::google::protobuf::Struct;
using ::google::protobuf::Timestamp;
using ::google::protobuf::Value;

absl::Status Missing(const PathRef& path);
absl::Status CheckEnum(int value, bool (*is_valid)(int), const PathRef& path);
absl::Status RequiredTimestamp(bool has, const Timestamp& value, const PathRef& path);
absl::Status OptionalTimestamp(bool has, const Timestamp& value, const PathRef& path);
absl::Status RequiredJsonObject(bool has, const Struct& value, const PathRef& path);
absl::Status OptionalJsonObject(bool has, const Struct& value, const PathRef& path);
absl::Status RequiredJsonValue(bool has, const Value& value, const PathRef& path);
absl::Status CheckIdentifiers(RepeatedPtrField<std::string>* values, size_t max_count,
                              const PathRef& path);
absl::Status CheckPath(const RepeatedPtrField<std::string>& segments, const PathRef& path);
absl::Status CheckActions(RepeatedPtrField<std::string>* actions, const PathRef& path);
absl::Status CheckOutcome(absl::string_view actual, absl::string_view expected, bool optional,
                          absl::string_view status_name, const PathRef& path);
absl::Status CheckAddress(pb::Address* address, const PathRef& path);
absl::Status CheckResourceRef(pb::ResourceRef* ref, const PathRef& path);
absl::Status CheckCapability(pb::Capability* capability, const PathRef& path);
absl::Status CheckCapabilities(RepeatedPtrField<pb::Capability>* capabilities, const PathRef& path);
absl::Status CheckCapabilityConstraints(pb::CapabilityConstraints* constraints,
                                        const PathRef& path);
absl::Status CheckCapabilityRequirement(pb::CapabilityRequirement* requirement,
                                        const PathRef& path);
absl::Status CheckProtocolError(pb::ProtocolError* error, const PathRef& path);
absl::Status CheckAccessContext(pb::AccessContext* context, const PathRef& path);
absl::Status CheckCapabilityGrant(pb::CapabilityGrant* grant, const PathRef& path);
absl::Status CheckCapabilityRequest(pb::CapabilityRequest* request, const PathRef& path);
absl::Status CheckAuthorizationDecision(pb::AuthorizationDecision* decision, const PathRef& path);
absl::Status CheckEscalation(pb::Escalation* escalation, const PathRef& path);
absl::Status CheckResourceReach(pb::ResourceReach* reach, const PathRef& path);
absl::Status CheckReachResult(pb::ReachResult* result, const PathRef& path);
absl::Status CheckMessageProvenance(pb::MessageProvenance* provenance, const PathRef& path);
absl::Status CheckMessageEnvelope(pb::MessageEnvelope* envelope, const PathRef& path);

// `check(message)` when `message` is not null, "required" otherwise. Callers
// pass `has_x() ? mutable_x() : nullptr` so that checking never creates an
// absent field.
template <typename T>
absl::Status Required(T* message, absl::Status (*check)(T*, const PathRef&), const PathRef& path) {
  if (message == nullptr) return Missing(path);
  return check(message, path);
}

// `check(message)` when `message` is not null, OK otherwise.
template <typename T>
absl::Status Optional(T* message, absl::Status (*check)(T*, const PathRef&), const PathRef& path) {
  if (message == nullptr) return absl::OkStatus();
  return check(message, path);
}

// Unknown fields anywhere in the tree first, then the type's own checks.
template <typename T>
absl::Status Strict(T* message, absl::Status (*check)(T*, const PathRef&), const PathRef& path) {
  if (message == nullptr) return Missing(path);
  RETURN_IF_ERROR(RejectUnknownFields(*message, path));
  return check(message, path);
}

}  // namespace sharedos::common::validation::internal

#endif  // SHAREDOS_COMMON_VALIDATION_PROTOCOL_INTERNAL_H_
