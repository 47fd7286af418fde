#include "common/postgres/uri.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sharedos::common::postgres {

absl::StatusOr<bool> IsPostgresUri(absl::string_view db, absl::string_view flag) {
  if (absl::StartsWith(db, "postgresql://") || absl::StartsWith(db, "postgres://")) return true;
  const size_t scheme_end = db.find("://");
  if (scheme_end != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": unsupported URI scheme \"", db.substr(0, scheme_end),
                     "\"; use a SQLite path or a postgres:// or postgresql:// URI"));
  }
  return false;
}

}  // namespace sharedos::common::postgres
