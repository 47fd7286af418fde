#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
using nlohmann::json;

namespace {

bool ExpectationMet(const Attempt& attempt, std::string* why) {
  const json& expect = attempt.declared.value("expect", json::object());
  if (expect.contains("rpcError")) {
    const std::string want = "rpc:" + Str(expect, "rpcError");
    if (attempt.status != want) {
      *why = absl::StrCat(attempt.id, ": answered ", attempt.status,
                          attempt.code.empty() ? "" : " " + attempt.code, ", expected ", want);
      return false;
    }
    const std::string names = Str(expect, "names");
    if (!names.empty() && !absl::StrContains(attempt.message, names)) {
      *why = absl::StrCat(attempt.id, ": the error does not name \"", names, "\"");
      return false;
    }
    return true;
  }
  bool status_ok = false;
  for (const json& status : expect.value("statuses", json::array())) {
    if (status == attempt.status) status_ok = true;
  }
  if (!status_ok) {
    *why = absl::StrCat(attempt.id, ": answered ", attempt.status,
                        attempt.code.empty() ? "" : " " + attempt.code,
                        attempt.message.empty() ? "" : " (" + attempt.message + ")", ", expected ",
                        expect.value("statuses", json::array()).dump());
    return false;
  }
  if (attempt.status != "succeeded" && expect.contains("reasonCodes")) {
    bool code_ok = false;
    for (const json& code : expect["reasonCodes"]) {
      if (code == attempt.code) code_ok = true;
    }
    if (!code_ok) {
      *why = absl::StrCat(attempt.id, ": refused ", attempt.code, ", expected ",
                          expect["reasonCodes"].dump());
      return false;
    }
  }
  if (expect.value("requiredAuthority", false)) {
    std::string id;
    if (attempt.details.is_object() && attempt.details.contains("requiredAuthority")) {
      id = Str(attempt.details["requiredAuthority"], "id");
    }
    if (!absl::StartsWith(id, "capreq-")) {
      *why = absl::StrCat(attempt.id, ": the denial names no required authority (capreq-)");
      return false;
    }
  }
  return true;
}

}  // namespace

void GradeAnswer(const Attempt& attempt, Grading& grading) {
  Cell& cell = grading.cell;
  std::string why;
  bool met = ExpectationMet(attempt, &why);
  if (attempt.status != "succeeded" && !attempt.code.empty())
    cell.reason_codes.insert(attempt.code);
  if (attempt.details.is_object() && attempt.details.contains("surfaces")) {
    for (const json& note : attempt.details["surfaces"]) {
      cell.notes.push_back(attempt.id + ": " + note.get<std::string>());
    }
  }
  if (!met) {
    (attempt.role == "control" ? grading.unmet_controls : grading.unmet_attacks).push_back(why);
  } else if (attempt.role != "control" && attempt.declared.value("driverIssued", false)) {
    grading.driver_pass = true;
  }
}

}  // namespace sharedos::conformance
