#include "common/postgres/postgres_status.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace sharedos::common::postgres {

absl::StatusCode SqlStateToStatusCode(absl::string_view sqlstate) {
  if (sqlstate.size() != 5) return absl::StatusCode::kUnavailable;
  const absl::string_view sqlclass = sqlstate.substr(0, 2);
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::StatusCode::kAborted;
  if (sqlstate == "23505") return absl::StatusCode::kAlreadyExists;
  if (sqlstate == "25006" || sqlstate == "55P03" || sqlstate == "57014" ||
      absl::StartsWith(sqlstate, "57P")) {
    return absl::StatusCode::kUnavailable;
  }
  if (sqlclass == "08" || sqlclass == "53" || sqlclass == "58") {
    return absl::StatusCode::kUnavailable;
  }
  if (sqlclass == "23") return absl::StatusCode::kFailedPrecondition;
  if (sqlclass == "22") return absl::StatusCode::kInvalidArgument;
  return absl::StatusCode::kInternal;
}

absl::Status PostgresError(absl::string_view sqlstate, absl::string_view context,
                           absl::string_view message) {
  absl::string_view text = absl::StripTrailingAsciiWhitespace(message);
  absl::ConsumePrefix(&text, "ERROR:  ");
  absl::ConsumePrefix(&text, "FATAL:  ");
  if (text.empty()) text = "no message";
  const std::string origin =
      sqlstate.size() == 5 ? absl::StrCat("SQLSTATE ", sqlstate) : std::string("connection");
  return absl::Status(SqlStateToStatusCode(sqlstate),
                      absl::StrCat(context, ": ", text, " [", origin, "]"));
}

}  // namespace sharedos::common::postgres
