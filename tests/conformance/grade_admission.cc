#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
using nlohmann::json;

// What the turn was offered: each tool the row declares absent is not in the catalogue it was
// shown (an attack), each declared present is (a control). A turn that ended at admission was
// shown none.
void GradeCatalogue(int n, const Turn& turn, Grading& grading) {
  std::vector<std::string>& unmet_attacks = grading.unmet_attacks;
  std::vector<std::string>& unmet_controls = grading.unmet_controls;
  if (turn.expect_catalogue.is_object() && !turn.ended_at_open) {
    for (const json& name : turn.expect_catalogue.value("absent", json::array())) {
      if (std::find(turn.catalogue.begin(), turn.catalogue.end(), name.get<std::string>()) !=
          turn.catalogue.end()) {
        unmet_attacks.push_back(
            absl::StrCat("turn ", n, ": ", name.get<std::string>(), " is in the catalogue"));
      }
    }
    for (const json& name : turn.expect_catalogue.value("present", json::array())) {
      if (std::find(turn.catalogue.begin(), turn.catalogue.end(), name.get<std::string>()) ==
          turn.catalogue.end()) {
        unmet_controls.push_back(absl::StrCat("turn ", n, ": ", name.get<std::string>(),
                                              " is missing from the catalogue"));
      }
    }
  }
}

// An open the envelope rejected (rows 34, 45) must have left nothing in the audit log.
void GradeRejectedOpens(Grading& grading) {
  const RowRun& run = grading.run;
  Deployment& deployment = grading.deployment;
  const std::string& namespace_id = grading.namespace_id;
  Cell& cell = grading.cell;
  for (const std::string& trace : run.unrecorded_executions) {
    std::vector<pb::AuditEvent> events = ReadRecord(deployment, namespace_id, trace, false);
    if (!events.empty()) {
      cell.record_gaps.push_back(
          absl::StrCat(trace, ": rejected, yet ", events.size(), " audit records"));
    }
  }
}

}  // namespace sharedos::conformance
