// deploy/compose/demo-grant.textproto, the grant an operator issues by hand against the compose
// deployment (deploy/README.md), is the grant `sharedosd --demo` seeds: the quickstart behaves
// the same on both.
#include <fstream>
#include <iterator>
#include <string>

#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

TEST(DemoGrantTest, TheComposeGrantFileIsTheGrantSharedosdSeeds) {
  std::ifstream in(sharedos::testing::RunfilePath("deploy/compose/demo-grant.textproto"));
  ASSERT_TRUE(in) << "deploy/compose/demo-grant.textproto is not readable";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  protocol::v1::CapabilityGrant grant;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &grant));
  std::string differences;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differencer.Compare(grant, sharedos::testing::demo::Grant())) << differences;
}

}  // namespace
}  // namespace sharedos
