// The steps the two restore-anchor integration tests (SQLite under sharedosd, PostgreSQL under
// the four services) share (docs/adr/0021): before the copy, a grant issued and alice's reviewer
// credential, which works; after it, both revoked (alice then UNAUTHENTICATED); once the copy is
// put back and accepted, the acceptance re-applying both revocations, the store serving again
// and both revocations standing. Each test reaches the grant store its own way (`Ctl`).
// Header-only, for tests.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_RESTORE_ANCHOR_FIXTURE_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_RESTORE_ANCHOR_FIXTURE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace sharedos::sharedosctl::testing {

// sharedosctl against the grant store with `args`, as the operator (empty `token_file`) or with
// that token file.
using GrantStoreCtl = std::function<::sharedos::testing::CommandResult(
    std::vector<std::string> args, const std::string& token_file)>;

// Issues the grant world-demo/grant-read-workspace and alice's reviewer credential
// (alice-reviewer), writes alice's secret to `*alice_token` (a file under TEST_TMPDIR) and
// checks it is accepted. Fatal failures end the calling test (check HasFatalFailure()).
inline void IssueGrantAndAlice(const GrantStoreCtl& ctl, std::string* alice_token) {
  const std::string grant_file = ::sharedos::testing::TempPath("grant.textproto");
  ASSERT_TRUE(::sharedos::testing::WriteFile(grant_file, R"pb(
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
              )pb")
                  .ok());
  const auto issued = ctl({"grants", "issue", "--file=" + grant_file}, "");
  ASSERT_EQ(issued.exit_code, 0) << issued.output;
  const auto alice = ctl({"credentials", "issue", "--role=reviewer", "--principal=human:user-alice",
                          "--namespace=world-demo", "--id=alice-reviewer"},
                         "");
  ASSERT_EQ(alice.exit_code, 0) << alice.output;
  const size_t at = alice.output.find("secret: ");
  ASSERT_NE(at, std::string::npos) << alice.output;
  *alice_token = ::sharedos::testing::TempPath("alice.token");
  ASSERT_TRUE(::sharedos::testing::WriteFile(
                  *alice_token, std::string(absl::StripAsciiWhitespace(alice.output.substr(
                                    at + 8, alice.output.find('\n', at) - at - 8))) +
                                    "\n")
                  .ok());
  const auto as_alice = ctl({"escalations", "list", "--namespace=world-demo"}, *alice_token);
  ASSERT_EQ(as_alice.exit_code, 0) << as_alice.output;
}

// Revokes alice's credential and the grant; alice is then UNAUTHENTICATED.
inline void RevokeGrantAndAlice(const GrantStoreCtl& ctl, const std::string& alice_token) {
  const auto revoked_credential = ctl({"credentials", "revoke", "--id=alice-reviewer"}, "");
  ASSERT_EQ(revoked_credential.exit_code, 0) << revoked_credential.output;
  const auto revoked_grant =
      ctl({"grants", "revoke", "--namespace=world-demo", "--id=grant-read-workspace"}, "");
  ASSERT_EQ(revoked_grant.exit_code, 0) << revoked_grant.output;
  const auto as_alice = ctl({"escalations", "list", "--namespace=world-demo"}, alice_token);
  ASSERT_EQ(as_alice.exit_code, 1) << as_alice.output;
  EXPECT_THAT(as_alice.output, ::testing::HasSubstr("UNAUTHENTICATED"));
}

// Asks `status` until it answers SERVING (the next readiness round), bounded; its last answer.
inline ::sharedos::testing::CommandResult WaitServing(const GrantStoreCtl& ctl) {
  ::sharedos::testing::CommandResult status;
  for (int attempt = 0; attempt < 200; ++attempt) {
    status = ctl({"status"}, "");
    if (status.exit_code == 0) break;
  }
  return status;
}

// Accepts the restore with `reason`: both revocations re-applied, the store serving again from
// its next readiness round, alice UNAUTHENTICATED and the grant revoked.
inline void AcceptAndExpectRevocationsStand(const GrantStoreCtl& ctl, const std::string& reason,
                                            const std::string& alice_token) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  const auto accepted = ctl({"grants", "accept-restore", "--reason=" + reason}, "");
  ASSERT_EQ(accepted.exit_code, 0) << accepted.output;
  EXPECT_THAT(accepted.output, HasSubstr("accepted the restore"));
  EXPECT_THAT(accepted.output, HasSubstr("revoked again: grant world-demo/grant-read-workspace"));
  EXPECT_THAT(accepted.output, HasSubstr("revoked again: credential alice-reviewer"));
  EXPECT_THAT(accepted.output, HasSubstr("Usage counts are the restored copy's"));

  const auto status = WaitServing(ctl);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_THAT(status.output, Not(HasSubstr("anchor DOWN")));

  // The revocations the copy did not have stand.
  const auto as_alice = ctl({"escalations", "list", "--namespace=world-demo"}, alice_token);
  EXPECT_EQ(as_alice.exit_code, 1) << as_alice.output;
  EXPECT_THAT(as_alice.output, HasSubstr("UNAUTHENTICATED"));
  const auto shown =
      ctl({"--json", "grants", "show", "--namespace=world-demo", "--id=grant-read-workspace"}, "");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_THAT(shown.output, HasSubstr("revokedAt"));
}

}  // namespace sharedos::sharedosctl::testing

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_RESTORE_ANCHOR_FIXTURE_H_
