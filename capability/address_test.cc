#include "capability/address.h"

#include "capability/test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::capability {
namespace {

using ::sharedos::protocol::v1::Address;
using testing::Agent;
using ::testing::ElementsAre;
using testing::Group;
using testing::Human;
using testing::Service;

TEST(AddressTest, EqualityIsKindAndId) {
  EXPECT_TRUE(AddressEquals(Human("alice"), Human("alice")));
  EXPECT_FALSE(AddressEquals(Human("alice"), Human("bob")));
  // Same id, different kind: different principals.
  EXPECT_FALSE(AddressEquals(Human("alice"), Agent("alice")));
  EXPECT_FALSE(AddressEquals(Group("x"), Service("x")));
  EXPECT_TRUE(AddressEquals(Address(), Address()));
  EXPECT_FALSE(AddressEquals(Address(), Human("")));
}

TEST(AddressTest, AddressPathIsKindThenId) {
  EXPECT_THAT(AddressPath(Agent("alice-assistant")), ElementsAre("agent", "alice-assistant"));
  EXPECT_THAT(AddressPath(Human("alice")), ElementsAre("human", "alice"));
  EXPECT_THAT(AddressPath(Group("c-1")), ElementsAre("group", "c-1"));
  EXPECT_THAT(AddressPath(Service("svc")), ElementsAre("service", "svc"));
}

TEST(AddressTest, AddressKeyJoinsThePathWithAColon) {
  EXPECT_EQ(AddressKey(Agent("alice-assistant")), "agent:alice-assistant");
  EXPECT_EQ(AddressKey(Human("alice")), "human:alice");
  EXPECT_EQ(AddressKey(Group("c-1")), "group:c-1");
  EXPECT_EQ(AddressKey(Service("svc")), "service:svc");
  EXPECT_EQ(AddressKey(protocol::v1::Address()), "");
}

TEST(AddressTest, OwnerDefaultsToContextOwner) {
  protocol::v1::ResourceRef resource;
  EXPECT_TRUE(AddressEquals(OwnerOrDefault(resource, Human("alice")), Human("alice")));
  *resource.mutable_owner() = Human("bob");
  EXPECT_TRUE(AddressEquals(OwnerOrDefault(resource, Human("alice")), Human("bob")));
}

}  // namespace
}  // namespace sharedos::capability
