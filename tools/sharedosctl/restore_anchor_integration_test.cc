// The grant store anchored in the audit log (docs/adr/0021), from outside the process: the real
// sharedosd and the real sharedosctl. An operator issues a grant and alice's reviewer credential,
// copies grants.db while sharedosd is stopped, then revokes both; the older grants.db put back,
// sharedosd starts NOT_SERVING, refuses every call (alice's revoked credential included),
// `sharedosctl status` names the reason; `sharedosctl grants accept-restore` re-applies the
// revocations from the log, records store.restore_accepted and the store serves again — alice's
// credential and the grant still revoked — and a further restart stays serving.

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"
#include "tools/sharedosctl/restore_anchor_fixture.h"
#include "tools/sharedosctl/sharedosd_fixture.h"

namespace sharedos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using sharedosctl::testing::Result;

class RestoreAnchorIntegrationTest : public sharedosctl::testing::SharedosdFixture {
 protected:
  RestoreAnchorIntegrationTest() : SharedosdFixture("restore-anchor-data", {}) {}

  void Stop() {
    ASSERT_EQ(daemon_->Terminate(), 0) << daemon_->output();
    daemon_.reset();
  }

  void Start() {
    auto process = sharedos::testing::Process::Start("sharedosd/sharedosd",
                                                     {"--port=0", "--data_dir=" + data_});
    ASSERT_TRUE(process.ok()) << process.status();
    daemon_ = std::make_unique<sharedos::testing::Process>(*std::move(process));
    auto address = daemon_->WaitForLine("sharedosd listening on ", absl::Seconds(30));
    ASSERT_TRUE(address.ok()) << address.status();
    address_ = *address;
  }

  // grants.db and its WAL companions, as they are while sharedosd is stopped.
  void CopyStore(const std::string& from_dir, const std::string& to_dir) {
    namespace fs = std::filesystem;
    for (const char* suffix : {"", "-wal", "-shm"}) {
      const fs::path to = fs::path(to_dir) / absl::StrCat("grants.db", suffix);
      fs::remove(to);
      const fs::path from = fs::path(from_dir) / absl::StrCat("grants.db", suffix);
      if (fs::exists(from)) fs::copy_file(from, to);
    }
  }
};

TEST_F(RestoreAnchorIntegrationTest, RestoredGrantsDbServesNothingUntilAcceptedAndRevocationsStay) {
  const sharedosctl::testing::GrantStoreCtl ctl = [this](std::vector<std::string> args,
                                                         const std::string& token_file) {
    return Ctl(std::move(args), token_file);
  };
  std::string alice_token;
  sharedosctl::testing::IssueGrantAndAlice(ctl, &alice_token);
  if (HasFatalFailure()) return;

  // Yesterday's copy, taken while sharedosd was stopped.
  Stop();
  const std::string backup = sharedos::testing::TempPath("grants-backup");
  std::filesystem::create_directories(backup);
  CopyStore(data_, backup);
  Start();

  sharedosctl::testing::RevokeGrantAndAlice(ctl, alice_token);
  if (HasFatalFailure()) return;

  // The older grants.db put back.
  Stop();
  CopyStore(backup, data_);
  Start();

  Result status = Ctl({"status"});
  EXPECT_NE(status.exit_code, 0) << status.output;
  EXPECT_THAT(status.output, HasSubstr("NOT_SERVING"));
  EXPECT_THAT(status.output, HasSubstr("anchor DOWN"));
  EXPECT_THAT(status.output, HasSubstr("the grant store is behind the audit log"));
  EXPECT_THAT(status.output, HasSubstr("grants accept-restore"));

  // Every call refused, fail closed, naming why; alice's credential (live in the copy) too.
  Result listed = Ctl({"grants", "list", "--namespace=world-demo"});
  EXPECT_EQ(listed.exit_code, 1) << listed.output;
  EXPECT_THAT(listed.output, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(listed.output, HasSubstr("behind the audit log"));
  EXPECT_THAT(listed.output, Not(HasSubstr("grant-read-workspace")));
  Result as_alice = Ctl({"escalations", "list", "--namespace=world-demo"}, alice_token);
  EXPECT_EQ(as_alice.exit_code, 1) << as_alice.output;
  EXPECT_THAT(as_alice.output, HasSubstr("UNAVAILABLE"));

  // A reason is required.
  Result no_reason = Ctl({"grants", "accept-restore", "--reason= "});
  EXPECT_NE(no_reason.exit_code, 0) << no_reason.output;
  EXPECT_THAT(no_reason.output, HasSubstr("reason"));

  sharedosctl::testing::AcceptAndExpectRevocationsStand(
      ctl, "restored grants.db from the nightly copy", alice_token);

  // The acceptance is a record of its own, in a chain that still verifies.
  Result recorded = Ctl({"--json", "audit", "query", "--type=store.restore_accepted"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.output;
  EXPECT_THAT(recorded.output, HasSubstr("CONTROL_PLANE_EVENT_TYPE_RESTORE_ACCEPTED"));
  EXPECT_THAT(recorded.output, HasSubstr("\"reasonBytes\""));
  EXPECT_THAT(recorded.output, Not(HasSubstr("nightly copy")));
  Result verify = Ctl({"audit", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.output;

  // Accepting again: nothing to accept.
  Result again = Ctl({"grants", "accept-restore", "--reason=again"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("not behind the audit log"));

  // The accepted store is not taken for a restore at the next start.
  Stop();
  Start();
  status = Ctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  Result listed_after = Ctl({"grants", "list", "--namespace=world-demo", "--include_revoked"});
  EXPECT_EQ(listed_after.exit_code, 0) << listed_after.output;
}

}  // namespace
}  // namespace sharedos
