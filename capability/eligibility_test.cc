#include "capability/eligibility.h"

#include <optional>
#include <string>
#include <vector>

#include "capability/test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::capability {
namespace {

using ::sharedos::protocol::v1::CapabilityGrant;
using testing::At;
using testing::Cap;
using testing::GrantBuilder;
using testing::MakeContext;
using testing::T0;
using testing::Ts;

DecisionInstants Instants(absl::Time admitted, absl::Time now) {
  return DecisionInstants{absl::ToUnixMillis(admitted), absl::ToUnixMillis(now)};
}

GrantBuilder Grant() { return GrantBuilder("g").WithCapability(Cap("files", {}, {"read"})); }

struct Case {
  std::string name;
  CapabilityGrant grant;
  absl::Time admitted;
  absl::Time now;
  std::optional<RejectionReason> expected;
};

TEST(InactiveReasonTest, BoundariesAtBothInstants) {
  const std::optional<RejectionReason> kActive;
  const std::optional<RejectionReason> kWindow = RejectionReason::kWindow;
  const std::optional<RejectionReason> kPurpose = RejectionReason::kPurpose;
  const std::vector<Case> table = {
      {"plain grant", Grant(), T0(), T0(), kActive},
      // expiresAt: judged at max(admission, operation); exactly at expiry is refused.
      {"expiry after both", Grant().ExpiresAt(At(10)), T0(), At(9.999), kActive},
      {"expiry exactly at operation", Grant().ExpiresAt(At(10)), T0(), At(10), kWindow},
      {"expiry 1 ms before operation", Grant().ExpiresAt(At(10)), T0(), At(10.001), kWindow},
      {"expiry 1 ms after operation", Grant().ExpiresAt(At(10.001)), T0(), At(10), kActive},
      {"expiry exactly at admission", Grant().ExpiresAt(T0()), T0(), T0(), kWindow},
      {"operation before admission: expiry still at admission", Grant().ExpiresAt(At(10)), At(10),
       At(5), kWindow},
      // revokedAt: snapshot-bound, judged at admission only.
      {"revoked after admission, before operation", Grant().RevokedAt(At(5)), T0(), At(10),
       kActive},
      {"revoked exactly at admission", Grant().RevokedAt(T0()), T0(), T0(), kWindow},
      {"revoked 1 ms before admission", Grant().RevokedAt(At(-0.001)), T0(), T0(), kWindow},
      {"revoked 1 ms after admission", Grant().RevokedAt(At(0.001)), T0(), T0(), kActive},
      // issuedAt: at admission, so a grant issued mid-turn never widens the turn.
      {"issued exactly at admission", Grant().IssuedAt(T0()), T0(), T0(), kActive},
      {"issued 1 ms after admission", Grant().IssuedAt(At(0.001)), T0(), At(10), kWindow},
      {"issued mid-turn, operation later", Grant().IssuedAt(At(5)), T0(), At(10), kWindow},
      // notBefore: at admission.
      {"notBefore exactly at admission", Grant().NotBefore(T0()), T0(), T0(), kActive},
      {"notBefore 1 ms after admission", Grant().NotBefore(At(0.001)), T0(), T0(), kWindow},
      {"notBefore reached mid-turn", Grant().NotBefore(At(5)), T0(), At(10), kWindow},
      // purpose: at admission (the context purpose), exact match.
      {"purpose listed", Grant().Purposes({"triage", "assist"}), T0(), T0(), kActive},
      {"purpose not listed", Grant().Purposes({"triage"}), T0(), T0(), kPurpose},
      {"purpose is case-sensitive", Grant().Purposes({"Assist"}), T0(), T0(), kPurpose},
      {"window outranks purpose", Grant().Purposes({"triage"}).ExpiresAt(T0()), T0(), T0(),
       kWindow},
  };
  for (const Case& c : table) {
    EXPECT_EQ(InactiveReason(c.grant, "assist", Instants(c.admitted, c.now)), c.expected) << c.name;
  }
}

TEST(InactiveReasonTest, UnparsableTimestampsCloseTheWindow) {
  CapabilityGrant no_issued_at = Grant();
  no_issued_at.clear_issued_at();
  EXPECT_EQ(InactiveReason(no_issued_at, "assist", Instants(T0(), T0())), RejectionReason::kWindow);
  CapabilityGrant bad_nanos = Grant();
  bad_nanos.mutable_constraints()->mutable_expires_at()->set_nanos(-5);
  EXPECT_EQ(InactiveReason(bad_nanos, "assist", Instants(T0(), T0())), RejectionReason::kWindow);
  CapabilityGrant bad_revoked = Grant();
  bad_revoked.mutable_revoked_at()->set_seconds(-99999999999);
  EXPECT_EQ(InactiveReason(bad_revoked, "assist", Instants(T0(), T0())), RejectionReason::kWindow);
}

TEST(InactiveReasonTest, MillisecondResolutionLikeDateParse) {
  // 10.0009 s is 10 000 ms once parsed, so it is already expired at 10.000 s.
  CapabilityGrant grant = Grant();
  *grant.mutable_constraints()->mutable_expires_at() = Ts(At(10) + absl::Microseconds(900));
  EXPECT_EQ(InactiveReason(grant, "assist", Instants(T0(), At(10))), RejectionReason::kWindow);
}

TEST(ResolveInstantsTest, DefaultsAndInvalid) {
  protocol::v1::AccessContext context = MakeContext();
  std::optional<DecisionInstants> instants = ResolveInstants(context, std::nullopt);
  ASSERT_TRUE(instants.has_value());
  EXPECT_EQ(instants->now_ms, instants->admitted_ms);
  instants = ResolveInstants(context, At(3));
  ASSERT_TRUE(instants.has_value());
  EXPECT_EQ(instants->now_ms - instants->admitted_ms, 3000);
  EXPECT_EQ(instants->expiry_observed_ms(), instants->now_ms);
  EXPECT_FALSE(ResolveInstants(context, absl::InfiniteFuture()).has_value());
  EXPECT_FALSE(ResolveInstants(context, absl::InfinitePast()).has_value());
  context.mutable_now()->set_nanos(1000000000);
  EXPECT_FALSE(ResolveInstants(context, std::nullopt).has_value());
  context.clear_now();
  EXPECT_FALSE(ResolveInstants(context, std::nullopt).has_value());
}

}  // namespace
}  // namespace sharedos::capability
