#include "common/postgres/postgres_status.h"

#include "absl/status/status.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::postgres {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SqlStateToStatusCodeTest, MapsEachClass) {
  struct Case {
    const char* sqlstate;
    absl::StatusCode code;
  };
  const Case cases[] = {
      {"", absl::StatusCode::kUnavailable},              // libpq: no server answer at all
      {"bogus", absl::StatusCode::kInternal},            // five characters, unknown class
      {"08006", absl::StatusCode::kUnavailable},         // connection_failure
      {"08001", absl::StatusCode::kUnavailable},         // unable to connect
      {"57P01", absl::StatusCode::kUnavailable},         // admin_shutdown
      {"57P02", absl::StatusCode::kUnavailable},         // crash_shutdown
      {"57P03", absl::StatusCode::kUnavailable},         // cannot_connect_now (starting up)
      {"53100", absl::StatusCode::kUnavailable},         // disk_full
      {"53300", absl::StatusCode::kUnavailable},         // too_many_connections
      {"58030", absl::StatusCode::kUnavailable},         // io_error
      {"25006", absl::StatusCode::kUnavailable},         // read_only_sql_transaction
      {"55P03", absl::StatusCode::kUnavailable},         // lock_not_available
      {"57014", absl::StatusCode::kUnavailable},         // query_canceled
      {"40001", absl::StatusCode::kAborted},             // serialization_failure
      {"40P01", absl::StatusCode::kAborted},             // deadlock_detected
      {"40002", absl::StatusCode::kInternal},            // integrity violation at commit
      {"23505", absl::StatusCode::kAlreadyExists},       // unique_violation
      {"23502", absl::StatusCode::kFailedPrecondition},  // not_null_violation
      {"23514", absl::StatusCode::kFailedPrecondition},  // check_violation
      {"23503", absl::StatusCode::kFailedPrecondition},  // foreign_key_violation
      {"22021", absl::StatusCode::kInvalidArgument},     // character_not_in_repertoire
      {"22003", absl::StatusCode::kInvalidArgument},     // numeric_value_out_of_range
      {"42601", absl::StatusCode::kInternal},            // syntax_error
      {"42P01", absl::StatusCode::kInternal},            // undefined_table
      {"25P02", absl::StatusCode::kInternal},            // in_failed_sql_transaction
      {"XX000", absl::StatusCode::kInternal},            // internal_error
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SqlStateToStatusCode(c.sqlstate), c.code) << "SQLSTATE " << c.sqlstate;
  }
}

TEST(PostgresErrorTest, NamesContextMessageAndSqlState) {
  const absl::Status status =
      PostgresError("23505", "insert grant",
                    "ERROR:  duplicate key value violates unique constraint \"grants_pkey\"\n");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kAlreadyExists,
                               "insert grant: duplicate key value violates unique constraint "
                               "\"grants_pkey\" [SQLSTATE 23505]"));
}

TEST(PostgresErrorTest, ConnectionFailuresAreUnavailable) {
  const absl::Status status =
      PostgresError("", "connect", "connection to server at \"127.0.0.1\", port 1 failed\n");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("[connection]")));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, Not(HasSubstr("\n"))));
  EXPECT_THAT(PostgresError("", "query", ""),
              StatusIs(absl::StatusCode::kUnavailable, "query: no message [connection]"));
}

}  // namespace
}  // namespace sharedos::common::postgres
