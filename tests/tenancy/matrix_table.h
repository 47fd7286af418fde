// The tenancy matrix file (tests/tenancy/tenancy_matrix.txt, its format documented at its top):
// a row per (method, target), a column per role, each cell the outcome the policy says. This
// reads it strictly — a malformed line is an error naming its line number — so the file stays
// the one thing a reader needs. Stateless; thread-safe.

#ifndef SHAREDOS_TESTS_TENANCY_MATRIX_TABLE_H_
#define SHAREDOS_TESTS_TENANCY_MATRIX_TABLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharedos::tenancy {

// The role columns, in the order the header must list them.
const std::vector<std::string>& RoleColumns();

// The outcomes a cell may hold ("ok", "empty", "denied", "hidden", "unauth", "n/a").
bool IsOutcome(absl::string_view cell);

struct MatrixRow {
  // 1-based line in the file.
  int line = 0;
  // "GrantStore/IssueGrant", "AuditLog/Append", "console:/queue" (without the variant).
  std::string method;
  // "owner-named" of "MessageRoutes/Receive[owner-named]"; empty when none.
  std::string variant;
  // "A/x", "A/y", "B/x", "-" or "own".
  std::string target;
  // "all" or "replicas".
  std::string where;
  // One per RoleColumns() entry.
  std::vector<std::string> cells;

  // "<method>[<variant>] <target>", unique in a table.
  std::string Key() const;
  // The method with its variant, as the file spells it.
  std::string Spelled() const;
};

struct Matrix {
  std::vector<MatrixRow> rows;
};

// Parses the file's text. Errors: INVALID_ARGUMENT naming the line (a header other than
// "method target where <RoleColumns()>", a row with another number of cells, an unknown
// outcome, target or where, a malformed method, a row repeated).
absl::StatusOr<Matrix> ParseMatrix(absl::string_view text);

}  // namespace sharedos::tenancy

#endif  // SHAREDOS_TESTS_TENANCY_MATRIX_TABLE_H_
