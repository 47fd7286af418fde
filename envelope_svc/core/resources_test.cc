#include "envelope_svc/core/resources.h"

#include <string>
#include <vector>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "capability/reason_codes.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// A provider answering what it is told.
class ScriptedProvider : public resources::ResourceProviderInterface {
 public:
  absl::StatusOr<v1::ResourceResult> Invoke(const v1::ResourceInvokeRequest& request,
                                            absl::Time) override {
    invoked.push_back(request);
    if (!status.ok()) return status;
    v1::ResourceResult result = answer;
    if (result.operation_id() == "$operation") result.set_operation_id(request.operation_id());
    return result;
  }

  absl::Status status;
  v1::ResourceResult answer = [] {
    v1::ResourceResult result;
    result.set_operation_id("$operation");
    result.set_status(v1::RESOURCE_RESULT_STATUS_SUCCEEDED);
    result.mutable_output()->set_string_value("the secret output");
    return result;
  }();
  std::vector<v1::ResourceInvokeRequest> invoked;
};

class ResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_.set_namespace_id("world-a");
    context_.mutable_actor()->set_agent_id("alice");
    context_.mutable_authority()->set_human_user_id("owner");
    context_.mutable_owner()->set_human_user_id("owner");
    context_.set_purpose("plan");
    context_.set_trace_id("trace-1");
    authorizer::v1::OpenTurnAuthorityRequest open;
    *open.mutable_context() = context_;
    scope_.lease_id = authorizer_.OpenTurnAuthority(open, absl::Seconds(1))->lease_id();
    scope_.context = &context_;
  }

  ResourceInvoker Make(resources::ResourceProviderInterface* provider) {
    resources::ResourceProviders providers;
    if (provider != nullptr) providers["calendar"] = provider;
    return ResourceInvoker(authorizer_, audit_, providers, clock_, ResourceInvoker::Options());
  }

  static v1::InvokeResourceRequest Operation() {
    v1::InvokeResourceRequest operation;
    operation.set_turn_id("turn-1");
    operation.set_operation_id("op-1");
    operation.mutable_resource()->set_namespace_("calendar");
    operation.mutable_resource()->add_path("events");
    operation.set_action("read");
    operation.mutable_input()->set_string_value("the secret input");
    return operation;
  }

  // The one resource.invoked recorded (post-effect).
  pb::AuditEvent Invoked() {
    std::vector<pb::AuditEvent> invoked;
    for (const auto& recorded : audit_.recorded(pb::AUDIT_EVENT_TYPE_RESOURCE_INVOKED)) {
      EXPECT_FALSE(recorded.pre_effect);
      invoked.push_back(recorded.event);
    }
    EXPECT_THAT(invoked, SizeIs(1));
    return invoked.empty() ? pb::AuditEvent() : invoked.back();
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  authorizer::client::FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  pb::AccessContext context_;
  ResourceScope scope_;
};

TEST_F(ResourcesTest, AuthorizesTheResourceConsumingWithTheOwnerDefaultedThenRunsTheProvider) {
  ScriptedProvider provider;
  v1::ResourceResult result = Make(&provider).Invoke(scope_, Operation(), clock_.Now());
  EXPECT_EQ(result.status(), v1::RESOURCE_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(result.operation_id(), "op-1");
  EXPECT_EQ(result.output().string_value(), "the secret output");
  ASSERT_THAT(authorizer_.authorize_requests(), SizeIs(1));
  const authorizer::v1::AuthorizeRequest asked = authorizer_.authorize_requests()[0];
  EXPECT_EQ(asked.requirement().resource().namespace_(), "calendar");
  EXPECT_THAT(asked.requirement().resource().path(), ::testing::ElementsAre("events"));
  EXPECT_EQ(asked.requirement().resource().owner().human_user_id(), "owner");
  EXPECT_EQ(asked.requirement().action(), "read");
  EXPECT_TRUE(asked.consume());
  EXPECT_EQ(asked.operation_id(), "op-1");
  ASSERT_THAT(provider.invoked, SizeIs(1));
  EXPECT_EQ(provider.invoked[0].input().string_value(), "the secret input");
  EXPECT_EQ(provider.invoked[0].resource().owner().human_user_id(), "owner");
  EXPECT_EQ(provider.invoked[0].context().actor().agent_id(), "alice");
  pb::AuditEvent invoked = Invoked();
  EXPECT_EQ(invoked.outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_EQ(invoked.operation_id(), "op-1");
  EXPECT_EQ(invoked.resource().namespace_(), "calendar");
  EXPECT_EQ(invoked.action(), "read");
  EXPECT_EQ(invoked.grant_id(), "grant-files");
  EXPECT_EQ(invoked.source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(invoked.reason(), "");
  for (const auto& recorded : audit_.recorded()) {
    EXPECT_EQ(recorded.event.DebugString().find("the secret"), std::string::npos);
  }
}

TEST_F(ResourcesTest, WithoutAGrantIsNoMatchingGrantAndNothingRuns) {
  ScriptedProvider provider;
  authorizer_.DenyAuthorize("calendar", "events", "read", "no_matching_grant");
  v1::ResourceResult result = Make(&provider).Invoke(scope_, Operation(), clock_.Now());
  EXPECT_EQ(result.status(), v1::RESOURCE_RESULT_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), capability::kNoMatchingGrant);
  EXPECT_FALSE(result.error().retryable());
  EXPECT_THAT(provider.invoked, SizeIs(0));
  pb::AuditEvent invoked = Invoked();
  EXPECT_EQ(invoked.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(invoked.reason(), capability::kNoMatchingGrant);
  EXPECT_FALSE(invoked.fail_closed());
}

TEST_F(ResourcesTest, AnUnansweredAuthorizerIsAuthorityUnavailableFailClosed) {
  ScriptedProvider provider;
  authorizer_.FailMethod(authorizer::client::FakeAuthorizerClient::Method::kAuthorize,
                         absl::UnavailableError("down"));
  v1::ResourceResult result = Make(&provider).Invoke(scope_, Operation(), clock_.Now());
  EXPECT_EQ(result.status(), v1::RESOURCE_RESULT_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), capability::kAuthorityUnavailable);
  EXPECT_THAT(provider.invoked, SizeIs(0));
  pb::AuditEvent invoked = Invoked();
  EXPECT_TRUE(invoked.fail_closed());
  EXPECT_EQ(invoked.reason(), capability::kAuthorityUnavailable);
}

TEST_F(ResourcesTest, ADecisionsFailClosedFlagIsRecorded) {
  ScriptedProvider provider;
  authorizer_.DenyAuthorize("calendar", "events", "read", "usage_store_unavailable", true);
  v1::ResourceResult result = Make(&provider).Invoke(scope_, Operation(), clock_.Now());
  EXPECT_EQ(result.error().code(), capability::kUsageStoreUnavailable);
  EXPECT_TRUE(Invoked().fail_closed());
}

TEST_F(ResourcesTest, NoProviderForTheNamespaceIsResourceProviderNotFoundAfterTheDecision) {
  v1::ResourceResult result = Make(nullptr).Invoke(scope_, Operation(), clock_.Now());
  EXPECT_EQ(result.status(), v1::RESOURCE_RESULT_STATUS_FAILED);
  EXPECT_EQ(result.error().code(), capability::kResourceProviderNotFound);
  EXPECT_THAT(authorizer_.authorize_requests(), SizeIs(1));
  pb::AuditEvent invoked = Invoked();
  EXPECT_EQ(invoked.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(invoked.reason(), capability::kResourceProviderNotFound);
  EXPECT_EQ(invoked.grant_id(), "grant-files");
}

TEST_F(ResourcesTest, AProviderErrorIsResourceExecutionFailedWithoutItsText) {
  ScriptedProvider provider;
  provider.status = absl::UnavailableError("provider text never shown");
  v1::ResourceResult result = Make(&provider).Invoke(scope_, Operation(), clock_.Now());
  EXPECT_EQ(result.error().code(), capability::kResourceExecutionFailed);
  EXPECT_THAT(result.error().message(), ::testing::Not(HasSubstr("never shown")));
  EXPECT_EQ(Invoked().reason(), capability::kResourceExecutionFailed);
}

TEST_F(ResourcesTest, AMalformedOrMismatchedResultIsInvalidResourceResult) {
  ScriptedProvider provider;
  ResourceInvoker invoker = Make(&provider);
  provider.answer.set_operation_id("op-other");
  EXPECT_EQ(invoker.Invoke(scope_, Operation(), clock_.Now()).error().code(),
            capability::kInvalidResourceResult);
  provider.answer.set_operation_id("$operation");
  provider.answer.set_status(v1::RESOURCE_RESULT_STATUS_UNSPECIFIED);
  EXPECT_EQ(invoker.Invoke(scope_, Operation(), clock_.Now()).error().code(),
            capability::kInvalidResourceResult);
  provider.answer.set_status(v1::RESOURCE_RESULT_STATUS_FAILED);
  provider.answer.clear_error();
  EXPECT_EQ(invoker.Invoke(scope_, Operation(), clock_.Now()).error().code(),
            capability::kInvalidResourceResult);
}

TEST_F(ResourcesTest, AProvidersOwnFailureIsReturnedVerbatim) {
  ScriptedProvider provider;
  provider.answer.set_status(v1::RESOURCE_RESULT_STATUS_FAILED);
  provider.answer.clear_output();
  provider.answer.mutable_error()->set_code("calendar_busy");
  provider.answer.mutable_error()->set_message("Busy.");
  v1::ResourceResult result = Make(&provider).Invoke(scope_, Operation(), clock_.Now());
  EXPECT_EQ(result.error().code(), "calendar_busy");
  EXPECT_EQ(Invoked().reason(), "calendar_busy");
}

TEST_F(ResourcesTest, ValidationNamesTheField) {
  v1::InvokeResourceRequest operation = Operation();
  operation.set_operation_id("  ");
  EXPECT_THAT(ValidateResourceOperation(&operation),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("operation_id")));
  operation = Operation();
  operation.mutable_resource()->add_path("..");
  EXPECT_THAT(ValidateResourceOperation(&operation),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource.path")));
  operation = Operation();
  operation.set_action("");
  EXPECT_THAT(ValidateResourceOperation(&operation),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("action")));
  operation = Operation();
  operation.clear_resource();
  EXPECT_THAT(ValidateResourceOperation(&operation),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("resource")));
  operation = Operation();
  operation.set_action("  read ");
  EXPECT_TRUE(ValidateResourceOperation(&operation).ok());
  EXPECT_EQ(operation.action(), "read");
}

}  // namespace
}  // namespace sharedos::envelope::core
