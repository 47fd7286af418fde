// The grant store anchored in the audit log on PostgreSQL (docs/adr/0021), from outside the
// processes, as docs/operations.md tells an operator to back up and restore: a PostgreSQL cluster
// started by the test, audit_svc and grantstore_svc (with the authorizer and envelope) as
// processes, the grant store in a database of its own. The grant database is dumped online with
// pg_dump; alice's reviewer credential and a grant are revoked; grantstore_svc is stopped and the
// dump restored with pg_restore --clean. Started again, the grant store is NOT_SERVING with the
// `anchor` reason, `sharedosctl status` names it and every call (alice's credential too) is
// refused; `sharedosctl grants accept-restore` re-applies the revocations, records
// store.restore_accepted, and the store serves with alice's credential and the grant still
// revoked, the use counts of the copy never below what the copy held.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/deployment.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/process.h"
#include "tools/sharedosctl/restore_anchor_fixture.h"

namespace sharedos {
namespace {

using ::sharedos::testing::CommandResult;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::PostgresCluster;
using ::testing::HasSubstr;
using ::testing::Not;

using Service = FourProcessDeployment::Service;

class RestoreAnchorPostgresIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto audit = ::sharedos::testing::CreateClusterWithDatabase("audit");
    ASSERT_TRUE(audit.ok()) << audit.status();
    cluster_ = std::move(audit->cluster);
    auto grants = cluster_->CreateDatabase("grants");
    ASSERT_TRUE(grants.ok()) << grants.status();
    grants_uri_ = *grants;
    FourProcessDeployment::Options options;
    options.dir = ::sharedos::testing::TempPath("restore-anchor-postgres");
    ASSERT_EQ(std::system(absl::StrCat("mkdir -p '", options.dir, "'").c_str()), 0);
    options.database = audit->uri;
    options.grantstore_database = grants_uri_;
    options.registry =
        ::sharedos::testing::RunfilePath("envelope_svc/config/standard_tools.textproto");
    options.files_root = options.dir + "/files";
    ASSERT_EQ(std::system(absl::StrCat("mkdir -p '", options.files_root, "'").c_str()), 0);
    auto four = FourProcessDeployment::Start(options);
    ASSERT_TRUE(four.ok()) << four.status();
    four_ = *std::move(four);
    admin_token_ = ::sharedos::testing::TempPath("admin.token");
    ASSERT_TRUE(::sharedos::testing::WriteFile(admin_token_, four_->admin_token() + "\n").ok());
  }

  // sharedosctl against `service` with a token file (default: the operator's).
  CommandResult Ctl(Service service, std::vector<std::string> args,
                    const std::string& token_file = "") {
    args.insert(args.begin(), {"--target=" + four_->address(service),
                               "--token_file=" + (token_file.empty() ? admin_token_ : token_file)});
    return ::sharedos::testing::RunToCompletion("tools/sharedosctl/sharedosctl", args);
  }
  CommandResult Grants(std::vector<std::string> args, const std::string& token_file = "") {
    return Ctl(Service::kGrantstore, std::move(args), token_file);
  }

  // A PostgreSQL client program of the cluster's, to completion: its exit code.
  int Pg(const std::string& program, const std::string& args) {
    return std::system(absl::StrCat(cluster_->bindir(), "/", program, " ", args).c_str());
  }

  std::unique_ptr<PostgresCluster> cluster_;
  std::string grants_uri_;
  std::unique_ptr<FourProcessDeployment> four_;
  std::string admin_token_;
};

TEST_F(RestoreAnchorPostgresIntegrationTest, RestoredDatabaseServesNothingUntilAccepted) {
  const sharedosctl::testing::GrantStoreCtl ctl = [this](std::vector<std::string> args,
                                                         const std::string& token_file) {
    return Grants(std::move(args), token_file);
  };
  std::string alice_token;
  sharedosctl::testing::IssueGrantAndAlice(ctl, &alice_token);
  if (HasFatalFailure()) return;

  // The nightly copy: pg_dump of the running grant database (docs/operations.md).
  const std::string dump = ::sharedos::testing::TempPath("grants.dump");
  ASSERT_EQ(Pg("pg_dump", absl::StrCat("--format=custom --file='", dump, "' '", grants_uri_, "'")),
            0);

  // Then alice's credential and the grant are revoked.
  sharedosctl::testing::RevokeGrantAndAlice(ctl, alice_token);
  if (HasFatalFailure()) return;

  // The copy restored with every grant-store replica stopped.
  ASSERT_TRUE(four_->Stop(Service::kGrantstore).ok());
  ASSERT_EQ(Pg("pg_restore", absl::StrCat("--clean --dbname='", grants_uri_, "' '", dump, "'")), 0);
  ASSERT_TRUE(four_->Restart(Service::kGrantstore).ok());

  CommandResult status = Grants({"status"});
  EXPECT_NE(status.exit_code, 0) << status.output;
  EXPECT_THAT(status.output, HasSubstr("NOT_SERVING"));
  EXPECT_THAT(status.output, HasSubstr("anchor DOWN"));
  EXPECT_THAT(status.output, HasSubstr("the grant store is behind the audit log"));

  // Nothing served, alice's credential (live in the copy) refused too.
  CommandResult listed = Grants({"grants", "list", "--namespace=world-demo"});
  EXPECT_EQ(listed.exit_code, 1) << listed.output;
  EXPECT_THAT(listed.output, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(listed.output, Not(HasSubstr("grant-read-workspace")));
  CommandResult as_alice = Grants({"escalations", "list", "--namespace=world-demo"}, alice_token);
  EXPECT_EQ(as_alice.exit_code, 1) << as_alice.output;
  EXPECT_THAT(as_alice.output, Not(HasSubstr("world-demo/")));
  EXPECT_THAT(as_alice.output, HasSubstr("UNAVAILABLE"));

  sharedosctl::testing::AcceptAndExpectRevocationsStand(
      ctl, "restored the grant database from pg_dump", alice_token);

  // The acceptance is a record of its own in the audit log (its reason's text is not).
  CommandResult recorded =
      Ctl(Service::kAudit, {"--json", "audit", "query", "--type=store.restore_accepted"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.output;
  EXPECT_THAT(recorded.output, HasSubstr("CONTROL_PLANE_EVENT_TYPE_RESTORE_ACCEPTED"));
  EXPECT_THAT(recorded.output, HasSubstr("\"reasonBytes\""));
  EXPECT_THAT(recorded.output, Not(HasSubstr("from pg_dump")));

  // The accepted store is not taken for a restore at its next start.
  ASSERT_TRUE(four_->Stop(Service::kGrantstore).ok());
  ASSERT_TRUE(four_->Restart(Service::kGrantstore).ok());
  status = sharedosctl::testing::WaitServing(ctl);
  EXPECT_EQ(status.exit_code, 0) << status.output;
}

}  // namespace
}  // namespace sharedos
