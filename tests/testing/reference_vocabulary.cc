#include "tests/testing/reference_vocabulary.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/validation/protocol.h"
#include "tests/testing/process.h"

namespace sharedos::testing {
namespace {

constexpr char kExcerptPath[] = "tests/testdata/reference_semantics_excerpt.md";
constexpr absl::string_view kTypesLead = "`AuditEventType` (newest stored contract):";
constexpr absl::string_view kTypesEnd = "(errors.md";

// The backticked tokens of `text`, in order.
std::vector<std::string> Backticked(absl::string_view text) {
  std::vector<std::string> out;
  std::vector<absl::string_view> parts = absl::StrSplit(text, '`');
  for (size_t i = 1; i < parts.size(); i += 2) out.emplace_back(parts[i]);
  return out;
}

bool IsCode(absl::string_view token) {
  if (token.empty() || !absl::ascii_islower(token[0])) return false;
  for (char c : token) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_') return false;
  }
  return true;
}

bool Known(const ReferenceVocabulary& vocabulary, const std::string& code) {
  if (vocabulary.codes.count(code) > 0) return true;
  for (const LocalCode& local : LocalCodes()) {
    if (code == local.code) return true;
  }
  return false;
}

}  // namespace

std::string SemanticsExcerpt(absl::string_view semantics) {
  const std::pair<absl::string_view, absl::string_view> kSections[] = {
      {"### 1.15 ", "### 1.16 "}, {"### 5.2 ", "### 5.3 "}, {"## 6. ", "### 6.11 "}};
  std::vector<absl::string_view> lines = absl::StrSplit(semantics, '\n');
  std::string out;
  for (const auto& [start, end] : kSections) {
    bool on = false;
    for (absl::string_view line : lines) {
      if (absl::StartsWith(line, start)) on = true;
      if (on && absl::StartsWith(line, end)) break;
      if (on) absl::StrAppend(&out, line, "\n");
    }
  }
  return out;
}

absl::StatusOr<ReferenceVocabulary> ParseReferenceVocabulary(absl::string_view excerpt) {
  ReferenceVocabulary vocabulary;
  const size_t lead = excerpt.find(kTypesLead);
  if (lead == absl::string_view::npos) {
    return absl::InvalidArgumentError("the reference text has no AuditEventType list");
  }
  absl::string_view types = excerpt.substr(lead + kTypesLead.size());
  types = types.substr(0, types.find(kTypesEnd));
  vocabulary.event_types = Backticked(types);
  // §5.2 and §6: everything from the "### 5.2 " heading on.
  const size_t codes_from = excerpt.find("### 5.2 ");
  if (codes_from != absl::string_view::npos) {
    for (std::string& token : Backticked(excerpt.substr(codes_from))) {
      if (IsCode(token)) vocabulary.codes.insert(std::move(token));
    }
  }
  return vocabulary;
}

absl::StatusOr<ReferenceVocabulary> LoadReferenceVocabulary(const char* argv0) {
  std::ifstream in(RunfilePath(kExcerptPath, argv0));
  if (!in) return absl::NotFoundError(absl::StrCat("runfile ", kExcerptPath, " not found"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseReferenceVocabulary(text.str());
}

std::string EventTypeEnumName(absl::string_view reference_name) {
  return absl::StrCat("AUDIT_EVENT_TYPE_",
                      absl::AsciiStrToUpper(absl::StrReplaceAll(reference_name, {{".", "_"}})));
}

const std::vector<LocalCode>& LocalCodes() {
  static const auto* const kCodes = new std::vector<LocalCode>{
      {"not_discoverable",
       "cause behind tool_unavailable for a tool discovery withheld; issue 16 §4 replaces it "
       "with the discovery code itself"},
      {"turn_ended", "cause behind turn_draining: the call named a turn that had already ended"},
      {"revocation_unavailable",
       "internal authority code (metadata.authority) of a failed live revocation source; "
       "collapses to authority_unavailable (semantics §6.1: 'also live-revocation outage')"},
      {"refusals_exhausted",
       "cause on turn.ended beside the code of the refusal that reached the turn's bound on "
       "refusals past its budget (ADR 0016); the reference leaves that count unbounded"},
      {"result_too_large",
       "cause behind tool_execution_failed for a result over its cap (issue 34); the reference "
       "bounds no tool result"},
  };
  return *kCodes;
}

std::vector<std::string> StrictReaderFindings(const ReferenceVocabulary& vocabulary,
                                              const protocol::v1::AuditEvent& event) {
  std::vector<std::string> findings;
  protocol::v1::AuditEvent copy = event;
  absl::Status valid = common::validation::ValidateAuditEvent(&copy, "event");
  if (!valid.ok()) findings.push_back(std::string(valid.message()));
  const std::string type_name = protocol::v1::AuditEventType_Name(event.type());
  bool reference_type = false;
  for (const std::string& name : vocabulary.event_types) {
    if (EventTypeEnumName(name) == type_name) reference_type = true;
  }
  if (!reference_type) {
    findings.push_back(absl::StrCat("event ", event.id(), ": type ", static_cast<int>(event.type()),
                                    " is not one of the reference's event types"));
  }
  for (const auto& [field, code] :
       {std::pair<const char*, const std::string&>{"reason", event.reason()},
        {"cause", event.cause()}}) {
    if (!code.empty() && !Known(vocabulary, code)) {
      findings.push_back(absl::StrCat("event ", event.id(), ": ", field, " \"", code,
                                      "\" is not in the reference's codes"));
    }
  }
  return findings;
}

std::vector<std::string> StrictReaderFindings(const ReferenceVocabulary& vocabulary,
                                              const audit::v1::AuditRecord& record) {
  if (record.has_control_plane()) return {};
  if (!record.has_event()) {
    return {absl::StrCat("record ", record.sequence(),
                         ": neither a \"1\" event nor a "
                         "control-plane record")};
  }
  return StrictReaderFindings(vocabulary, record.event());
}

}  // namespace sharedos::testing
