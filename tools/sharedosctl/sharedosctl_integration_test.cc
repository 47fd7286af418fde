// The real sharedosctl binary against the real sharedosd, both as processes: an operator issues,
// lists and revokes a grant, reads those mutations back from the audit log and verifies the
// chain; a wrong token is refused with UNAUTHENTICATED.

#include <cstdlib>
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

using ::testing::HasSubstr;
using ::testing::Not;

using sharedosctl::testing::Result;

class SharedosctlIntegrationTest : public sharedosctl::testing::SharedosdFixture {
 protected:
  SharedosctlIntegrationTest() : SharedosdFixture("sharedosctl-data", {}) {}

  std::string WriteFile(const std::string& name, const std::string& content) {
    const std::string path = sharedos::testing::TempPath(name);
    std::ofstream(path) << content;
    return path;
  }
};

TEST_F(SharedosctlIntegrationTest, IssuesListsRevokesAndAuditsAGrant) {
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
  EXPECT_THAT(issued.output, HasSubstr("issued grant grant-read-workspace"));

  Result listed = Ctl({"grants", "list", "--namespace=world-demo"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_THAT(listed.output, HasSubstr("grant-read-workspace"));
  EXPECT_THAT(listed.output, HasSubstr("agent:agent-assistant"));

  Result by_subject =
      Ctl({"grants", "list", "--namespace=world-demo", "--subject=agent:someone-else"});
  ASSERT_EQ(by_subject.exit_code, 0) << by_subject.output;
  EXPECT_THAT(by_subject.output, Not(HasSubstr("grant-read-workspace")));

  Result revoked = Ctl({"grants", "revoke", "--namespace=world-demo", "--id=grant-read-workspace"});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.output;
  EXPECT_THAT(revoked.output, HasSubstr("revoked grant grant-read-workspace"));

  Result query = Ctl({"audit", "query", "--namespace=world-demo"});
  ASSERT_EQ(query.exit_code, 0) << query.output;
  EXPECT_THAT(query.output, HasSubstr("grant.issued"));
  EXPECT_THAT(query.output, HasSubstr("grant.revoked"));

  Result only_revoked = Ctl({"--json", "audit", "query", "--type=grant.revoked"});
  ASSERT_EQ(only_revoked.exit_code, 0) << only_revoked.output;
  // A control-plane record, not a protocol "1" event (docs/adr/0008).
  EXPECT_THAT(only_revoked.output, HasSubstr("\"controlPlane\""));
  EXPECT_THAT(only_revoked.output, HasSubstr("\"CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED\""));
  EXPECT_THAT(only_revoked.output, Not(HasSubstr("\"version\"")));
  EXPECT_THAT(only_revoked.output, Not(HasSubstr("GRANT_ISSUED")));

  Result verify = Ctl({"audit", "verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("ok: 2 records verify"));
}

TEST_F(SharedosctlIntegrationTest, RefusedCallsAndUsageErrorsHaveTheirExitCodes) {
  const std::string wrong = WriteFile("wrong.token", "not-the-admin-token\n");
  Result refused = Ctl({"grants", "list", "--namespace=world-demo"}, wrong);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("sharedosctl: UNAUTHENTICATED: "));
  EXPECT_THAT(refused.output, Not(HasSubstr("not-the-admin-token")));

  Result missing = Ctl({"grants", "show", "--namespace=world-demo", "--id=nope"});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("sharedosctl: NOT_FOUND: "));

  Result usage = Ctl({"grants", "frobnicate"});
  EXPECT_EQ(usage.exit_code, 2) << usage.output;
  EXPECT_THAT(usage.output, HasSubstr("usage: sharedosctl"));
}

}  // namespace
}  // namespace sharedos
