// Which storage a `--db` value names: a postgres:// or postgresql:// URI (libpq's two schemes,
// lower case) is a PostgreSQL database; anything else without a "://" is a SQLite path. The one
// reading of --db for every service that can store in either.

#ifndef SHAREDOS_COMMON_POSTGRES_URI_H_
#define SHAREDOS_COMMON_POSTGRES_URI_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::postgres {

// True for a PostgreSQL URI, false for a SQLite path. Errors: INVALID_ARGUMENT naming `flag`
// for a URI of another scheme ("mysql://...", "Postgres://..."), which would otherwise become an
// oddly named SQLite file. The message repeats the scheme only, never the URI (it may hold a
// password).
absl::StatusOr<bool> IsPostgresUri(absl::string_view db, absl::string_view flag = "--db");

}  // namespace sharedos::common::postgres

#endif  // SHAREDOS_COMMON_POSTGRES_URI_H_
