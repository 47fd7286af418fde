#include "envelope_svc/core/catalog.h"

#include <google/protobuf/text_format.h>

#include <memory>
#include <vector>

#include "common/json/hashes.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/core/test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::Eq;

std::string ReferenceHash(const std::vector<std::shared_ptr<const tools::Tool>>& tools) {
  std::vector<pb::PublishedToolDefinition> published;
  for (const auto& tool : tools) published.push_back(tool->published());
  absl::StatusOr<std::string> hash = common::CatalogHash(published);
  EXPECT_TRUE(hash.ok()) << hash.status();
  return hash.ok() ? *hash : "";
}

TEST(CatalogHasherTest, EqualsTheReferenceCatalogHashAndMemoises) {
  std::unique_ptr<tools::ToolRegistry> registry = testing::TestRegistry(/*extra_tools=*/20);
  const std::vector<std::shared_ptr<const tools::Tool>>& all = registry->tools();
  CatalogHasher hasher(/*max_entries=*/4);
  std::vector<std::shared_ptr<const tools::Tool>> some = {all[0], all[3], all[7]};
  for (int round = 0; round < 3; ++round) {
    EXPECT_THAT(hasher.Hash(all), IsOkAndHolds(Eq(ReferenceHash(all))));
    EXPECT_THAT(hasher.Hash(some), IsOkAndHolds(Eq(ReferenceHash(some))));
  }
  // More distinct sets than the memo holds: still exact.
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    std::vector<std::shared_ptr<const tools::Tool>> pair = {all[i], all[i + 1]};
    EXPECT_THAT(hasher.Hash(pair), IsOkAndHolds(Eq(ReferenceHash(pair))));
  }
  // The empty catalogue hashes "[]".
  EXPECT_THAT(hasher.Hash({}),
              IsOkAndHolds(Eq("4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945")));
}

TEST(CatalogTest, BuildCatalogPublishesTheProjections) {
  std::unique_ptr<tools::ToolRegistry> registry = testing::TestRegistry();
  std::vector<std::shared_ptr<const tools::Tool>> tools = {registry->Find("files.create"),
                                                           registry->Find("files.read")};
  pb::ToolCatalog catalog = BuildCatalog("exec-1", tools, std::string(64, 'a'));
  EXPECT_EQ(catalog.version(), "1");
  EXPECT_EQ(catalog.execution_id(), "exec-1");
  ASSERT_EQ(catalog.tools_size(), 2);
  EXPECT_EQ(catalog.tools(0).name(), "files.create");
  EXPECT_EQ(catalog.tools(1).metadata().namespace_(), "files");
  EXPECT_TRUE(catalog.tools(1).annotations().read_only_hint());
}

TEST(CatalogTest, NarrowReachKeepsTheCatalogueNamespaces) {
  pb::ReachResult reach;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        status: REACH_STATUS_COMPUTED
        reach { namespace: "files" path: "a" actions: "read" scope: SCOPE_EXACT }
        reach { namespace: "repo" path: "r" actions: "log" scope: SCOPE_EXACT }
        reach { namespace: "sharedos" path: "escalation" actions: "request" scope: SCOPE_EXACT }
      )pb",
      &reach));
  pb::ReachResult narrowed = NarrowReach(reach, {"files", "sharedos"});
  std::vector<std::string> namespaces;
  for (const auto& entry : narrowed.reach()) namespaces.push_back(entry.namespace_());
  EXPECT_THAT(namespaces, ElementsAre("files", "sharedos"));
  EXPECT_EQ(narrowed.status(), pb::REACH_STATUS_COMPUTED);

  pb::ReachResult unavailable;
  unavailable.set_status(pb::REACH_STATUS_UNAVAILABLE);
  unavailable.set_reason_code("authority_unavailable");
  EXPECT_EQ(NarrowReach(unavailable, {}).reason_code(), "authority_unavailable");
}

}  // namespace
}  // namespace sharedos::envelope::core
