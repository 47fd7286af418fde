#include "sharedosd/bootstrap.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::sharedosd {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Root(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

TEST(BootstrapTest, MintsPrivateTokensWhoseDigestsAuthenticate) {
  auto dir = PrepareDataDir(Root("fresh"));
  ASSERT_TRUE(dir.ok()) << dir.status();
  for (const std::string& file : {dir->admin_token(), dir->host_token(), dir->credentials(),
                                  dir->lease_secret(), dir->mcp_secret()}) {
    struct stat info;
    ASSERT_EQ(stat(file.c_str(), &info), 0) << file;
    EXPECT_EQ(info.st_mode & 0777, 0600u) << file;
  }
  auto authenticator = common::server::Authenticator::FromFile(dir->credentials());
  ASSERT_TRUE(authenticator.ok()) << authenticator.status();
  std::string admin = Read(dir->admin_token());
  admin.pop_back();  // newline
  auto principal = (*authenticator)->Authenticate("Bearer " + admin);
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->role, common::server::Role::kAdmin);
  std::string host = Read(dir->host_token());
  host.pop_back();
  auto host_principal = (*authenticator)->Authenticate("Bearer " + host);
  ASSERT_TRUE(host_principal.ok());
  EXPECT_EQ(host_principal->role, common::server::Role::kHost);
  EXPECT_THAT(host_principal->scope.namespaces, testing::ElementsAre("world-demo"));
  // No service credential: sharedosd's services call each other in process (ADR 0014).
  EXPECT_THAT(Read(dir->credentials()), testing::Not(HasSubstr("\"service\"")));
  struct stat none;
  EXPECT_NE(stat((dir->root + "/service.token").c_str(), &none), 0);
  // The credentials file holds digests, never a token.
  EXPECT_THAT(Read(dir->credentials()), testing::Not(HasSubstr(admin)));
}

TEST(BootstrapTest, ASecondStartKeepsTheTokens) {
  auto first = PrepareDataDir(Root("again"));
  ASSERT_TRUE(first.ok());
  const std::string admin = Read(first->admin_token());
  const std::string secret = Read(first->lease_secret());
  EXPECT_GE(secret.size(), 32u);
  auto second = PrepareDataDir(Root("again"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Read(second->admin_token()), admin);
  EXPECT_EQ(Read(second->lease_secret()), secret);
  EXPECT_GE(Read(first->mcp_secret()).size(), 32u);
  EXPECT_NE(Read(first->mcp_secret()), secret);
  EXPECT_EQ(Read(second->mcp_secret()), Read(first->mcp_secret()));
}

TEST(BootstrapTest, RefusesAHalfPreparedDirectory) {
  auto dir = PrepareDataDir(Root("half"));
  ASSERT_TRUE(dir.ok());
  ASSERT_EQ(std::remove(dir->host_token().c_str()), 0);
  EXPECT_THAT(PrepareDataDir(Root("half")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("only some")));
}

}  // namespace
}  // namespace sharedos::sharedosd
