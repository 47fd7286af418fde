#include "common/postgres/uri.h"

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::postgres {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(IsPostgresUriTest, LibpqSchemesArePostgresAndPathsAreSqlite) {
  EXPECT_THAT(IsPostgresUri("postgres://u@h:5432/db"), IsOkAndHolds(true));
  EXPECT_THAT(IsPostgresUri("postgresql:///db?host=/run/pg"), IsOkAndHolds(true));
  EXPECT_THAT(IsPostgresUri("audit.db"), IsOkAndHolds(false));
  EXPECT_THAT(IsPostgresUri("/var/lib/sharedos/grants.db"), IsOkAndHolds(false));
  EXPECT_THAT(IsPostgresUri(":memory:"), IsOkAndHolds(false));
}

TEST(IsPostgresUriTest, AnotherSchemeIsRefusedNamingTheFlagNotThePassword) {
  EXPECT_THAT(
      IsPostgresUri("mysql://root:secret@h/db", "--audit_db"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("--audit_db"), HasSubstr("\"mysql\""), Not(HasSubstr("secret")))));
  EXPECT_THAT(IsPostgresUri("Postgres://h/db"), StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace sharedos::common::postgres
