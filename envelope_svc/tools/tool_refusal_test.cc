#include "envelope_svc/tools/tool_refusal.h"

#include "absl/time/time.h"
#include "capability/reason_codes.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ToolRefusalTest, MessageIsTheCodeAndDetailRidesAside) {
  absl::Status refusal =
      ToolRefusal(capability::kInvalidToolArguments, "<root>[path]: \"secret\" too long");
  EXPECT_THAT(refusal, StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_arguments"));
  EXPECT_TRUE(IsToolRefusal(refusal));
  EXPECT_EQ(RefusalDetail(refusal), "<root>[path]: \"secret\" too long");
}

TEST(ToolRefusalTest, PlainStatusIsNotARefusal) {
  EXPECT_FALSE(IsToolRefusal(absl::FailedPreconditionError("invalid_tool_arguments")));
  EXPECT_FALSE(IsToolRefusal(absl::OkStatus()));
  EXPECT_EQ(RefusalDetail(absl::InternalError("x")), "");
}

TEST(ToolRefusalTest, ErrorCarriesFixedPhraseNeverTheDetail) {
  absl::Status refusal = ToolRefusal(capability::kInvalidToolArguments, "quoted secret value");
  protocol::v1::ProtocolError error = RefusalError(refusal);
  EXPECT_EQ(error.code(), "invalid_tool_arguments");
  EXPECT_EQ(error.message(), capability::CodeMessage(capability::kInvalidToolArguments));
  EXPECT_THAT(error.message(), Not(HasSubstr("secret")));
  EXPECT_FALSE(error.has_details());
  ASSERT_TRUE(error.has_retryable());
  EXPECT_FALSE(error.retryable());
}

TEST(ToolRefusalTest, EveryCodeHasItsOwnPhrase) {
  for (absl::string_view code :
       {capability::kInvalidToolArguments, capability::kToolRequirementResolutionFailed,
        capability::kInvalidToolRequirement, capability::kToolCatalogUnavailable,
        capability::kToolExecutionFailed, capability::kInvalidToolResult,
        capability::kEscalationNotTerminated}) {
    EXPECT_NE(capability::CodeMessage(code), capability::CodeMessage("something_else")) << code;
  }
}

TEST(ToolRefusalTest, NonRefusalBecomesExecutionFailedWithoutItsText) {
  protocol::v1::ProtocolError error = RefusalError(absl::InternalError("provider said: secret"));
  EXPECT_EQ(error.code(), "tool_execution_failed");
  EXPECT_THAT(error.message(), Not(HasSubstr("secret")));
}

TEST(ToolRefusalTest, ResultIsAFailedResultForTheCall) {
  protocol::v1::ToolCall call;
  call.set_id("call-1");
  call.set_tool("files.read");
  protocol::v1::ToolResult result = RefusalResult(
      call, ToolRefusal(capability::kInvalidToolResult, "x"), absl::FromUnixSeconds(1786957200));
  EXPECT_EQ(result.call_id(), "call-1");
  EXPECT_EQ(result.tool(), "files.read");
  EXPECT_EQ(result.status(), protocol::v1::TOOL_RESULT_STATUS_FAILED);
  EXPECT_EQ(result.error().code(), "invalid_tool_result");
  EXPECT_EQ(result.completed_at().seconds(), 1786957200);
}

}  // namespace
}  // namespace sharedos::envelope::tools
