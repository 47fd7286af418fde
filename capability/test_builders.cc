#include "capability/test_builders.h"

#include <utility>

namespace sharedos::capability::testing {

using ::sharedos::protocol::v1::Address;

absl::Time T0() { return absl::FromUnixSeconds(1767225600); }

absl::Time At(double seconds) { return T0() + absl::Seconds(seconds); }

google::protobuf::Timestamp Ts(absl::Time time) {
  google::protobuf::Timestamp timestamp;
  const int64_t nanos = absl::ToUnixNanos(time);
  int64_t seconds = nanos / 1000000000;
  int64_t rest = nanos % 1000000000;
  if (rest < 0) {
    rest += 1000000000;
    --seconds;
  }
  timestamp.set_seconds(seconds);
  timestamp.set_nanos(static_cast<int32_t>(rest));
  return timestamp;
}

Address Human(absl::string_view id) {
  Address address;
  address.set_human_user_id(std::string(id));
  return address;
}

Address Agent(absl::string_view id) {
  Address address;
  address.set_agent_id(std::string(id));
  return address;
}

Address Group(absl::string_view id) {
  Address address;
  address.set_group_conversation_id(std::string(id));
  return address;
}

Address Service(absl::string_view id) {
  Address address;
  address.set_service_id(std::string(id));
  return address;
}

protocol::v1::AccessContext MakeContext() {
  protocol::v1::AccessContext context;
  context.set_namespace_id("world-1");
  *context.mutable_actor() = Agent("alice-assistant");
  *context.mutable_authority() = Human("alice");
  *context.mutable_owner() = Human("alice");
  context.set_purpose("assist");
  context.set_trace_id("trace-1");
  *context.mutable_now() = Ts(T0());
  return context;
}

protocol::v1::Capability Cap(absl::string_view ns, std::vector<std::string> path,
                             std::vector<std::string> actions, protocol::v1::Scope scope,
                             std::optional<Address> owner) {
  protocol::v1::Capability capability;
  auto* resource = capability.mutable_resource();
  resource->set_namespace_(std::string(ns));
  for (std::string& segment : path) resource->add_path(std::move(segment));
  if (owner.has_value()) *resource->mutable_owner() = *owner;
  for (std::string& action : actions) capability.add_actions(std::move(action));
  capability.set_scope(scope);
  return capability;
}

protocol::v1::CapabilityRequirement Req(absl::string_view ns, std::vector<std::string> path,
                                        absl::string_view action, std::optional<Address> owner) {
  protocol::v1::CapabilityRequirement requirement;
  auto* resource = requirement.mutable_resource();
  resource->set_namespace_(std::string(ns));
  for (std::string& segment : path) resource->add_path(std::move(segment));
  if (owner.has_value()) *resource->mutable_owner() = *owner;
  requirement.set_action(std::string(action));
  return requirement;
}

GrantBuilder::GrantBuilder(absl::string_view id) {
  grant_.set_id(std::string(id));
  grant_.set_namespace_id("world-1");
  *grant_.mutable_subject() = Agent("alice-assistant");
  *grant_.mutable_issuer() = Human("alice");
  grant_.mutable_constraints();
  *grant_.mutable_issued_at() = Ts(T0() - absl::Hours(1));
}

GrantBuilder& GrantBuilder::WithCapability(protocol::v1::Capability capability) {
  *grant_.add_capabilities() = std::move(capability);
  return *this;
}
GrantBuilder& GrantBuilder::Subject(Address subject) {
  *grant_.mutable_subject() = std::move(subject);
  return *this;
}
GrantBuilder& GrantBuilder::Issuer(Address issuer) {
  *grant_.mutable_issuer() = std::move(issuer);
  return *this;
}
GrantBuilder& GrantBuilder::Namespace(absl::string_view namespace_id) {
  grant_.set_namespace_id(std::string(namespace_id));
  return *this;
}
GrantBuilder& GrantBuilder::IssuedAt(absl::Time time) {
  *grant_.mutable_issued_at() = Ts(time);
  return *this;
}
GrantBuilder& GrantBuilder::NotBefore(absl::Time time) {
  *grant_.mutable_constraints()->mutable_not_before() = Ts(time);
  return *this;
}
GrantBuilder& GrantBuilder::ExpiresAt(absl::Time time) {
  *grant_.mutable_constraints()->mutable_expires_at() = Ts(time);
  return *this;
}
GrantBuilder& GrantBuilder::RevokedAt(absl::Time time) {
  *grant_.mutable_revoked_at() = Ts(time);
  return *this;
}
GrantBuilder& GrantBuilder::Purposes(std::vector<std::string> purposes) {
  grant_.mutable_constraints()->clear_purposes();
  for (std::string& purpose : purposes) grant_.mutable_constraints()->add_purposes(purpose);
  return *this;
}
GrantBuilder& GrantBuilder::MaxUses(int64_t max_uses) {
  grant_.mutable_constraints()->set_max_uses(max_uses);
  return *this;
}
GrantBuilder& GrantBuilder::DelegationDepth(int32_t depth) {
  grant_.mutable_constraints()->set_delegation_depth(depth);
  return *this;
}
GrantBuilder& GrantBuilder::Parent(absl::string_view parent_grant_id) {
  grant_.set_parent_grant_id(std::string(parent_grant_id));
  return *this;
}

}  // namespace sharedos::capability::testing
