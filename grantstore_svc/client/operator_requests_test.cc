#include "grantstore_svc/client/operator_requests.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::client {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
using ::testing::HasSubstr;

TEST(BuildAuditFilterTest, EmptyFieldsFilterOnNothing) {
  absl::StatusOr<av1::AuditFilter> filter = BuildAuditFilter(AuditFilterFields());
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_EQ(filter->ByteSizeLong(), 0u);
}

TEST(BuildAuditFilterTest, TurnsEveryFieldIntoItsFilter) {
  AuditFilterFields fields;
  fields.namespace_id = "ns";
  fields.trace = "t-1";
  fields.execution = "e-1";
  fields.reason = "no_grant";
  fields.type = "tool.invoked";
  fields.outcome = "denied";
  fields.source = "kernel";
  fields.actor = "agent:a";
  fields.since = "2026-08-11T10:00:00Z";
  fields.until = "2026-08-11T11:00:00Z";
  absl::StatusOr<av1::AuditFilter> filter = BuildAuditFilter(fields);
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_EQ(filter->namespace_id(), "ns");
  EXPECT_EQ(filter->trace_id(), "t-1");
  EXPECT_EQ(filter->execution_id(), "e-1");
  EXPECT_EQ(filter->reason(), "no_grant");
  EXPECT_EQ(filter->type(), protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  EXPECT_EQ(filter->outcome(), protocol::v1::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(filter->source(), protocol::v1::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(filter->actor().agent_id(), "a");
  EXPECT_EQ(filter->from().seconds(), 1786442400);
  EXPECT_EQ(filter->to().seconds(), 1786446000);
}

TEST(BuildAuditFilterTest, AControlPlaneTypeSetsItsOwnField) {
  AuditFilterFields fields;
  fields.type = "grant.issued";
  absl::StatusOr<av1::AuditFilter> filter = BuildAuditFilter(fields);
  ASSERT_TRUE(filter.ok()) << filter.status();
  EXPECT_EQ(filter->type(), protocol::v1::AUDIT_EVENT_TYPE_UNSPECIFIED);
  EXPECT_EQ(filter->control_plane_type(), av1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
}

TEST(BuildAuditFilterTest, RefusesABadValue) {
  AuditFilterFields fields;
  fields.actor = "robot:r";
  EXPECT_EQ(BuildAuditFilter(fields).status().code(), absl::StatusCode::kInvalidArgument);
  fields = AuditFilterFields();
  fields.since = "yesterday";
  EXPECT_EQ(BuildAuditFilter(fields).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(BuildResolveEscalationTest, NarrowsAsGiven) {
  ResolveEscalationFields fields;
  fields.id = "esc-1";
  fields.on_behalf = true;
  fields.expires_at = "2027-01-01T00:00:00Z";
  fields.max_uses = "2";
  fields.note = "ok";
  absl::StatusOr<gs::ResolveEscalationRequest> request =
      BuildResolveEscalation(fields, gs::ESCALATION_DECISION_APPROVE);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->escalation_id(), "esc-1");
  EXPECT_EQ(request->decision(), gs::ESCALATION_DECISION_APPROVE);
  EXPECT_TRUE(request->on_behalf_of_reviewer());
  EXPECT_EQ(request->narrowing().expires_at().seconds(), 1798761600);
  EXPECT_EQ(request->narrowing().max_uses(), 2);
  EXPECT_EQ(request->note(), "ok");
  EXPECT_FALSE(request->has_reviewer());
}

TEST(BuildResolveEscalationTest, NamesTheFieldAsItsCallerSpellsIt) {
  ResolveEscalationFields fields;
  fields.id = "esc-1";
  fields.max_uses = "0";
  EXPECT_THAT(BuildResolveEscalation(fields, gs::ESCALATION_DECISION_APPROVE).status().message(),
              HasSubstr("max_uses must be >= 1"));
  fields.field_prefix = "--";
  fields.max_uses = "many";
  absl::Status status = BuildResolveEscalation(fields, gs::ESCALATION_DECISION_DENY).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("--max_uses: \"many\" is not an integer"));
}

}  // namespace
}  // namespace sharedos::grantstore::client
