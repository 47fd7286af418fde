// sharedosctl backup, round trip, from outside the process: the real sharedosd and the real
// sharedosctl. A backup taken while sharedosd serves (and writes on after it) is restored into a
// fresh data directory; sharedosd started on it serves (the grant store's anchor accepts a backup
// taken consistently: it is not behind its own copy of the log), `audit verify` checks the copied
// log against the checkpoint taken with it, and the state is the backup's.

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"
#include "tools/sharedosctl/sharedosd_fixture.h"

namespace sharedos {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using sharedosctl::testing::Result;

class BackupIntegrationTest : public sharedosctl::testing::SharedosdFixture {
 protected:
  BackupIntegrationTest() : SharedosdFixture("backup-data", {}) {}

  std::string GrantFile(const std::string& id) {
    const std::string path = sharedos::testing::TempPath(id + ".textproto");
    std::ofstream file(path);
    file << absl::StrCat("id: \"", id, "\" namespace_id: \"world-demo\"\n",
                         "subject { agent_id: \"agent-assistant\" }\n",
                         "issuer { human_user_id: \"user-alice\" }\n",
                         "capabilities { resource { namespace: \"files\" path: \"Workspace\" } ",
                         "actions: \"read\" scope: SCOPE_DESCENDANTS }\n",
                         "constraints {}\nissued_at { seconds: 1786438800 }\n");
    return path;
  }
};

TEST_F(BackupIntegrationTest, BackupWhileServingRestoresIntoAFreshDataDirectory) {
  Result issued_before = Ctl({"grants", "issue", "--file=" + GrantFile("grant-before")});
  ASSERT_EQ(issued_before.exit_code, 0) << issued_before.output;
  Result revoked = Ctl({"grants", "revoke", "--namespace=world-demo", "--id=grant-before"});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.output << issued_before.output;

  const std::string backup = sharedos::testing::TempPath("backup-copy");
  Result taken = Ctl({"backup", "--data_dir=" + data_, "--to=" + backup});
  ASSERT_EQ(taken.exit_code, 0) << taken.output;
  EXPECT_THAT(taken.output, HasSubstr("grants.db (revision 2)"));
  for (const char* file : {"audit.db", "grants.db", "checkpoint.jsonl", "checkpoint.pub.pem"}) {
    EXPECT_TRUE(fs::exists(fs::path(backup) / file)) << file;
  }
  // Not into a directory that holds something.
  Result again = Ctl({"backup", "--data_dir=" + data_, "--to=" + backup});
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_THAT(again.output, HasSubstr("--to: "));

  // sharedosd goes on after the backup.
  ASSERT_EQ(Ctl({"grants", "issue", "--file=" + GrantFile("grant-after")}).exit_code, 0);
  ASSERT_EQ(daemon_->Terminate(), 0) << daemon_->output();
  daemon_.reset();

  // Restore: a fresh data directory holding the backup's two stores.
  const std::string fresh = sharedos::testing::TempPath("restored-data");
  fs::create_directories(fresh);
  fs::copy_file(fs::path(backup) / "audit.db", fs::path(fresh) / "audit.db");
  fs::copy_file(fs::path(backup) / "grants.db", fs::path(fresh) / "grants.db");
  auto process =
      sharedos::testing::Process::Start("sharedosd/sharedosd", {"--port=0", "--data_dir=" + fresh});
  ASSERT_TRUE(process.ok()) << process.status();
  daemon_ = std::make_unique<sharedos::testing::Process>(*std::move(process));
  auto address = daemon_->WaitForLine("sharedosd listening on ", absl::Seconds(30));
  ASSERT_TRUE(address.ok()) << address.status();
  address_ = *address;
  data_ = fresh;  // its own admin.token, minted on this first start

  Result status = Ctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.output;
  Result verify = Ctl({"audit", "verify", "--checkpoints=" + backup + "/checkpoint.jsonl",
                       "--public_key=" + backup + "/checkpoint.pub.pem"});
  EXPECT_EQ(verify.exit_code, 0) << verify.output;

  Result before = Ctl({"--json", "grants", "show", "--namespace=world-demo", "--id=grant-before"});
  ASSERT_EQ(before.exit_code, 0) << before.output;
  EXPECT_THAT(before.output, HasSubstr("revokedAt"));
  Result after = Ctl({"grants", "show", "--namespace=world-demo", "--id=grant-after"});
  EXPECT_EQ(after.exit_code, 1) << after.output;
  EXPECT_THAT(after.output, HasSubstr("NOT_FOUND"));
  // And it goes on from there.
  Result issued = Ctl({"grants", "issue", "--file=" + GrantFile("grant-restored")});
  EXPECT_EQ(issued.exit_code, 0) << issued.output;
  EXPECT_THAT(issued.output, HasSubstr("at revision 3"));
}

}  // namespace
}  // namespace sharedos
