#include "capability/matching.h"

#include <string>
#include <vector>

#include "capability/test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::capability {
namespace {

using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;
using ::sharedos::protocol::v1::SCOPE_UNSPECIFIED;
using testing::Cap;
using testing::Human;
using testing::Req;

struct Case {
  std::string name;
  Capability capability;
  CapabilityRequirement request;
  bool invocation;  // capabilityMatches
  bool discovery;   // capabilityIntersectsCeiling (request read as the ceiling)
};

const protocol::v1::Address kOwner = Human("alice");

std::vector<Case> Cases() {
  return {
      {"exact equal path", Cap("files", {"a", "b"}, {"read"}, SCOPE_EXACT),
       Req("files", {"a", "b"}, "read"), true, true},
      {"exact: deeper request", Cap("files", {"a"}, {"read"}, SCOPE_EXACT),
       Req("files", {"a", "b"}, "read"), false, false},
      {"exact: shallower request (ceiling above the grant)",
       Cap("files", {"a", "b"}, {"read"}, SCOPE_EXACT), Req("files", {"a"}, "read"), false, true},
      {"exact: root ceiling", Cap("files", {"a", "b"}, {"read"}, SCOPE_EXACT),
       Req("files", {}, "read"), false, true},
      {"exact: sibling", Cap("files", {"a", "b"}, {"read"}, SCOPE_EXACT),
       Req("files", {"a", "c"}, "read"), false, false},
      {"descendants: equal", Cap("files", {"a"}, {"read"}), Req("files", {"a"}, "read"), true,
       true},
      {"descendants: deeper", Cap("files", {"a"}, {"read"}), Req("files", {"a", "b", "c"}, "read"),
       true, true},
      {"descendants: broader ceiling overlaps", Cap("files", {"a", "b"}, {"read"}),
       Req("files", {"a"}, "read"), false, true},
      {"descendants: segment prefix only (cell-3 vs cell-30)", Cap("files", {"cell-3"}, {"read"}),
       Req("files", {"cell-30"}, "read"), false, false},
      {"descendants: empty path covers all", Cap("files", {}, {"read"}),
       Req("files", {"x", "y"}, "read"), true, true},
      {"namespace exact string", Cap("files", {}, {"read"}), Req("repo", {}, "read"), false, false},
      {"namespace case-sensitive", Cap("files", {}, {"read"}), Req("Files", {}, "read"), false,
       false},
      {"action not listed", Cap("files", {}, {"read", "list"}), Req("files", {}, "write"), false,
       false},
      {"action listed among others", Cap("files", {}, {"read", "list"}), Req("files", {}, "list"),
       true, true},
      {"wildcard action", Cap("files", {}, {"*"}), Req("files", {}, "delete"), true, true},
      {"prefixed wildcard is literal", Cap("files", {}, {"snapshot:*"}),
       Req("files", {}, "snapshot:create"), false, false},
      {"prefixed wildcard matches itself", Cap("files", {}, {"snapshot:*"}),
       Req("files", {}, "snapshot:*"), true, true},
      {"request * needs granted *", Cap("files", {}, {"read"}), Req("files", {}, "*"), false,
       false},
      {"request * with granted *", Cap("files", {}, {"*"}), Req("files", {}, "*"), true, true},
      {"owner defaults on both sides", Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, kOwner),
       Req("files", {"a"}, "read"), true, true},
      {"request owner defaults", Cap("files", {}, {"read"}), Req("files", {"a"}, "read", kOwner),
       true, true},
      {"other owner", Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, Human("bob")),
       Req("files", {"a"}, "read"), false, false},
      {"both name the other owner", Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, Human("bob")),
       Req("files", {"a"}, "read", Human("bob")), true, true},
      {"unspecified scope matches nothing", Cap("files", {}, {"read"}, SCOPE_UNSPECIFIED),
       Req("files", {}, "read"), false, false},
  };
}

TEST(MatchingTest, InvocationAndDiscoveryTable) {
  for (const Case& c : Cases()) {
    EXPECT_EQ(CapabilityMatches(c.capability, c.request, kOwner), c.invocation) << c.name;
    EXPECT_EQ(CapabilityIntersectsCeiling(c.capability, c.request, kOwner), c.discovery) << c.name;
  }
}

TEST(MatchingTest, InvocationImpliesDiscovery) {
  for (const Case& c : Cases()) {
    if (c.invocation) {
      EXPECT_TRUE(c.discovery) << c.name;
    }
  }
}

TEST(IsSegmentPrefixTest, Segments) {
  const Capability a = Cap("files", {"a", "b"}, {"read"});
  const Capability ab = Cap("files", {"a", "b", "c"}, {"read"});
  EXPECT_TRUE(IsSegmentPrefix(a.resource().path(), ab.resource().path()));
  EXPECT_FALSE(IsSegmentPrefix(ab.resource().path(), a.resource().path()));
  EXPECT_TRUE(IsSegmentPrefix(a.resource().path(), a.resource().path()));
}

TEST(CapabilityWithinTest, UseTimeTable) {
  struct WithinCase {
    std::string name;
    Capability child;
    Capability parent;
    bool use_time;
    bool every_context;
  };
  const std::vector<WithinCase> table = {
      {"same", Cap("files", {"a"}, {"read"}), Cap("files", {"a"}, {"read"}), true, true},
      {"deeper under descendants", Cap("files", {"a", "b"}, {"read"}, SCOPE_EXACT),
       Cap("files", {"a"}, {"read"}), true, true},
      {"broader than parent", Cap("files", {}, {"read"}), Cap("files", {"a"}, {"read"}), false,
       false},
      {"descendants under exact parent", Cap("files", {"a"}, {"read"}),
       Cap("files", {"a"}, {"read"}, SCOPE_EXACT), false, false},
      {"exact under exact, same path", Cap("files", {"a"}, {"read"}, SCOPE_EXACT),
       Cap("files", {"a"}, {"read"}, SCOPE_EXACT), true, true},
      {"exact under exact, other path", Cap("files", {"a", "b"}, {"read"}, SCOPE_EXACT),
       Cap("files", {"a"}, {"read"}, SCOPE_EXACT), false, false},
      {"subset of actions", Cap("files", {}, {"read"}), Cap("files", {}, {"read", "list"}), true,
       true},
      {"extra action", Cap("files", {}, {"read", "write"}), Cap("files", {}, {"read"}), false,
       false},
      {"anything under *", Cap("files", {}, {"delete"}), Cap("files", {}, {"*"}), true, true},
      {"* only under *", Cap("files", {}, {"*"}), Cap("files", {}, {"read"}), false, false},
      {"other namespace", Cap("repo", {}, {"read"}), Cap("files", {}, {"read"}), false, false},
      {"owned child, unowned parent, context owner",
       Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, kOwner), Cap("files", {}, {"read"}), true,
       false},
      {"unowned child, owned parent = context owner", Cap("files", {}, {"read"}),
       Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, kOwner), true, false},
      {"same explicit owner", Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, Human("bob")),
       Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, Human("bob")), true, true},
      {"other explicit owner", Cap("files", {}, {"read"}, SCOPE_DESCENDANTS, Human("bob")),
       Cap("files", {}, {"read"}), false, false},
  };
  for (const WithinCase& c : table) {
    EXPECT_EQ(CapabilityWithin(c.child, c.parent, kOwner), c.use_time) << c.name;
    EXPECT_EQ(CapabilityWithinInEveryContext(c.child, c.parent), c.every_context) << c.name;
  }
}

}  // namespace
}  // namespace sharedos::capability
