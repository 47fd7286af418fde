#include "capability/capability_request.h"

#include "capability/test_builders.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::capability {
namespace {

using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::CapabilityRequest;
using ::sharedos::protocol::v1::SCOPE_EXACT;
using testing::Agent;
using testing::At;
using testing::Cap;
using ::testing::ElementsAre;
using testing::Human;
using testing::MakeContext;
using testing::Req;
using ::testing::StartsWith;
using testing::Ts;

// Golden: the same identity as common/json hashes_test (computed independently).
constexpr char kReadProjectX[] =
    "capreq-e9b6e0cb3554a851fdc1e2b0b2720432991db61f8f0b632e033a70fec8a792eb";

CapabilityRequest Ask() {
  CapabilityRequest ask;
  *ask.add_capabilities() = Cap("files", {"Memory", "project-x"}, {"read"}, SCOPE_EXACT);
  ask.set_purpose("assist");
  return ask;
}

TEST(MintCapabilityRequestTest, MintsIdentityFromTheContext) {
  CapabilityRequest ask = Ask();
  // Identity fields in the ask are discarded.
  ask.set_id("capreq-forged");
  ask.set_namespace_id("world-2");
  *ask.mutable_requester() = Agent("mallory");
  *ask.mutable_owner() = Human("mallory");
  *ask.mutable_requested_at() = Ts(At(-1000));
  absl::StatusOr<CapabilityRequest> request = MintCapabilityRequest(MakeContext(), ask);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->id(), kReadProjectX);
  EXPECT_EQ(request->namespace_id(), "world-1");
  EXPECT_EQ(request->requester().agent_id(), "alice-assistant");
  EXPECT_EQ(request->owner().human_user_id(), "alice");
  EXPECT_EQ(request->requested_at().seconds(), MakeContext().now().seconds());
  EXPECT_FALSE(request->has_constraints());
  EXPECT_FALSE(request->has_metadata());
}

TEST(MintCapabilityRequestTest, SameAskSameIdAcrossTurnsAndMetadata) {
  AccessContext later = MakeContext();
  *later.mutable_now() = Ts(At(86400));
  later.set_trace_id("trace-2");
  CapabilityRequest with_metadata = Ask();
  (*with_metadata.mutable_metadata()->mutable_fields())["note"].set_string_value("please");
  absl::StatusOr<CapabilityRequest> first = MintCapabilityRequest(MakeContext(), Ask());
  absl::StatusOr<CapabilityRequest> second = MintCapabilityRequest(later, with_metadata);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->id(), second->id());
  EXPECT_NE(first->requested_at().seconds(), second->requested_at().seconds());
  EXPECT_TRUE(second->has_metadata());
}

TEST(MintCapabilityRequestTest, IdentityFieldsChangeTheId) {
  const std::string base = MintCapabilityRequest(MakeContext(), Ask())->id();
  CapabilityRequest constrained = Ask();
  constrained.mutable_constraints();  // Present, even empty, is part of the identity.
  EXPECT_NE(MintCapabilityRequest(MakeContext(), constrained)->id(), base);
  CapabilityRequest other_purpose = Ask();
  other_purpose.set_purpose("triage");
  EXPECT_NE(MintCapabilityRequest(MakeContext(), other_purpose)->id(), base);
  AccessContext other_actor = MakeContext();
  *other_actor.mutable_actor() = Agent("bob-assistant");
  EXPECT_NE(MintCapabilityRequest(other_actor, Ask())->id(), base);
  AccessContext other_owner = MakeContext();
  *other_owner.mutable_owner() = Human("bob");
  EXPECT_NE(MintCapabilityRequest(other_owner, Ask())->id(), base);
}

TEST(MintCapabilityRequestTest, TrimsBeforeHashing) {
  CapabilityRequest padded = Ask();
  padded.set_purpose("  assist ");
  padded.mutable_capabilities(0)->set_actions(0, " read");
  absl::StatusOr<CapabilityRequest> request = MintCapabilityRequest(MakeContext(), padded);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->id(), kReadProjectX);
  EXPECT_EQ(request->purpose(), "assist");
}

TEST(MintCapabilityRequestTest, InvalidAskRefused) {
  CapabilityRequest empty = Ask();
  empty.clear_capabilities();
  EXPECT_THAT(MintCapabilityRequest(MakeContext(), empty),
              StatusIs(absl::StatusCode::kInvalidArgument));
  CapabilityRequest no_purpose = Ask();
  no_purpose.set_purpose(" ");
  EXPECT_THAT(MintCapabilityRequest(MakeContext(), no_purpose),
              StatusIs(absl::StatusCode::kInvalidArgument));
  CapabilityRequest bad_segment = Ask();
  bad_segment.mutable_capabilities(0)->mutable_resource()->add_path("..");
  EXPECT_THAT(MintCapabilityRequest(MakeContext(), bad_segment),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(DescribeRequiredAuthorityTest, OneExactCapabilityWithTheContextPurpose) {
  absl::StatusOr<CapabilityRequest> described =
      DescribeRequiredAuthority(MakeContext(), Req("files", {"Memory", "project-x"}, "read"));
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ(described->id(), kReadProjectX);
  ASSERT_EQ(described->capabilities_size(), 1);
  EXPECT_EQ(described->capabilities(0).scope(), SCOPE_EXACT);
  EXPECT_THAT(described->capabilities(0).actions(), ElementsAre("read"));
  EXPECT_FALSE(described->capabilities(0).resource().has_owner());
  EXPECT_EQ(described->purpose(), "assist");
  // Re-minting the description as an escalation's ask round-trips to the same id.
  EXPECT_EQ(MintCapabilityRequest(MakeContext(), *described)->id(), described->id());
}

TEST(DescribeRequiredAuthorityTest, OwnerOnlyWhenTheRequirementNamedOne) {
  absl::StatusOr<CapabilityRequest> owned = DescribeRequiredAuthority(
      MakeContext(), Req("files", {"Memory", "project-x"}, "read", Human("alice")));
  ASSERT_TRUE(owned.ok()) << owned.status();
  EXPECT_TRUE(owned->capabilities(0).resource().has_owner());
  EXPECT_NE(owned->id(), kReadProjectX);
  EXPECT_THAT(owned->id(), StartsWith("capreq-"));
}

}  // namespace
}  // namespace sharedos::capability
