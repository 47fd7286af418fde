// Checking valid input builds no field-path strings: paths are rendered only when an error
// names one (bounds.h PathRef). Counted with a replaced global operator new (this binary only),
// which is also what std::string uses.

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "common/validation/protocol.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

}  // namespace

void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace sharedos::common::validation {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::testing::HasSubstr;

template <typename F>
long Allocations(F run) {
  allocations = 0;
  counting = true;
  run();
  counting = false;
  return allocations.load();
}

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

TEST(ProtocolAllocationTest, AValidGrantIsCheckedWithoutAllocating) {
  pb::CapabilityGrant grant = FullGrant();
  const PathRef root("grants");
  ASSERT_TRUE(ValidateCapabilityGrant(&grant, root.Index(255)).ok());  // Warms the scratch.
  EXPECT_EQ(Allocations([&] {
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
  EXPECT_EQ(Allocations([&] { EXPECT_TRUE(ValidateAccessContext(&context, "context").ok()); }), 0);
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
