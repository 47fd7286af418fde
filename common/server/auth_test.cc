#include "common/server/auth.h"

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Config() {
  return R"({"credentials": [
    {"name": "ops", "role": "admin", "token_sha256": ")" + TokenDigestHex("admin-token") + R"("},
    {"name": "authorizer", "role": "service", "token_sha256": ")" + TokenDigestHex("svc-token") + R"("},
    {"name": "host-a", "role": "host", "token_sha256": ")" + TokenDigestHex("host-token") + R"(",
     "scope": {"namespaces": ["world-1"], "owners": ["human:user-alice"]}}]})";
}

TEST(AuthenticatorTest, MapsEachBearerTokenToItsPrincipal) {
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok()) << auth.status();
  auto admin = (*auth)->Authenticate("Bearer admin-token");
  ASSERT_TRUE(admin.ok()) << admin.status();
  EXPECT_EQ(admin->name, "ops");
  EXPECT_EQ(admin->role, Role::kAdmin);
  auto host = (*auth)->Authenticate("bearer host-token");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->role, Role::kHost);
  EXPECT_THAT(host->scope.namespaces, ElementsAre("world-1"));
  EXPECT_THAT(host->scope.owners, ElementsAre("human:user-alice"));
}

TEST(AuthenticatorTest, RefusesMissingMalformedAndUnknownTokensAlike) {
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok());
  for (const char* header : {"", "Bearer", "Bearer ", "Basic admin-token", "admin-token",
                             "Bearer admin-tokenX", "Bearer ADMIN-TOKEN"}) {
    EXPECT_THAT((*auth)->Authenticate(header),
                StatusIs(absl::StatusCode::kUnauthenticated, "missing or invalid credential"))
        << header;
  }
}

TEST(AuthenticatorTest, ErrorsNeverEchoTheToken) {
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok());
  auto result = (*auth)->Authenticate("Bearer secret-value-123");
  EXPECT_THAT(result.status().message(), Not(HasSubstr("secret-value-123")));
}

TEST(AuthenticatorTest, RequireRefusesTheWrongRoleAsUnauthenticated) {
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok());
  EXPECT_TRUE((*auth)->Require("Bearer svc-token", {Role::kService}).ok());
  EXPECT_THAT((*auth)->Require("Bearer host-token", {Role::kService}),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("role host")));
  EXPECT_THAT((*auth)->Require("Bearer admin-token", {Role::kService}),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("role admin")));
  EXPECT_TRUE((*auth)->Require("Bearer admin-token", {Role::kAdmin, Role::kService}).ok());
}

TEST(AuthenticatorTest, RejectsBadConfigurationsNamingTheField) {
  const std::string digest = TokenDigestHex("t");
  struct Case {
    std::string json;
    std::string expected;
  } cases[] = {
      {"[]", "not a JSON object"},
      {"{", "not a JSON object"},
      {R"({"credentials": {}})", "credentials: must be an array"},
      {R"({"credentials": [], "extra": 1})", "unknown key extra"},
      {R"({"credentials": [{"role": "admin", "token_sha256": ")" + digest + R"("}]})",
       "credentials[0].name"},
      {R"({"credentials": [{"name": "a", "role": "root", "token_sha256": ")" + digest + R"("}]})",
       "credentials[0].role"},
      {R"({"credentials": [{"name": "a", "role": "admin", "token_sha256": "abc"}]})",
       "credentials[0].token_sha256"},
      {R"({"credentials": [{"name": "a", "role": "admin", "token": "plain"}]})",
       "credentials[0]: unknown field token"},
      {R"({"credentials": [{"name": "a", "role": "admin", "token_sha256": ")" + digest +
           R"(", "scope": {}}]})",
       "credentials[0].scope: only a host"},
      {R"({"credentials": [{"name": "a", "role": "host", "token_sha256": ")" + digest +
           R"(", "scope": {"namespaces": [""]}}]})",
       "credentials[0].scope.namespaces[0]"},
      {R"({"credentials": [{"name": "a", "role": "admin", "token_sha256": ")" + digest +
           R"("}, {"name": "a", "role": "service", "token_sha256": ")" +
           TokenDigestHex("u") + R"("}]})",
       "credentials[1].name: duplicate"},
      {R"({"credentials": [{"name": "a", "role": "admin", "token_sha256": ")" + digest +
           R"("}, {"name": "b", "role": "service", "token_sha256": ")" + digest + R"("}]})",
       "credentials[1].token_sha256: the same token"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(Authenticator::FromJson(c.json),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.expected)))
        << c.json;
  }
}

TEST(AuthenticatorTest, DeeplyNestedFileIsRefusedBeforeParsing) {
  const std::string deep =
      "{\"credentials\": " + std::string(50000, '[') + std::string(50000, ']') + "}";
  EXPECT_THAT(Authenticator::FromJson(deep),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("credentials: JSON nested deeper than 64 levels")));
}

TEST(AuthenticatorTest, MissingFileIsAFailedPrecondition) {
  EXPECT_THAT(Authenticator::FromFile("/nonexistent/credentials.json"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("cannot read")));
}

}  // namespace
}  // namespace sharedos::common::server
