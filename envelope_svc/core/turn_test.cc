#include "envelope_svc/core/turn.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/tools/turn_tools.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::testing::ElementsAre;
using ::testing::SizeIs;

const absl::Time kStart = absl::FromUnixSeconds(1786438800);

TEST(ValuesTest, BuildEventDataAndErrors) {
  const google::protobuf::Value data =
      values::Object({{"code", values::Str("x")}, {"n", values::Num(2)}});
  ASSERT_TRUE(data.has_struct_value());
  EXPECT_EQ(data.struct_value().fields().at("code").string_value(), "x");
  EXPECT_EQ(data.struct_value().fields().at("n").number_value(), 2);
  EXPECT_TRUE(values::Object({}).has_struct_value());
  EXPECT_EQ(values::FromJson(nlohmann::json::array({"a"})).list_value().values(0).string_value(),
            "a");

  const pb::ProtocolError error = values::CodeError("turn_cancelled", /*retryable=*/true);
  EXPECT_EQ(error.code(), "turn_cancelled");
  EXPECT_FALSE(error.message().empty());
  EXPECT_TRUE(error.retryable());
  EXPECT_FALSE(values::CodeError("turn_cancelled").retryable());

  EXPECT_EQ(values::TimestampOf(kStart).seconds(), 1786438800);
  EXPECT_EQ(values::TimestampOf(absl::InfiniteFuture()).seconds(), 0);
}

TEST(RuntimeManifestTest, NamesTheTurnsRuntime) {
  const RuntimeManifest manifest;
  EXPECT_EQ(manifest.IdOf(v1::RUNTIME_DRIVER), "sharedos.grpc-driver");
  EXPECT_EQ(manifest.IdOf(v1::RUNTIME_MCP), "sharedos.mcp-harness");
  const auto fields = manifest.ToValue(v1::RUNTIME_MCP).struct_value().fields();
  EXPECT_EQ(fields.at("id").string_value(), "sharedos.mcp-harness");
  EXPECT_EQ(fields.at("version").string_value(), "1.0.0");
  EXPECT_EQ(fields.at("protocolVersion").string_value(), "1");
}

TEST(TurnTest, EmitNumbersAndStampsEvents) {
  Turn turn;
  turn.request.set_execution_id("exec-1");
  turn.context.set_trace_id("trace-1");
  absl::MutexLock lock(&turn.mu);
  turn.Emit("turn.started", values::Object({}), kStart);
  turn.Emit("tool.requested", values::Object({{"callId", values::Str("c")}}),
            kStart + absl::Seconds(1));
  ASSERT_THAT(turn.events, SizeIs(2));
  for (int i = 0; i < 2; ++i) {
    const pb::ExecutionEvent& event = turn.events[i];
    EXPECT_EQ(event.sequence(), i);
    EXPECT_EQ(event.version(), "1");
    EXPECT_EQ(event.execution_id(), "exec-1");
    EXPECT_EQ(event.trace_id(), "trace-1");
    EXPECT_FALSE(event.event_id().empty());
  }
  EXPECT_NE(turn.events[0].event_id(), turn.events[1].event_id());
  EXPECT_EQ(turn.events[1].type(), "tool.requested");
  EXPECT_EQ(turn.events[1].occurred_at().seconds(), 1786438801);
  EXPECT_EQ(turn.events[1].data().struct_value().fields().at("callId").string_value(), "c");
}

// The authorities described to a turn (docs/adr/0018): once per id, the newest 64 kept.
TEST(TurnTest, DescribedAuthoritiesAreKeptOncePerIdAndBounded) {
  Turn turn;
  absl::MutexLock lock(&turn.mu);
  auto request = [](int i) {
    pb::CapabilityRequest described;
    described.set_id(absl::StrCat("capreq-", i));
    return described;
  };
  for (int i = 0; i < 70; ++i) turn.Describe(request(i));
  ASSERT_THAT(turn.described, SizeIs(Turn::kMaxDescribed));
  EXPECT_EQ(turn.Described("capreq-5"), nullptr);  // the oldest went first
  ASSERT_NE(turn.Described("capreq-6"), nullptr);
  EXPECT_EQ(turn.Described("capreq-6")->id(), "capreq-6");
  // Described again, an id moves to the newest instead of taking a second place.
  turn.Describe(request(6));
  EXPECT_THAT(turn.described, SizeIs(Turn::kMaxDescribed));
  EXPECT_EQ(turn.described.back().id(), "capreq-6");
  turn.Describe(request(70));
  EXPECT_NE(turn.Described("capreq-6"), nullptr);
  EXPECT_EQ(turn.Described("capreq-7"), nullptr);
}

TEST(TurnTest, SafeToRetryUntilANonRepeatableCallMayHaveHadAnEffect) {
  Turn turn;
  absl::MutexLock lock(&turn.mu);
  EXPECT_TRUE(turn.SafeToRetry());
  turn.in_flight_unrepeatable = 1;
  EXPECT_FALSE(turn.SafeToRetry());
  turn.in_flight_unrepeatable = 0;
  turn.unrepeatable_effect = true;
  EXPECT_FALSE(turn.SafeToRetry());
}

// A turn whose effective catalogue is files.read, files.peek withheld (no_matching_grant) and
// files.create withheld (host_policy_denied) at discovery, tool namespaces as the test context
// enables them (files, sharedos).
class TurnOfferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = testing::TestRegistry();
    providers_.files = &files_;
    turn_.context = testing::TestExecutionRequest({}).context();
    absl::StatusOr<tools::TurnTools> resolved = tools::TurnTools::Resolve(
        *registry_, providers_, v1::ProviderContext(), absl::InfiniteFuture());
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    turn_.tools.emplace(*std::move(resolved));
    turn_.offered.insert(turn_.tools->Find("files.read"));
    turn_.withheld.emplace(turn_.tools->Find("files.peek"), Turn::Withheld{"no_matching_grant"});
    turn_.withheld.emplace(turn_.tools->Find("files.create"), Turn::Withheld{"host_policy_denied"});
    absl::MutexLock lock(&turn_.mu);
    turn_.namespaces = NamespaceSelection(turn_.context.enabled_tool_namespaces());
  }

  std::string CauseOf(absl::string_view name) {
    absl::MutexLock lock(&turn_.mu);
    return std::string(turn_.OfferOf(name).cause);
  }
  void Update(std::vector<std::string> enable, std::vector<std::string> disable) {
    absl::MutexLock lock(&turn_.mu);
    turn_.namespaces.Update(enable, disable);
  }

  std::unique_ptr<tools::ToolRegistry> registry_;
  testing::FakeToolProvider files_{"files"};
  tools::AttachedProviders providers_;
  Turn turn_;
};

TEST(TurnTest, BeforeItsToolsAreResolvedATurnOffersNothing) {
  Turn turn;
  absl::MutexLock lock(&turn.mu);
  EXPECT_FALSE(turn.Offers("files.read"));
  EXPECT_EQ(turn.OfferOf("files.read").cause, "not_registered");
  EXPECT_EQ(turn.OfferOf("files.read").tool, nullptr);
}

// Every answer the envelope's catalogue refusal, the mediator's registered and namespace steps
// and admission gave, from the one check.
TEST_F(TurnOfferTest, OneCheckSaysWhetherAndWhyATurnOffersATool) {
  absl::MutexLock lock(&turn_.mu);
  const Turn::Offer read = turn_.OfferOf("files.read");
  EXPECT_TRUE(read.offered());
  EXPECT_EQ(read.tool, turn_.tools->Find("files.read"));
  EXPECT_EQ(read.withheld, nullptr);
  EXPECT_EQ(turn_.OfferOf("no.such.tool").cause, "not_registered");
  EXPECT_EQ(turn_.OfferOf("host.echo").cause, "not_registered");  // its provider is absent
  EXPECT_EQ(turn_.OfferOf("notes.get").cause, "namespace_disabled");
  EXPECT_EQ(turn_.OfferOf("notes.get").withheld, nullptr);
  const Turn::Offer peek = turn_.OfferOf("files.peek");
  EXPECT_EQ(peek.cause, "no_matching_grant");
  ASSERT_NE(peek.withheld, nullptr);
  EXPECT_EQ(peek.withheld->code, "no_matching_grant");
  EXPECT_EQ(turn_.OfferOf("files.create").cause, "host_policy_denied");
  EXPECT_EQ(turn_.OfferOf("files.fixed").cause, "not_offered");
  EXPECT_EQ(turn_.OfferOf("files.fixed").withheld, nullptr);
  EXPECT_TRUE(turn_.Offers("files.read"));
  EXPECT_FALSE(turn_.Offers("files.fixed"));
}

// The selection in force, not the context's: a namespace turned off mid-turn refuses its tools
// namespace_disabled (before any discovery verdict), turned on again they are offered as before.
TEST_F(TurnOfferTest, TheSelectionInForceDecides) {
  Update({}, {"files"});
  EXPECT_EQ(CauseOf("files.read"), "namespace_disabled");
  EXPECT_EQ(CauseOf("files.peek"), "namespace_disabled");
  {
    absl::MutexLock lock(&turn_.mu);
    EXPECT_EQ(turn_.OfferOf("files.peek").withheld, nullptr);
  }
  Update({"files"}, {});
  EXPECT_EQ(CauseOf("files.read"), "");
  EXPECT_EQ(CauseOf("files.peek"), "no_matching_grant");
}

// Enabling a namespace grants nothing: its tools were never discovered for this turn.
TEST_F(TurnOfferTest, ANamespaceTurnedOnAfterOpenTurnOffersNothingNew) {
  Update({"notes"}, {});
  EXPECT_EQ(CauseOf("notes.get"), "not_offered");
}

TEST(NamespaceSelectionTest, UpdatesAndListsInCodeUnitOrder) {
  NamespaceSelection selection(std::vector<std::string>{"sharedos", "files"});
  EXPECT_TRUE(selection.Enables("files"));
  EXPECT_FALSE(selection.Enables("notes"));
  selection.Update(std::vector<std::string>{"notes"}, std::vector<std::string>{"files"});
  EXPECT_FALSE(selection.Enables("files"));
  EXPECT_THAT(selection.names(), ElementsAre("notes", "sharedos"));
}

}  // namespace
}  // namespace sharedos::envelope::core
