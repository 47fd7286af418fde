#include <string>
#include <utility>
#include <vector>

#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
using nlohmann::json;

// A host step's operation is graded by its own record — resource.invoked by operation id,
// message.sent by message id (semantics §5.2) — held to a call's facts (CheckCallRecord), but
// for the authorityHash such a record does not carry.
void GradeHostOperationRecord(const Attempt& attempt, Grading& grading) {
  const std::string what = Str(attempt.declared, "do");
  auto record = grading.records.find(attempt.turn);
  std::vector<std::string> gaps;
  if (record != grading.records.end()) {
    CheckCallRecord(attempt, grading.host_operation_of[what + ":" + attempt.id], record->second,
                    grading.completeness, grading.grant_prefix, &gaps, &grading.cell.refused_by);
  } else {
    gaps.push_back(attempt.id + ": no record of its turn");
  }
  for (std::string& gap : gaps) grading.cell.record_gaps.push_back(std::move(gap));
}

}  // namespace sharedos::conformance
