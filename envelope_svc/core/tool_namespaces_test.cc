// The availability plane of a turn (tool_namespaces.h) through the TurnEngine: listing, turning a
// namespace off mid-session (the next call is tool_unavailable / namespace_disabled, refused by
// the envelope's one offered check, as a tool of a namespace off at OpenTurn is — docs/adr/0024),
// turning it on again (grants nothing new: still decided), and the bounds.
#include "envelope_svc/core/tool_namespaces.h"

#include <string>
#include <vector>

#include "common/status/status_matchers.h"
#include "envelope_svc/core/turn_engine_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core::testing {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

class ToolNamespacesTest : public TurnEngineTest {
 protected:
  absl::StatusOr<v1::UpdateToolNamespacesResponse> Update(const std::string& turn_id,
                                                          std::vector<std::string> enable,
                                                          std::vector<std::string> disable) {
    v1::UpdateToolNamespacesRequest request;
    request.set_turn_id(turn_id);
    for (std::string& name : enable) request.add_enable(std::move(name));
    for (std::string& name : disable) request.add_disable(std::move(name));
    return engine_->UpdateToolNamespaces(request, scope_);
  }
};

TEST_F(ToolNamespacesTest, ListsEveryNamespaceOfTheTurnsToolsAndWhetherItIsEnabled) {
  const std::string turn = OpenRunning();
  v1::ListToolNamespacesRequest request;
  request.set_turn_id(turn);
  absl::StatusOr<v1::ListToolNamespacesResponse> listed =
      engine_->ListToolNamespaces(request, scope_);
  ASSERT_THAT(listed.status(), IsOk());
  std::vector<std::string> names;
  for (const auto& descriptor : listed->namespaces()) {
    names.push_back(descriptor.namespace_() + (descriptor.enabled() ? "+" : "-"));
    EXPECT_GE(descriptor.tool_count(), 1);
    EXPECT_FALSE(descriptor.sources().empty());
  }
  EXPECT_THAT(names, ElementsAre("files+", "notes-", "sharedos+"));
  EXPECT_EQ(listed->summary().total(), 3);
  EXPECT_EQ(listed->summary().enabled(), 2);
  EXPECT_EQ(listed->summary().disabled(), 1);
  std::vector<pb::AuditEvent> audited = Audited(pb::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_CATALOG_LISTED);
  ASSERT_THAT(audited, SizeIs(1));
  EXPECT_EQ(audited[0].metadata().fields().at("totalNamespaces").number_value(), 3);
  EXPECT_EQ(audited[0].metadata().fields().at("enabledNamespaces").number_value(), 2);
}

TEST_F(ToolNamespacesTest, ANamespaceTurnedOffMidSessionRefusesItsToolsAtTheNextCall) {
  const std::string turn = OpenRunning();
  ASSERT_EQ(Call(turn, "files.read", R"({"path": "a.txt"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  absl::StatusOr<v1::UpdateToolNamespacesResponse> updated = Update(turn, {}, {"files"});
  ASSERT_THAT(updated.status(), IsOk());
  EXPECT_THAT(updated->enabled_namespaces(), ElementsAre("sharedos"));
  const int authorized =
      authorizer_.calls(authorizer::client::FakeAuthorizerClient::Method::kAuthorize);
  absl::StatusOr<v1::InvokeToolResponse> refused =
      TryCall(turn, "files.read", R"({"path": "a.txt"})", std::nullopt, "call-2");
  ASSERT_THAT(refused.status(), IsOk());
  EXPECT_EQ(refused->result().status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(refused->result().error().code(), "tool_unavailable");
  bool found = false;
  for (const pb::AuditEvent& event : Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED)) {
    if (event.operation_id() != "call-2") continue;
    found = true;
    EXPECT_EQ(event.cause(), "namespace_disabled");
    EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_ENVELOPE);
  }
  EXPECT_TRUE(found);
  // Refused before the kernel: no decision was asked for.
  EXPECT_EQ(authorizer_.calls(authorizer::client::FakeAuthorizerClient::Method::kAuthorize),
            authorized);
  std::vector<pb::AuditEvent> selection =
      Audited(pb::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_SELECTION_UPDATED);
  ASSERT_THAT(selection, SizeIs(1));
  ASSERT_EQ(selection[0].metadata().fields().at("enabledNamespaces").list_value().values_size(), 1);
  // On again: the tool is decided as before.
  ASSERT_THAT(Update(turn, {"files"}, {}).status(), IsOk());
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a.txt"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
}

// A namespace off at OpenTurn and turned on later grants nothing: its tools were never discovered
// for this turn, so a call is refused not_offered (and before, namespace_disabled).
TEST_F(ToolNamespacesTest, ANamespaceTurnedOnAfterOpenTurnOffersNothingNew) {
  const std::string turn = OpenRunning();
  EXPECT_EQ(Call(turn, "notes.get").error().code(), "tool_unavailable");
  ASSERT_THAT(Update(turn, {"notes"}, {}).status(), IsOk());
  absl::StatusOr<v1::InvokeToolResponse> refused =
      TryCall(turn, "notes.get", "{}", std::nullopt, "call-2");
  ASSERT_THAT(refused.status(), IsOk());
  EXPECT_EQ(refused->result().error().code(), "tool_unavailable");
  std::vector<std::string> causes;
  for (const pb::AuditEvent& event : Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED)) {
    EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_ENVELOPE);
    causes.push_back(event.cause());
  }
  EXPECT_THAT(causes, ElementsAre("namespace_disabled", "not_offered"));
  EXPECT_THAT(Audited(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED), ::testing::IsEmpty());
}

TEST_F(ToolNamespacesTest, AMalformedUpdateIsInvalidArgumentNamingTheField) {
  const std::string turn = OpenRunning();
  absl::Status none = Update(turn, {}, {}).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument);
  absl::Status both = Update(turn, {"files"}, {"files"}).status();
  EXPECT_EQ(both.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(both.message()), HasSubstr("disable"));
  absl::Status blank = Update(turn, {" files"}, {}).status();
  EXPECT_EQ(blank.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(blank.message()), HasSubstr("enable[0]"));
  std::vector<std::string> many(65, "n");
  EXPECT_EQ(Update(turn, many, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(ToolNamespacesTest, AnEndedTurnHasNoSelectionToUpdate) {
  const std::string turn = OpenRunning();
  Cancel(turn);
  EXPECT_EQ(Update(turn, {}, {"files"}).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sharedos::envelope::core::testing
