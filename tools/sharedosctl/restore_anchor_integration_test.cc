// The grant store anchored in the audit log (docs/adr/0021), from outside the process: the real
// sharedosd and the real sharedosctl. An operator issues a grant and alice's reviewer credential,
// copies grants.db while sharedosd is stopped, then revokes both; the older grants.db put back,
// sharedosd starts NOT_SERVING, refuses every call (alice's revoked credential included),
// `sharedosctl status` names the reason; `sharedosctl grants accept-restore` re-applies the
// revocations from the log, records store.restore_accepted and the store serves again — alice's
// credential and the grant still revoked — and a further restart stays serving.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"
#include "tools/sharedosctl/sharedosd_fixture.h"

namespace sharedos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using sharedosctl::testing::Result;

class RestoreAnchorIntegrationTest : public sharedosctl::testing::SharedosdFixture {
 protected:
  RestoreAnchorIntegrationTest() : SharedosdFixture("restore-anchor-data", {}) {}

  std::string WriteFile(const std::string& name, const std::string& content) {
    const std::string path = sharedos::testing::TempPath(name);
    std::ofstream(path) << content;
    return path;
  }

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
  const std::string grant_file = WriteFile("grant.textproto", R"pb(
    id: "grant-read-workspace"
    namespace_id: "world-demo"
    subject { agent_id: "agent-assistant" }
    issuer { human_user_id: "user-alice" }
    capabilities {
      resource { namespace: "files" path: "Workspace" }
      actions: "read"
      scope: SCOPE_DESCENDANTS
    }
    constraints {}
    issued_at { seconds: 1786438800 }
  )pb");
  Result issued = Ctl({"grants", "issue", "--file=" + grant_file});
  ASSERT_EQ(issued.exit_code, 0) << issued.output;
  Result alice = Ctl({"credentials", "issue", "--role=reviewer", "--principal=human:user-alice",
                      "--namespace=world-demo", "--id=alice-reviewer"});
  ASSERT_EQ(alice.exit_code, 0) << alice.output;
  const size_t at = alice.output.find("secret: ");
  ASSERT_NE(at, std::string::npos) << alice.output;
  const std::string secret(absl::StripAsciiWhitespace(
      alice.output.substr(at + 8, alice.output.find('\n', at) - at - 8)));
  const std::string alice_token = WriteFile("alice.token", secret + "\n");
  Result as_alice = Ctl({"escalations", "list", "--namespace=world-demo"}, alice_token);
  ASSERT_EQ(as_alice.exit_code, 0) << as_alice.output;

  // Yesterday's copy, taken while sharedosd was stopped.
  Stop();
  const std::string backup = sharedos::testing::TempPath("grants-backup");
  std::filesystem::create_directories(backup);
  CopyStore(data_, backup);
  Start();

  Result revoked_credential = Ctl({"credentials", "revoke", "--id=alice-reviewer"});
  ASSERT_EQ(revoked_credential.exit_code, 0) << revoked_credential.output;
  Result revoked_grant =
      Ctl({"grants", "revoke", "--namespace=world-demo", "--id=grant-read-workspace"});
  ASSERT_EQ(revoked_grant.exit_code, 0) << revoked_grant.output;
  as_alice = Ctl({"escalations", "list", "--namespace=world-demo"}, alice_token);
  ASSERT_EQ(as_alice.exit_code, 1) << as_alice.output;
  EXPECT_THAT(as_alice.output, HasSubstr("UNAUTHENTICATED"));

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
  as_alice = Ctl({"escalations", "list", "--namespace=world-demo"}, alice_token);
  EXPECT_EQ(as_alice.exit_code, 1) << as_alice.output;
  EXPECT_THAT(as_alice.output, HasSubstr("UNAVAILABLE"));

  // A reason is required.
  Result no_reason = Ctl({"grants", "accept-restore", "--reason= "});
  EXPECT_NE(no_reason.exit_code, 0) << no_reason.output;
  EXPECT_THAT(no_reason.output, HasSubstr("reason"));

  Result accepted =
      Ctl({"grants", "accept-restore", "--reason=restored grants.db from the nightly copy"});
  ASSERT_EQ(accepted.exit_code, 0) << accepted.output;
  EXPECT_THAT(accepted.output, HasSubstr("accepted the restore"));
  EXPECT_THAT(accepted.output, HasSubstr("revoked again: grant world-demo/grant-read-workspace"));
  EXPECT_THAT(accepted.output, HasSubstr("revoked again: credential alice-reviewer"));
  EXPECT_THAT(accepted.output, HasSubstr("Usage counts are the restored copy's"));

  // SERVING from the next readiness round (--health_interval, 2 s): asked until then, bounded.
  for (int attempt = 0; attempt < 200; ++attempt) {
    status = Ctl({"status"});
    if (status.exit_code == 0) break;
  }
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_THAT(status.output, Not(HasSubstr("anchor DOWN")));

  // The revocations the copy did not have stand.
  as_alice = Ctl({"escalations", "list", "--namespace=world-demo"}, alice_token);
  EXPECT_EQ(as_alice.exit_code, 1) << as_alice.output;
  EXPECT_THAT(as_alice.output, HasSubstr("UNAUTHENTICATED"));
  Result shown =
      Ctl({"--json", "grants", "show", "--namespace=world-demo", "--id=grant-read-workspace"});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_THAT(shown.output, HasSubstr("revokedAt"));

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
