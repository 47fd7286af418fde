#include "tests/tenancy/matrix_table.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sharedos::tenancy {
namespace {

absl::Status LineError(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("tenancy_matrix.txt:", line, ": ", what));
}

// "<Service>/<Method>" or "console:<page>", each with an optional "[variant]".
bool WellFormedMethod(absl::string_view method) {
  if (absl::StartsWith(method, "console:")) return method.size() > 8;
  const size_t slash = method.find('/');
  return slash != absl::string_view::npos && slash > 0 && slash + 1 < method.size() &&
         method.find('/', slash + 1) == absl::string_view::npos;
}

}  // namespace

const std::vector<std::string>& RoleColumns() {
  static const auto* columns = new std::vector<std::string>{
      "operator",   "admin-A",    "admin-B",  "host-A/x",   "host-A/y", "reviewer-x",
      "reviewer-y", "authorizer", "envelope", "grantstore", "audit",    "none"};
  return *columns;
}

bool IsOutcome(absl::string_view cell) {
  return cell == "ok" || cell == "empty" || cell == "denied" || cell == "hidden" ||
         cell == "unauth" || cell == "n/a";
}

std::string MatrixRow::Spelled() const {
  return variant.empty() ? method : absl::StrCat(method, "[", variant, "]");
}

std::string MatrixRow::Key() const { return absl::StrCat(Spelled(), " ", target); }

absl::StatusOr<Matrix> ParseMatrix(absl::string_view text) {
  Matrix matrix;
  bool header_seen = false;
  std::set<std::string> keys;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    std::vector<std::string> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (!header_seen) {
      std::vector<std::string> want = {"method", "target", "where"};
      want.insert(want.end(), RoleColumns().begin(), RoleColumns().end());
      if (fields != want) {
        return LineError(number,
                         absl::StrCat("the header must be \"", absl::StrJoin(want, " "), "\""));
      }
      header_seen = true;
      continue;
    }
    if (fields.size() != 3 + RoleColumns().size()) {
      return LineError(number,
                       absl::StrCat(fields.size(), " fields, want ", 3 + RoleColumns().size()));
    }
    MatrixRow row;
    row.line = number;
    std::string method = fields[0];
    if (absl::EndsWith(method, "]")) {
      const size_t open = method.find('[');
      if (open == std::string::npos || open + 2 >= method.size()) {
        return LineError(number, absl::StrCat("malformed variant in ", method));
      }
      row.variant = method.substr(open + 1, method.size() - open - 2);
      method.resize(open);
    }
    if (!WellFormedMethod(method)) {
      return LineError(
          number, absl::StrCat("method: <Service>/<Method> or console:<page>, got ", fields[0]));
    }
    row.method = method;
    row.target = fields[1];
    if (row.target != "A/x" && row.target != "A/y" && row.target != "B/x" && row.target != "-" &&
        row.target != "own") {
      return LineError(number, absl::StrCat("target: A/x, A/y, B/x, - or own, got ", row.target));
    }
    row.where = fields[2];
    if (row.where != "all" && row.where != "replicas") {
      return LineError(number, absl::StrCat("where: all or replicas, got ", row.where));
    }
    for (size_t i = 3; i < fields.size(); ++i) {
      if (!IsOutcome(fields[i])) {
        return LineError(number,
                         absl::StrCat(RoleColumns()[i - 3], ": not an outcome: ", fields[i]));
      }
      row.cells.push_back(fields[i]);
    }
    if (!keys.insert(row.Key()).second) {
      return LineError(number, absl::StrCat("repeats the row ", row.Key()));
    }
    matrix.rows.push_back(std::move(row));
  }
  if (!header_seen) return absl::InvalidArgumentError("tenancy_matrix.txt: no header line");
  return matrix;
}

}  // namespace sharedos::tenancy
