#include "grantstore_svc/core/request_validation.h"

#include <string>

#include "absl/strings/escaping.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::core {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

TEST(RequestValidationTest, TrimsIdentifiersInPlace) {
  auto request = Parse<v1::LoadAuthorityRequest>(R"pb(
    namespace_id: "  world "
    actor { agent_id: " assistant" }
    authority { human_user_id: "alice  " }
  )pb");
  ASSERT_THAT(ValidateLoadAuthorityRequest(&request), IsOk());
  EXPECT_EQ(request.namespace_id(), "world");
  EXPECT_EQ(request.actor().agent_id(), "assistant");
  EXPECT_EQ(request.authority().human_user_id(), "alice");
}

TEST(RequestValidationTest, AbsentAddressesStayAbsent) {
  v1::LoadAuthorityRequest request;
  request.set_namespace_id("world");
  EXPECT_THAT(ValidateLoadAuthorityRequest(&request),
              StatusIs(absl::StatusCode::kInvalidArgument, "actor: required"));
  EXPECT_FALSE(request.has_actor());
  v1::ResolveEscalationRequest resolve;
  resolve.set_escalation_id("esc-1");
  resolve.set_decision(v1::ESCALATION_DECISION_DENY);
  // The decider is the authenticated principal: an absent reviewer is fine and stays absent.
  EXPECT_THAT(ValidateResolveEscalationRequest(&resolve), IsOk());
  EXPECT_FALSE(resolve.has_reviewer());
}

TEST(RequestValidationTest, UnknownFieldsAreNamedFromTheRequest) {
  v1::GetGrantRequest request;
  request.set_namespace_id("world");
  request.set_grant_id("g1");
  request.GetReflection()->MutableUnknownFields(&request)->AddVarint(77, 1);
  EXPECT_THAT(ValidateGetGrantRequest(&request),
              StatusIs(absl::StatusCode::kInvalidArgument, "request: unknown field 77"));
}

TEST(RequestValidationTest, BoundsOfThisApi) {
  auto list = Parse<v1::ListEscalationsRequest>(R"pb(namespace_id: "w" page_size: -1)pb");
  EXPECT_THAT(ValidateListEscalationsRequest(&list),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_size: must be within")));
  list.set_page_size(1000);
  EXPECT_THAT(ValidateListEscalationsRequest(&list), IsOk());
  list.set_status(static_cast<v1::EscalationRecordStatus>(9));
  EXPECT_THAT(ValidateListEscalationsRequest(&list),
              StatusIs(absl::StatusCode::kInvalidArgument, "status: unknown value 9"));

  v1::PutHostPolicyRequest put;
  put.mutable_policy()->set_namespace_id("w");
  put.mutable_policy()->set_version("v1");
  for (size_t i = 0; i <= kMaxHostPolicyRules; ++i) {
    auto* rule = put.mutable_policy()->add_rules();
    rule->set_id("r" + std::to_string(i));
    rule->set_resource_namespace("files");
    rule->set_scope(protocol::v1::SCOPE_EXACT);
  }
  EXPECT_THAT(ValidatePutHostPolicyRequest(&put),
              StatusIs(absl::StatusCode::kInvalidArgument, "policy.rules: more than 1024"));
  put.mutable_policy()->mutable_rules()->RemoveLast();
  EXPECT_THAT(ValidatePutHostPolicyRequest(&put), IsOk());

  auto consume =
      Parse<v1::TryConsumeRequest>(R"pb(namespace_id: "w" grant_id: "g" max_uses: -3)pb");
  EXPECT_THAT(ValidateTryConsumeRequest(&consume),
              StatusIs(absl::StatusCode::kInvalidArgument, "max_uses: must be positive"));
}

TEST(RequestValidationTest, DeriveAllowsNoCapabilitiesButChecksEachOne) {
  auto request = Parse<v1::DeriveGrantRequest>(R"pb(
    namespace_id: "w"
    parent_grant_id: "p"
    child {
      id: "c"
      subject { agent_id: "a" }
      issued_at { seconds: 1 }
    }
  )pb");
  EXPECT_THAT(ValidateDeriveGrantRequest(&request), IsOk());
  request.mutable_child()->add_capabilities();
  EXPECT_THAT(ValidateDeriveGrantRequest(&request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("child.capabilities[0].resource: required")));
}

TEST(RequestValidationTest, AResolutionNoteIsBoundedTrimmedAndFreeOfControlCharacters) {
  auto resolve = [](std::string note) {
    v1::ResolveEscalationRequest request;
    request.set_escalation_id("esc-1");
    request.set_decision(v1::ESCALATION_DECISION_DENY);
    request.set_note(std::move(note));
    return request;
  };
  // Allowed with either decision; trimmed; a newline inside is kept.
  v1::ResolveEscalationRequest request = resolve("  not this week,\nask again  \n");
  EXPECT_THAT(ValidateResolveEscalationRequest(&request), IsOk());
  EXPECT_EQ(request.note(), "not this week,\nask again");
  request = resolve("ok for one run");
  request.set_decision(v1::ESCALATION_DECISION_APPROVE);
  EXPECT_THAT(ValidateResolveEscalationRequest(&request), IsOk());
  // Exactly at the bound (UTF-16 units: "é" is one) passes; one more is refused, naming note.
  std::string at_bound;
  for (size_t i = 0; i < kMaxResolutionNoteLength; ++i) at_bound += "\xc3\xa9";
  request = resolve(at_bound);
  EXPECT_THAT(ValidateResolveEscalationRequest(&request), IsOk());
  request = resolve(at_bound + "x");
  EXPECT_THAT(ValidateResolveEscalationRequest(&request),
              StatusIs(absl::StatusCode::kInvalidArgument, "note: longer than 1000"));
  // Control characters other than LF: C0 (CR, TAB, NUL inside), DEL and C1.
  for (const std::string& bad : {std::string("a\rb"), std::string("a\tb"), std::string("a\0b", 3),
                                 std::string("a\x7f"
                                             "b"),
                                 std::string("a\xc2\x85"
                                             "b")}) {
    request = resolve(bad);
    EXPECT_THAT(ValidateResolveEscalationRequest(&request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("note: control character")))
        << absl::CEscape(bad);
  }
  request = resolve("\xff");
  EXPECT_THAT(ValidateResolveEscalationRequest(&request),
              StatusIs(absl::StatusCode::kInvalidArgument, "note: invalid UTF-8"));
  // U+00A0 (C2 A0) is text, not a control character.
  request = resolve(
      "a\xc2\xa0"
      "b");
  EXPECT_THAT(ValidateResolveEscalationRequest(&request), IsOk());
}

}  // namespace
}  // namespace sharedos::grantstore::core
