// Builders of protocol objects for the authorizer core's tests and benchmarks.

#ifndef SHAREDOS_CAPABILITY_TEST_BUILDERS_H_
#define SHAREDOS_CAPABILITY_TEST_BUILDERS_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::capability::testing {

// The instant every test world starts at: 2026-01-01T00:00:00Z.
absl::Time T0();
// T0 + `seconds`.
absl::Time At(double seconds);
google::protobuf::Timestamp Ts(absl::Time time);

protocol::v1::Address Human(absl::string_view id);
protocol::v1::Address Agent(absl::string_view id);
protocol::v1::Address Group(absl::string_view id);
protocol::v1::Address Service(absl::string_view id);

// namespace "world-1", actor agent "alice-assistant", authority and owner human "alice",
// purpose "assist", trace "trace-1", now T0.
protocol::v1::AccessContext MakeContext();

protocol::v1::Capability Cap(absl::string_view ns, std::vector<std::string> path,
                             std::vector<std::string> actions,
                             protocol::v1::Scope scope = protocol::v1::SCOPE_DESCENDANTS,
                             std::optional<protocol::v1::Address> owner = std::nullopt);

protocol::v1::CapabilityRequirement Req(absl::string_view ns, std::vector<std::string> path,
                                        absl::string_view action,
                                        std::optional<protocol::v1::Address> owner = std::nullopt);

// A root grant valid for MakeContext(): subject = actor, issuer = authority, issued at T0 − 1h.
class GrantBuilder {
 public:
  explicit GrantBuilder(absl::string_view id);

  GrantBuilder& WithCapability(protocol::v1::Capability capability);
  GrantBuilder& Subject(protocol::v1::Address subject);
  GrantBuilder& Issuer(protocol::v1::Address issuer);
  GrantBuilder& Namespace(absl::string_view namespace_id);
  GrantBuilder& IssuedAt(absl::Time time);
  GrantBuilder& NotBefore(absl::Time time);
  GrantBuilder& ExpiresAt(absl::Time time);
  GrantBuilder& RevokedAt(absl::Time time);
  GrantBuilder& Purposes(std::vector<std::string> purposes);
  GrantBuilder& MaxUses(int64_t max_uses);
  GrantBuilder& DelegationDepth(int32_t depth);
  GrantBuilder& Parent(absl::string_view parent_grant_id);

  protocol::v1::CapabilityGrant Build() const { return grant_; }
  operator protocol::v1::CapabilityGrant() const { return grant_; }  // NOLINT

 private:
  protocol::v1::CapabilityGrant grant_;
};

}  // namespace sharedos::capability::testing

#endif  // SHAREDOS_CAPABILITY_TEST_BUILDERS_H_
