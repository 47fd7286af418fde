// `sharedosctl status`, the real binary against the real sharedosd (both processes): health,
// version, the four services with their stores and dependencies, the audit head and the
// outboxes; a store that cannot be read shows as NOT_SERVING (exit 1) and recovers.

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"
#include "tools/sharedosctl/sharedosd_fixture.h"

namespace sharedos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using sharedosctl::testing::Result;

class StatusIntegrationTest : public sharedosctl::testing::SharedosdFixture {
 protected:
  StatusIntegrationTest()
      : SharedosdFixture("status-data", {"--demo", "--health_interval=100ms"}) {}

  // `status` until its exit code is `code` or 10 s pass.
  Result StatusUntil(int code) {
    Result result;
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    do {
      result = Ctl({"status"});
      if (result.exit_code == code) break;
      absl::SleepFor(absl::Milliseconds(100));
    } while (absl::Now() < deadline);
    return result;
  }
};

TEST_F(StatusIntegrationTest, ShowsEveryServiceItsStoreTheAuditHeadAndTheOutboxes) {
  const Result status = Ctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_THAT(status.output, HasSubstr(address_ + ": SERVING (SharedOS "));
  EXPECT_THAT(status.output,
              HasSubstr("  audit_svc: SERVING; store sqlite " + data_ + "/audit.db; audit head "));
  EXPECT_THAT(status.output, Not(HasSubstr("audit head 0;")));  // --demo wrote records
  EXPECT_THAT(status.output,
              HasSubstr("  grantstore_svc: SERVING; store sqlite " + data_ + "/grants.db"));
  EXPECT_THAT(status.output, HasSubstr("  authorizer_svc: SERVING; needs audit_store up"));
  EXPECT_THAT(status.output, HasSubstr("  envelope_svc: SERVING"));
  for (const char* writer : {"grantstore", "authorizer", "envelope"}) {
    EXPECT_THAT(status.output, HasSubstr(absl::StrCat("  outbox ", writer, ": ")));
  }
  const Result json = Ctl({"--json", "status"});
  EXPECT_EQ(json.exit_code, 0) << json.output;
  EXPECT_THAT(json.output, HasSubstr("\"hashPrefix\":\""));
}

TEST_F(StatusIntegrationTest, AnUnreadableStoreIsNotServingUntilItIsBack) {
  const std::string grants = data_ + "/grants.db";
  ASSERT_EQ(std::rename(grants.c_str(), (grants + ".away").c_str()), 0);
  const Result down = StatusUntil(1);
  EXPECT_EQ(down.exit_code, 1) << down.output;
  EXPECT_THAT(down.output, HasSubstr(address_ + ": NOT_SERVING"));
  EXPECT_THAT(down.output, HasSubstr("grant_store DOWN"));
  ASSERT_EQ(std::rename((grants + ".away").c_str(), grants.c_str()), 0);
  const Result back = StatusUntil(0);
  EXPECT_EQ(back.exit_code, 0) << back.output;
  EXPECT_THAT(back.output, HasSubstr(address_ + ": SERVING"));
}

TEST_F(StatusIntegrationTest, OperatorsOnlyAndUnreachableTargetsFail) {
  const Result host = Ctl({"status"}, data_ + "/host.token");
  EXPECT_EQ(host.exit_code, 1) << host.output;
  EXPECT_THAT(host.output, HasSubstr("PERMISSION_DENIED"));
  const Result gone = Ctl({"--timeout=2s", "status", "--targets=127.0.0.1:1"});
  EXPECT_EQ(gone.exit_code, 1) << gone.output;
  EXPECT_THAT(gone.output, HasSubstr("UNAVAILABLE"));
}

}  // namespace
}  // namespace sharedos
