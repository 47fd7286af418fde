// The reference's protocol "1" vocabulary (../shared/spec/semantics.md §1.15, §5.2, §6), read from
// the checked-in excerpt tests/testdata/reference_semantics_excerpt.md (kept equal to the
// semantics by //tests:protocol_v1_vocabulary_test), and a strict "1" reader built on it: what a
// 1.0.0-preview reader accepts of an AuditEvent SharedOS wrote (docs/adr/0008).

#ifndef SHAREDOS_TESTS_TESTING_REFERENCE_VOCABULARY_H_
#define SHAREDOS_TESTS_TESTING_REFERENCE_VOCABULARY_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"

namespace sharedos::testing {

// The excerpt's sections, cut from a full semantics text: "### 1.15 " up to "### 1.16 ",
// "### 5.2 " up to "### 5.3 ", "## 6. " up to "### 6.11 ", each line with its newline.
std::string SemanticsExcerpt(absl::string_view semantics);

struct ReferenceVocabulary {
  // "authority.resolved", … (the newest stored contract's AuditEventType, §1.15).
  std::vector<std::string> event_types;
  // Every code-shaped (`[a-z][a-z0-9_]*`) backticked token of §5.2 and §6.
  std::set<std::string> codes;
};
// Errors: INVALID_ARGUMENT (the text has no AuditEventType list).
absl::StatusOr<ReferenceVocabulary> ParseReferenceVocabulary(absl::string_view excerpt);
// The checked-in excerpt, parsed (runfile tests/testdata/reference_semantics_excerpt.md; pass
// argv[0] under `bazel run`). Errors: NOT_FOUND (no runfile), as ParseReferenceVocabulary.
absl::StatusOr<ReferenceVocabulary> LoadReferenceVocabulary(const char* argv0 = nullptr);

// "AUDIT_EVENT_TYPE_" + the name upper-cased, dots as underscores: "tool.invoked" →
// "AUDIT_EVENT_TYPE_TOOL_INVOKED" (how proto names the reference's types).
std::string EventTypeEnumName(absl::string_view reference_name);

// Codes SharedOS stamps in a "1" reason or cause that the reference text does not list, each
// with why (AuditEvent.reason and .cause are Identifiers, so a strict reader accepts them; the
// list is what keeps a new one from slipping in unnoticed).
struct LocalCode {
  const char* code;
  const char* why;
};
const std::vector<LocalCode>& LocalCodes();

// What a strict 1.0.0-preview reader finds wrong with `event`, empty when it accepts it: the
// protocol "1" validation (unknown fields, version, bounds, enums), a type outside the
// reference's list, a reason or cause neither in the reference's codes nor LocalCodes().
std::vector<std::string> StrictReaderFindings(const ReferenceVocabulary& vocabulary,
                                              const protocol::v1::AuditEvent& event);
// The same over a log record: a control-plane record is not a "1" object and has no findings;
// a record with neither kind set is one.
std::vector<std::string> StrictReaderFindings(const ReferenceVocabulary& vocabulary,
                                              const audit::v1::AuditRecord& record);

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_REFERENCE_VOCABULARY_H_
