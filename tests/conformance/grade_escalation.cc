#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
namespace gv1 = ::sharedos::grantstore::v1;
using ::google::protobuf::util::MessageDifferencer;
using nlohmann::json;

void GradeEscalation(int n, const Turn& turn, Grading& grading) {
  const json& expect = turn.expect_turn;
  if (!expect.is_object()) return;
  const RowRun& run = grading.run;
  Deployment& deployment = grading.deployment;
  const std::string& namespace_id = grading.namespace_id;
  std::vector<std::string>& turn_failures = grading.turn_failures;
  std::vector<const pb::AuditEvent*> ended;
  const pb::AuditEvent* escalation = nullptr;
  for (const pb::AuditEvent& event : grading.records[n]) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) ended.push_back(&event);
    if (event.type() == pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED) escalation = &event;
  }
  if (expect.contains("escalationAudited")) {
    const bool want = expect["escalationAudited"];
    if (want != (escalation != nullptr)) {
      turn_failures.push_back(
          absl::StrCat("turn ", n, ": escalation.requested ", escalation ? "present" : "absent"));
    }
    if (want && expect.value("escalationIdReturned", false)) {
      // The host learns which escalation its turn created (issue 16 §5).
      std::optional<gv1::EscalationRecord> stored;
      if (!StoredEscalation(deployment, namespace_id, turn.execution_id, &stored).ok() ||
          !stored.has_value()) {
        turn_failures.push_back(absl::StrCat("turn ", n, ": no escalation stored"));
      } else if (stored->escalation_id() != turn.escalation_id) {
        turn_failures.push_back(absl::StrCat("turn ", n, ": FinishTurn answered escalation \"",
                                             turn.escalation_id, "\", stored ",
                                             stored->escalation_id()));
      }
    }
    if (!want) {
      std::optional<gv1::EscalationRecord> stored;
      if (!StoredEscalation(deployment, namespace_id, turn.execution_id, &stored).ok()) {
        turn_failures.push_back("escalations cannot be listed");
      } else if (stored.has_value()) {
        turn_failures.push_back(absl::StrCat("turn ", n, ": an escalation was stored"));
      }
    }
  }
  // The MCP latch's count and the harness's own outcome, from the result's metadata.
  const auto& metadata = turn.result.metadata().fields();
  if (expect.contains("callsAfterEscalation")) {
    auto it = metadata.find("callsAfterEscalation");
    const int want = expect["callsAfterEscalation"];
    if (it == metadata.end() || it->second.number_value() != want) {
      turn_failures.push_back(absl::StrCat("turn ", n, ": callsAfterEscalation is not ", want));
    }
  }
  if (expect.contains("harnessOutcome")) {
    auto it = metadata.find("harnessOutcome");
    if (it == metadata.end() || it->second.string_value() != Str(expect, "harnessOutcome")) {
      turn_failures.push_back(absl::StrCat("turn ", n, ": harnessOutcome not kept"));
    }
  }
  // What the harness did after it asked is in the tamper-evident record (docs/adr/0018):
  // turn.ended carries harnessOutcome and callsAfterEscalation.
  if (expect.value("endedRecordsHarness", false)) {
    const auto* recorded = ended.size() == 1 ? &ended[0]->metadata().fields() : nullptr;
    auto calls = recorded ? recorded->find("callsAfterEscalation") : metadata.end();
    auto outcome = recorded ? recorded->find("harnessOutcome") : metadata.end();
    if (recorded == nullptr || calls == recorded->end() || outcome == recorded->end() ||
        calls->second.number_value() != expect.value("callsAfterEscalation", 0) ||
        outcome->second.string_value() != Str(expect, "harnessOutcome")) {
      turn_failures.push_back(absl::StrCat(
          "turn ", n, ": turn.ended does not record harnessOutcome and callsAfterEscalation"));
    }
  }
  // C1: the escalation names the authority the denial described, by its capreq- id, in the
  // answer, the audited escalation.requested and the stored record.
  const std::string id_from = Str(expect, "requestedAuthorityIdFrom");
  if (!id_from.empty()) {
    std::string want;
    for (const Attempt& attempt : run.attempts) {
      if (attempt.id == id_from && attempt.details.is_object() &&
          attempt.details.contains("requiredAuthority")) {
        want = Str(attempt.details["requiredAuthority"], "id");
      }
    }
    std::optional<gv1::EscalationRecord> stored;
    (void)StoredEscalation(deployment, namespace_id, turn.execution_id, &stored);
    const std::string answered = turn.result.escalation().requested_authority().id();
    const std::string audited = escalation != nullptr ? escalation->requested_authority().id() : "";
    const std::string kept =
        stored.has_value() ? stored->escalation().requested_authority().id() : "";
    if (!absl::StartsWith(want, "capreq-")) {
      turn_failures.push_back(
          absl::StrCat("turn ", n, ": ", id_from, " named no required authority (capreq-)"));
    } else if (answered != want || audited != want || kept != want ||
               stored->escalation().requested_authority().capabilities().empty()) {
      turn_failures.push_back(absl::StrCat("turn ", n, ": the escalation names \"", answered,
                                           "\" (audited \"", audited, "\", stored \"", kept,
                                           "\"), not the denial's \"", want, "\""));
    }
  }
  // The escalation names exactly the authority the denial described (ADR 0019): the same
  // CapabilityRequest (its capreq- id included) in the turn's answer, in the audited
  // escalation.requested, and on the escalation record the grant store holds.
  const std::string from = Str(expect, "requestedAuthorityFrom");
  if (!from.empty()) {
    pb::CapabilityRequest required;
    bool named = false;
    for (const Attempt& attempt : run.attempts) {
      if (attempt.id == from && attempt.details.is_object() &&
          attempt.details.contains("requiredAuthority")) {
        named = google::protobuf::util::JsonStringToMessage(
                    attempt.details["requiredAuthority"].dump(), &required)
                    .ok();
      }
    }
    std::optional<gv1::EscalationRecord> stored;
    const bool listed = StoredEscalation(deployment, namespace_id, turn.execution_id, &stored).ok();
    const pb::CapabilityRequest* answered = &turn.result.escalation().requested_authority();
    const pb::CapabilityRequest* audited =
        escalation != nullptr ? &escalation->requested_authority() : nullptr;
    const pb::CapabilityRequest* kept =
        stored.has_value() ? &stored->escalation().requested_authority() : nullptr;
    // requested_at is minted again when the escalation is recorded (semantics §10.2: it is
    // outside the id); every other field must be the denial's. Empty: equal.
    auto differs = [&](const char* where, const pb::CapabilityRequest* other) -> std::string {
      if (other == nullptr) return absl::StrCat(where, ": none");
      std::string diff;
      MessageDifferencer differ;
      differ.IgnoreField(pb::CapabilityRequest::descriptor()->FindFieldByName("requested_at"));
      differ.ReportDifferencesToString(&diff);
      if (differ.Compare(*other, required)) return "";
      return absl::StrCat(where, " \"", other->id(), "\" ", diff);
    };
    if (!named || !absl::StartsWith(required.id(), "capreq-")) {
      turn_failures.push_back(
          absl::StrCat("turn ", n, ": ", from, " named no required authority (capreq-)"));
    } else if (!listed) {
      turn_failures.push_back("escalations cannot be listed");
    } else {
      std::vector<std::string> wrong;
      for (std::string difference :
           {differs("answered", answered), differs("audited", audited), differs("stored", kept)}) {
        if (!difference.empty()) wrong.push_back(std::move(difference));
      }
      if (!wrong.empty()) {
        turn_failures.push_back(absl::StrCat("turn ", n, ": the requested authority is not ",
                                             "the denial's \"", required.id(),
                                             "\": ", absl::StrJoin(wrong, "; ")));
      }
    }
  }
}

}  // namespace sharedos::conformance
