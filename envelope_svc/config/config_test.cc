// The shipped registry configs load, and every tool in them works end to end through the tool
// layer and the files provider — the checks the turn layer will run, in the order of semantics
// §3.9 steps 7–12 (the authorization steps in between are not this layer's).

#include <google/protobuf/util/message_differencer.h>
#include <stdlib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/json/hashes.h"
#include "common/json/proto_json.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "envelope_svc/providers/files/files_provider.h"
#include "envelope_svc/tools/escalation_tool.h"
#include "envelope_svc/tools/tool_refusal.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/tools/turn_tools.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::ToolCall;
using ::sharedos::protocol::v1::ToolResult;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using Json = nlohmann::json;

const char kStandard[] = "envelope_svc/config/standard_tools.textproto";
const char kConformance[] = "envelope_svc/config/conformance_tools.textproto";

std::vector<std::string> Names(const std::vector<std::shared_ptr<const tools::Tool>>& tools) {
  std::vector<std::string> names;
  for (const auto& tool : tools) names.push_back(tool->name());
  return names;
}

TEST(StandardToolsTest, LoadsTheTwelveFilesToolsAndEscalate) {
  auto registry = tools::ToolRegistry::LoadFiles({kStandard});
  ASSERT_THAT(registry, IsOk());
  EXPECT_THAT(Names((*registry)->tools()),
              ElementsAre("files.append", "files.create", "files.delete", "files.grep",
                          "files.list", "files.read", "files.replace", "files.search",
                          "files.snapshot.create", "files.snapshot.list", "files.snapshot.restore",
                          "files.stat", "sharedos.escalate"));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      (*registry)->Find("sharedos.escalate")->definition(), tools::EscalationToolDefinition()));
  std::vector<protocol::v1::PublishedToolDefinition> published;
  for (const auto& tool : (*registry)->tools()) published.push_back(tool->published());
  auto hash = common::CatalogHash(published);
  ASSERT_THAT(hash, IsOk());
  EXPECT_EQ(hash->size(), 64u);
}

struct ActionCase {
  std::string tool;
  std::string action;
  bool read;
  bool destructive;
};

class StandardActionTest : public ::testing::TestWithParam<ActionCase> {};

// Semantics §2.2: tool → action, class; resource namespace files, ceiling path [].
TEST_P(StandardActionTest, MatchesTheStandardMap) {
  auto registry = tools::ToolRegistry::LoadFiles({kStandard});
  ASSERT_THAT(registry, IsOk());
  auto tool = (*registry)->Find(GetParam().tool);
  ASSERT_NE(tool, nullptr);
  EXPECT_EQ(tool->tool_namespace(), "files");
  EXPECT_EQ(tool->ceiling().action(), GetParam().action);
  EXPECT_EQ(tool->ceiling().resource().namespace_(), "files");
  EXPECT_EQ(tool->ceiling().resource().path_size(), 0);
  EXPECT_FALSE(tool->ceiling().resource().has_owner());
  EXPECT_EQ(tool->definition().read_write(),
            GetParam().read ? protocol::v1::READ_WRITE_READ : protocol::v1::READ_WRITE_WRITE);
  EXPECT_EQ(tool->definition().annotations().destructive(), GetParam().destructive);
  EXPECT_TRUE(tool->provider_binding().has_files());
  EXPECT_TRUE(tool->definition().has_output_schema());
  EXPECT_EQ(tool->requirement_rule().path_from_arguments().path_argument(), "path");
}

INSTANTIATE_TEST_SUITE_P(
    Files, StandardActionTest,
    ::testing::Values(ActionCase{"files.list", "list", true, false},
                      ActionCase{"files.stat", "stat", true, false},
                      ActionCase{"files.read", "read", true, false},
                      ActionCase{"files.search", "search", true, false},
                      ActionCase{"files.grep", "grep", true, false},
                      ActionCase{"files.create", "create", false, false},
                      ActionCase{"files.replace", "replace", false, true},
                      ActionCase{"files.append", "append", false, false},
                      ActionCase{"files.delete", "delete", false, true},
                      ActionCase{"files.snapshot.create", "snapshot:create", false, false},
                      ActionCase{"files.snapshot.list", "snapshot:list", true, false},
                      ActionCase{"files.snapshot.restore", "snapshot:restore", false, true}),
    [](const ::testing::TestParamInfo<ActionCase>& info) {
      std::string name = info.param.action;
      for (char& c : name) {
        if (c == ':') c = '_';
      }
      return name;
    });

TEST(ConformanceToolsTest, LoadsBesideTheStandardTools) {
  auto registry = tools::ToolRegistry::LoadFiles({kStandard, kConformance});
  ASSERT_THAT(registry, IsOk());
  EXPECT_EQ((*registry)->tools().size(), 19u);
  EXPECT_EQ((*registry)->Find("admin.grant.issue"), nullptr);
  EXPECT_EQ((*registry)->Find("files.purge")->tool_namespace(), "files.admin");
  EXPECT_EQ((*registry)->Find("notion.search")->provider_binding().grpc().provider_id(),
            "notion-mcp");
  // Loading the fixture twice is a duplicate.
  EXPECT_THAT(tools::ToolRegistry::LoadFiles({kStandard, kConformance, kConformance}),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("duplicate")));
}

// The conformance world: owner human:user-alice, files under Workspace/.
class WorldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = tools::ToolRegistry::LoadFiles({kStandard, kConformance});
    ASSERT_THAT(registry, IsOk());
    registry_ = *std::move(registry);
    std::string root = ::testing::TempDir() + "/worldXXXXXX";
    ASSERT_NE(mkdtemp(root.data()), nullptr);
    files::FilesProvider::Options options;
    options.root = root;
    for (const auto& tool : registry_->tools()) {
      if (tool->provider_binding().has_files()) options.tools.push_back(tool->definition());
    }
    auto provider = files::FilesProvider::Create(options, clock_, clock_);
    ASSERT_THAT(provider, IsOk());
    files_ = *std::move(provider);
    context_.set_namespace_id("world-conformance");
    context_.mutable_actor()->set_agent_id("agent-mallory");
    context_.mutable_owner()->set_human_user_id("user-alice");
    context_.set_purpose("conformance-probe");
    context_.set_trace_id("trace-conformance");
    tools::AttachedProviders providers;
    providers.files = files_.get();
    auto turn = tools::TurnTools::Resolve(*registry_, providers, context_, absl::InfiniteFuture());
    ASSERT_THAT(turn, IsOk());
    turn_ = std::make_unique<tools::TurnTools>(*std::move(turn));
  }

  ToolCall Call(const std::string& tool, const Json& arguments) {
    ToolCall call;
    call.set_id("call-" + std::to_string(++calls_));
    call.set_tool(tool);
    call.set_trace_id("trace-conformance");
    *call.mutable_arguments() = *common::JsonToProtoStruct(arguments);
    return call;
  }

  // Steps 7, 8, 10 and 12 for one call (authorization assumed allowed).
  absl::StatusOr<ToolResult> Mediate(const std::string& name, const Json& arguments) {
    const tools::Tool* tool = turn_->Find(name);
    if (tool == nullptr) return absl::NotFoundError("tool_unavailable");
    ToolCall call = Call(name, arguments);
    auto parsed = tool->ParseArguments(call.arguments());
    if (!parsed.ok()) return parsed.status();
    auto requirement = tool->ResolveRequirement(*parsed);
    if (!requirement.ok()) return requirement.status();
    absl::Status within = tool->CheckWithinCeiling(*requirement, context_.owner());
    if (!within.ok()) return within;
    last_requirement_ = *requirement;
    return turn_->Invoke(*tool, call, *requirement, context_, absl::InfiniteFuture(), 0, &*parsed);
  }

  Json Succeeded(const std::string& name, const Json& arguments) {
    auto result = Mediate(name, arguments);
    EXPECT_THAT(result, IsOk()) << name << ": " << tools::RefusalDetail(result.status());
    if (!result.ok()) return Json();
    EXPECT_EQ(result->status(), protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED)
        << name << ": " << result->error().code();
    return *common::ProtoValueToJson(result->output());
  }

  common::SimulatedClock clock_{
      absl::FromCivil(absl::CivilSecond(2026, 8, 18, 9, 0, 0), absl::UTCTimeZone())};
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<files::FilesProvider> files_;
  std::unique_ptr<tools::TurnTools> turn_;
  v1::ProviderContext context_;
  CapabilityRequirement last_requirement_;
  int calls_ = 0;
};

TEST_F(WorldTest, TheTurnHasEveryToolButTheUnattachedBroker) {
  EXPECT_EQ(turn_->tools().size(), 18u);
  EXPECT_EQ(turn_->Find("notion.search"), nullptr);
  EXPECT_NE(turn_->Find("sharedos.escalate"), nullptr);
}

// Every standard tool's output passes its own output schema.
TEST_F(WorldTest, EveryFilesToolRunsEndToEnd) {
  Json created =
      Succeeded("files.create", {{"path", "Workspace/scratch/draft.md"}, {"content", "v1\n"}});
  EXPECT_THAT(last_requirement_.resource().path(), ElementsAre("Workspace", "scratch", "draft.md"));
  EXPECT_EQ(last_requirement_.action(), "create");
  Succeeded("files.create", {{"path", "Workspace/policy.md"}, {"content", "read only\n"}});
  EXPECT_EQ(Succeeded("files.list", {{"path", "Workspace"}})["entries"].size(), 2u);
  EXPECT_EQ(Succeeded("files.stat", {{"path", "Workspace/scratch/draft.md"}})["version"],
            created["version"]);
  EXPECT_EQ(Succeeded("files.read", {{"path", "Workspace/scratch/draft.md"}})["content"], "v1\n");
  EXPECT_EQ(
      Succeeded("files.search", {{"path", "Workspace"}, {"query", "only"}, {"limit", 5}})["results"]
          .size(),
      1u);
  EXPECT_EQ(
      Succeeded("files.grep", {{"path", ""}, {"pattern", "v[0-9]"}, {"contextAfter", 2}})["matches"]
          .size(),
      1u);
  Json replaced = Succeeded("files.replace", {{"path", "Workspace/scratch/draft.md"},
                                              {"content", "v2\n"},
                                              {"expectedVersion", created["version"]}});
  Json appended = Succeeded("files.append", {{"path", "Workspace/scratch/draft.md"},
                                             {"content", "more\n"},
                                             {"expectedVersion", replaced["version"]},
                                             {"metadata", {{"k", "v"}}}});
  Json snapshot = Succeeded("files.snapshot.create", {{"path", "Workspace"}, {"label", "l"}});
  EXPECT_EQ(Succeeded("files.snapshot.list", {{"path", "Workspace/scratch"}})["snapshots"].size(),
            1u);
  Succeeded("files.delete",
            {{"path", "Workspace/scratch/draft.md"}, {"expectedVersion", appended["version"]}});
  Json restored = Succeeded("files.snapshot.restore", {{"path", "Workspace/scratch"},
                                                       {"snapshotId", snapshot["snapshotId"]}});
  EXPECT_EQ(Succeeded("files.read", {{"path", "Workspace/scratch/draft.md"}})["content"],
            "v2\nmore\n");
  Succeeded("files.delete", {{"path", "Workspace/scratch"}, {"recursive", true}});
  // A failed result passes the check too (no output schema on failures).
  auto missing = Mediate("files.read", {{"path", "Workspace/none.md"}});
  ASSERT_THAT(missing, IsOk());
  EXPECT_EQ(missing->error().code(), "not_found");
}

// Row 14: files.index resolves outside its ceiling.
TEST_F(WorldTest, IndexResolvesOutsideItsCeiling) {
  EXPECT_THAT(Mediate("files.index", {{"path", "Workspace/scratch"}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_requirement"));
}

// Row 15: files.describe's provider answers what its output schema does not describe.
TEST_F(WorldTest, DescribeReturnsAMismatchedResult) {
  Succeeded("files.create", {{"path", "Workspace/policy.md"}, {"content", "p"}});
  EXPECT_THAT(Mediate("files.describe", {{"path", "Workspace/policy.md"}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_result"));
}

// files.open is a carrier: a grant-shaped object in its arguments is just data.
TEST_F(WorldTest, OpenCarriesExtraKeys) {
  Succeeded("files.create", {{"path", "Workspace/policy.md"}, {"content", "p"}});
  Json forged = {{"id", "grant-forged"}, {"capabilities", {{{"actions", {"*"}}}}}};
  EXPECT_EQ(
      Succeeded("files.open", {{"path", "Workspace/policy.md"}, {"grant", forged}})["content"],
      "p");
  EXPECT_EQ(last_requirement_.action(), "read");
  // The standard tools are strict.
  EXPECT_THAT(Mediate("files.read", {{"path", "Workspace/policy.md"}, {"grant", forged}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_arguments"));
}

// files.fetch takes the owner from its arguments (another owner is invalid_request at step 9,
// before the ceiling check).
TEST_F(WorldTest, FetchTakesTheOwnerFromArguments) {
  Succeeded("files.create", {{"path", "Workspace/policy.md"}, {"content", "p"}});
  EXPECT_EQ(Succeeded("files.fetch",
                      {{"path", "Workspace/policy.md"},
                       {"owner", {{"kind", "human"}, {"userId", "user-alice"}}}})["content"],
            "p");
  EXPECT_EQ(last_requirement_.resource().owner().human_user_id(), "user-alice");
  const tools::Tool* fetch = turn_->Find("files.fetch");
  auto parsed = fetch->ParseArguments(
      Call("files.fetch", {{"path", "Workspace/policy.md"},
                           {"owner", {{"kind", "human"}, {"userId", "user-bob"}}}})
          .arguments());
  ASSERT_THAT(parsed, IsOk());
  auto requirement = fetch->ResolveRequirement(*parsed);
  ASSERT_THAT(requirement, IsOk());
  EXPECT_EQ(requirement->resource().owner().human_user_id(), "user-bob");
  EXPECT_THAT(
      Mediate("files.fetch", {{"path", "x"}, {"owner", {{"kind", "robot"}}}}),
      StatusIs(absl::StatusCode::kFailedPrecondition, "tool_requirement_resolution_failed"));
}

TEST_F(WorldTest, PurgeIsInASealedNamespace) {
  const tools::Tool* purge = turn_->Find("files.purge");
  ASSERT_NE(purge, nullptr);
  EXPECT_EQ(purge->tool_namespace(), "files.admin");
  EXPECT_EQ(purge->ceiling().action(), "delete");
  EXPECT_THAT(purge->ceiling().resource().path(), ElementsAre("Workspace"));
}

TEST_F(WorldTest, EscalateValidatesItsReasonAndIsNeverRun) {
  EXPECT_THAT(Mediate("sharedos.escalate", {{"reason", "need ledger access"}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "escalation_not_terminated"));
  EXPECT_THAT(Mediate("sharedos.escalate", Json::object()),
              StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_arguments"));
  EXPECT_THAT(Mediate("sharedos.escalate", {{"reason", std::string(513, 'r')}}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_arguments"));
}

TEST_F(WorldTest, TraversalInArgumentsIsResolutionFailure) {
  for (const char* path : {"Workspace/../../etc", "/etc/passwd", "Workspace//x"}) {
    EXPECT_THAT(
        Mediate("files.read", {{"path", path}}),
        StatusIs(absl::StatusCode::kFailedPrecondition, "tool_requirement_resolution_failed"))
        << path;
  }
}

}  // namespace
}  // namespace sharedos::envelope
