// Checking valid input builds no field-path strings: paths are rendered only when an error
// names one (bounds.h PathRef). Counted with the replaced global operator new of
// tests/testing/allocation_counter (this binary only), which is also what std::string uses.

#include <string>

#include "common/validation/protocol.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "tests/testing/allocation_counter.h"

namespace sharedos::common::validation {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::testing::CountAllocations;
using ::testing::HasSubstr;

// A grant whose every field is set, long ids included (beyond the small-string buffer, so a
// copied path or value would show as an allocation).
pb::CapabilityGrant FullGrant() {
  pb::CapabilityGrant grant;
  grant.set_id("grant-with-an-id-longer-than-sixteen-bytes");
  grant.set_namespace_id("world-namespace-identifier");
  grant.mutable_subject()->set_agent_id("alice-assistant-agent");
  grant.mutable_issuer()->set_human_user_id("alice-the-human-user");
  for (int c = 0; c < 10; ++c) {
    auto* capability = grant.add_capabilities();
    capability->mutable_resource()->set_namespace_("files");
    capability->mutable_resource()->add_path("projects");
    capability->mutable_resource()->add_path("target-project-with-a-long-name");
    capability->mutable_resource()->mutable_owner()->set_human_user_id("alice-the-human-user");
    capability->add_actions("read");
    capability->add_actions("write");
    capability->set_scope(pb::SCOPE_DESCENDANTS);
  }
  auto* constraints = grant.mutable_constraints();
  constraints->add_purposes("assist");
  constraints->mutable_not_before()->set_seconds(1767225600);
  constraints->mutable_expires_at()->set_seconds(1767229200);
  constraints->set_max_uses(3);
  constraints->set_delegation_depth(1);
  grant.mutable_issued_at()->set_seconds(1767225600);
  grant.set_parent_grant_id("parent-grant-with-a-long-id");
  return grant;
}

// The zeros below mean something only if this binary counts: a string past the small-string
// buffer is one allocation.
TEST(ProtocolAllocationTest, TheCounterSeesAnAllocation) {
  std::string text;
  EXPECT_EQ(CountAllocations([&] { text.assign(64, 'x'); }), 1);
}

TEST(ProtocolAllocationTest, AValidGrantIsCheckedWithoutAllocating) {
  pb::CapabilityGrant grant = FullGrant();
  const PathRef root("grants");
  ASSERT_TRUE(ValidateCapabilityGrant(&grant, root.Index(255)).ok());  // Warms the scratch.
  EXPECT_EQ(CountAllocations([&] {
              const absl::Status status = ValidateCapabilityGrant(&grant, root.Index(255));
              EXPECT_TRUE(status.ok());
            }),
            0);
}

TEST(ProtocolAllocationTest, AValidContextIsCheckedWithoutAllocating) {
  pb::AccessContext context;
  context.set_namespace_id("world-namespace-identifier");
  context.mutable_actor()->set_agent_id("alice-assistant-agent");
  context.mutable_authority()->set_human_user_id("alice-the-human-user");
  context.mutable_owner()->set_human_user_id("alice-the-human-user");
  context.set_purpose("assist");
  context.set_trace_id("trace-identifier-longer-than-sixteen");
  context.mutable_now()->set_seconds(1767225600);
  ASSERT_TRUE(ValidateAccessContext(&context, "context").ok());
  EXPECT_EQ(CountAllocations([&] { EXPECT_TRUE(ValidateAccessContext(&context, "context").ok()); }),
            0);
}

TEST(ProtocolAllocationTest, AFailureStillNamesTheWholePath) {
  pb::CapabilityGrant grant = FullGrant();
  grant.mutable_capabilities(7)->set_actions(1, "   ");
  const PathRef root("grants");
  const absl::Status status = ValidateCapabilityGrant(&grant, root.Index(3));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("grants[3].capabilities[7].actions[1]: empty"));
}

TEST(PathRefTest, RendersAsTheStringBuildersDo) {
  const PathRef root("a");
  EXPECT_EQ(root.Field("b").Index(2).Key("k\"\n").Field("c").Render(),
            FieldPath(KeyPath(IndexPath(FieldPath("a", "b"), 2), "k\"\n"), "c"));
  const PathRef empty("");
  EXPECT_EQ(empty.Field("x").Render(), "x");
  EXPECT_EQ(empty.Field("x").Field("y").Render(), "x.y");
  EXPECT_EQ(empty.Index(1).Field("y").Render(), IndexPath("", 1) + ".y");
}

}  // namespace
}  // namespace sharedos::common::validation
