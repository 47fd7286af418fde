#include "tests/conformance/row_run.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status/status_macros.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
namespace gv1 = ::sharedos::grantstore::v1;
using nlohmann::json;

std::string Str(const json& value, const char* key, const std::string& fallback) {
  auto it = value.find(key);
  return it != value.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string Pad(int row) { return absl::StrCat(row < 10 ? "0" : "", row); }

std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  context->set_wait_for_ready(true);
  return context;
}

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

std::string StatusName(pb::ToolResultStatus status) { return Word(status, "TOOL_RESULT_STATUS_"); }
std::string TurnStatusName(pb::ExecutionStatus status) { return Word(status, "EXECUTION_STATUS_"); }
std::string OutcomeName(pb::AuditOutcome outcome) { return Word(outcome, "AUDIT_OUTCOME_"); }
std::string SourceName(const pb::AuditEvent& event) {
  return event.has_source() ? Word(event.source(), "AUDIT_SOURCE_") : "";
}

absl::Status StoredEscalation(Deployment& deployment, const std::string& namespace_id,
                              const std::string& execution_id,
                              std::optional<gv1::EscalationRecord>* found) {
  found->reset();
  std::string page;
  do {
    gv1::ListEscalationsRequest list;
    list.set_namespace_id(namespace_id);
    list.set_page_token(page);
    gv1::ListEscalationsResponse listed;
    RETURN_IF_ERROR(FromGrpc(
        deployment.grants().ListEscalations(As(deployment.admin_token()).get(), list, &listed)));
    for (const gv1::EscalationRecord& record : listed.escalations()) {
      if (record.execution_id() == execution_id) *found = record;
    }
    page = listed.next_page_token();
  } while (!page.empty());
  return absl::OkStatus();
}

std::vector<pb::AuditEvent> ReadRecord(Deployment& deployment, const std::string& namespace_id,
                                       const std::string& trace_id, bool want_ended,
                                       bool want_escalation) {
  const absl::Time limit = absl::Now() + absl::Seconds(20);
  while (true) {
    std::vector<pb::AuditEvent> events;
    std::string page;
    bool ok = true;
    do {
      audit::v1::QueryRequest request;
      request.mutable_filter()->set_namespace_id(namespace_id);
      request.mutable_filter()->set_trace_id(trace_id);
      request.set_page_token(page);
      request.set_limit(500);
      audit::v1::QueryResponse response;
      grpc::Status status =
          deployment.audit().Query(As(deployment.admin_token()).get(), request, &response);
      if (!status.ok()) {
        ok = false;
        break;
      }
      for (const audit::v1::AuditRecord& record : response.records()) {
        events.push_back(record.event());
      }
      page = response.next_page_token();
    } while (!page.empty());
    bool ended = false, escalation = false;
    for (const pb::AuditEvent& event : events) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) ended = true;
      if (event.type() == pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED) escalation = true;
    }
    const bool complete = (ended || !want_ended) && (escalation || !want_escalation);
    if ((ok && complete) || absl::Now() > limit) return events;
    absl::SleepFor(absl::Milliseconds(50));
  }
}

}  // namespace sharedos::conformance
