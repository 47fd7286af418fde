#include "grantstore_svc/core/owner_binding.h"

#include <vector>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

pb::CapabilityGrant Grant(const std::string& text) {
  pb::CapabilityGrant grant;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &grant)) << text;
  return grant;
}

constexpr char kAlicesGrant[] = R"pb(
  issuer { human_user_id: "user-alice" }
  capabilities {
    resource { namespace: "files" path: "Workspace" }
    actions: "read"
  }
  capabilities {
    resource {
      namespace: "files"
      path: "Shared"
      owner { human_user_id: "user-bob" }
    }
    actions: "read"
  }
)pb";

TEST(BindOwnersTest, AnOwnerlessCapabilityIsPinnedToAHumanIssuer) {
  pb::CapabilityGrant grant = Grant(kAlicesGrant);
  ASSERT_THAT(BindOwners(grant, /*any_owner=*/false, "grant"), IsOk());
  EXPECT_EQ(grant.capabilities(0).resource().owner().human_user_id(), "user-alice");
  // An owner named explicitly (an admin naming bob) is kept.
  EXPECT_EQ(grant.capabilities(1).resource().owner().human_user_id(), "user-bob");
  EXPECT_FALSE(ReachesAnyOwner(grant));
  EXPECT_FALSE(grant.metadata().fields().contains(kAnyOwnerKey));
}

TEST(BindOwnersTest, UnderANonHumanIssuerTheOwnerIsRequiredUnlessAnyOwnerIsSaid) {
  pb::CapabilityGrant grant = Grant(R"pb(
    issuer { agent_id: "agent-orchestrator" }
    capabilities {
      resource {
        namespace: "files"
        path: "A"
        owner { human_user_id: "user-alice" }
      }
      actions: "read"
    }
    capabilities {
      resource { namespace: "files" path: "B" }
      actions: "read"
    })pb");
  pb::CapabilityGrant refused = grant;
  EXPECT_THAT(BindOwners(refused, false, "grant"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grant.capabilities[1].resource.owner: required")));
  ASSERT_THAT(BindOwners(grant, /*any_owner=*/true, "grant"), IsOk());
  EXPECT_FALSE(grant.capabilities(1).resource().has_owner());
  EXPECT_TRUE(grant.metadata().fields().at(kAnyOwnerKey).bool_value());
  EXPECT_TRUE(ReachesAnyOwner(grant));
}

TEST(BindOwnersTest, TheMarkerIsTheStoresNotTheCallers) {
  pb::CapabilityGrant grant = Grant(kAlicesGrant);
  (*grant.mutable_metadata()->mutable_fields())[kAnyOwnerKey].set_bool_value(true);
  ASSERT_THAT(BindOwners(grant, false, "grant"), IsOk());
  EXPECT_FALSE(grant.metadata().fields().contains(kAnyOwnerKey));
}

TEST(BindChildOwnersTest, AChildTakesItsParentsOwnerOrStaysAnyOwnerUnderAnOwnerlessParent) {
  pb::CapabilityGrant parent = Grant(kAlicesGrant);
  parent.mutable_capabilities(1)->mutable_resource()->clear_owner();
  ASSERT_THAT(BindOwners(parent, false, "grant"), IsOk());  // both alice's now
  std::vector<pb::Capability> child = {parent.capabilities(0)};
  child[0].mutable_resource()->clear_owner();
  ASSERT_THAT(BindChildOwners(parent, child, "child.capabilities"), IsOk());
  EXPECT_EQ(child[0].resource().owner().human_user_id(), "user-alice");

  pb::CapabilityGrant mixed = Grant(kAlicesGrant);
  ASSERT_THAT(BindOwners(mixed, false, "grant"), IsOk());  // alice's and bob's
  child[0].mutable_resource()->clear_owner();
  EXPECT_THAT(BindChildOwners(mixed, child, "child.capabilities"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("child.capabilities[0].resource.owner")));

  pb::CapabilityGrant any = Grant(kAlicesGrant);
  ASSERT_THAT(BindOwners(any, /*any_owner=*/true, "grant"), IsOk());
  child[0].mutable_resource()->clear_owner();
  ASSERT_THAT(BindChildOwners(any, child, "child.capabilities"), IsOk());
  EXPECT_FALSE(child[0].resource().has_owner());
}

}  // namespace
}  // namespace sharedos::grantstore::core
