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
    {"name": "ops", "role": "admin", "token_sha256": ")" +
         TokenDigestHex("admin-token") + R"("},
    {"name": "authorizer", "role": "service", "token_sha256": ")" +
         TokenDigestHex("svc-token") + R"("},
    {"name": "host-a", "role": "host", "token_sha256": ")" +
         TokenDigestHex("host-token") + R"(",
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

TEST(AuthenticatorTest, RequireRefusesTheWrongRoleAsPermissionDenied) {
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok());
  EXPECT_TRUE((*auth)->Require("Bearer svc-token", {Role::kService}).ok());
  EXPECT_THAT((*auth)->Require("Bearer host-token", {Role::kService}),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("role host")));
  EXPECT_THAT((*auth)->Require("Bearer admin-token", {Role::kService}),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("role admin")));
  // Only a missing or unknown credential is UNAUTHENTICATED.
  EXPECT_THAT((*auth)->Require("Bearer nope", {Role::kService}),
              StatusIs(absl::StatusCode::kUnauthenticated));
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
      {R"({"credentials": [{"name": "a", "role": "service", "token_sha256": ")" + digest +
           R"(", "scope": {}}]})",
       "credentials[0].scope: a service credential has no scope"},
      {R"({"credentials": [{"name": "a", "role": "admin", "principal": "root", )"
       R"("token_sha256": ")" +
           digest + R"("}]})",
       "credentials[0].principal"},
      {R"({"credentials": [{"name": "a", "role": "host", "token_sha256": ")" + digest +
           R"(", "scope": {"namespaces": [""]}}]})",
       "credentials[0].scope.namespaces[0]"},
      {R"({"credentials": [{"name": "a", "role": "admin", "token_sha256": ")" + digest +
           R"("}, {"name": "a", "role": "service", "token_sha256": ")" + TokenDigestHex("u") +
           R"("}]})",
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

TEST(AuthenticatorTest, PrincipalsRolesAndScopes) {
  const std::string json = R"({"credentials": [
    {"name": "ops", "role": "admin", "token_sha256": ")" +
                           TokenDigestHex("a") + R"("},
    {"name": "ops-w1", "role": "admin", "principal": "human:op-1", "token_sha256": ")" +
                           TokenDigestHex("b") + R"(", "scope": {"namespaces": ["world-1"]}},
    {"name": "alice", "role": "reviewer", "principal": "human:user-alice", "token_sha256": ")" +
                           TokenDigestHex("c") + R"(", "scope": {"namespaces": ["world-1"]}}]})";
  auto auth = Authenticator::FromJson(json);
  ASSERT_TRUE(auth.ok()) << auth.status();
  auto bootstrap = (*auth)->Authenticate("Bearer a");
  ASSERT_TRUE(bootstrap.ok());
  EXPECT_EQ(bootstrap->address, "service:ops");  // The default principal of a static entry.
  EXPECT_TRUE(bootstrap->Administers("any-namespace"));
  auto scoped = (*auth)->Authenticate("Bearer b");
  ASSERT_TRUE(scoped.ok());
  EXPECT_EQ(scoped->address, "human:op-1");
  EXPECT_TRUE(scoped->Administers("world-1"));
  EXPECT_FALSE(scoped->Administers("world-2"));
  auto reviewer = (*auth)->Authenticate("Bearer c");
  ASSERT_TRUE(reviewer.ok());
  EXPECT_EQ(reviewer->role, Role::kReviewer);
  EXPECT_EQ(reviewer->address, "human:user-alice");
  EXPECT_FALSE(reviewer->Administers("world-1"));
}

class MapSource : public CredentialSource {
 public:
  absl::StatusOr<std::optional<Principal>> FindByDigest(const std::string& digest) const override {
    ++calls;
    if (!status.ok()) return status;
    if (digest == TokenDigestHex("db-token") && live) {
      Principal p;
      p.name = "cred-1";
      p.address = "human:user-bob";
      p.role = Role::kReviewer;
      return std::optional<Principal>(p);
    }
    return std::optional<Principal>();
  }
  mutable int calls = 0;
  bool live = true;
  absl::Status status;
};

TEST(AuthenticatorTest, AnAttachedSourceAnswersOnEveryCallSoRevocationIsImmediate) {
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok());
  MapSource source;
  EXPECT_THAT((*auth)->Authenticate("Bearer db-token"),
              StatusIs(absl::StatusCode::kUnauthenticated));
  (*auth)->AttachSource(&source);
  auto found = (*auth)->Authenticate("Bearer db-token");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->address, "human:user-bob");
  // A static credential never reaches the source.
  const int before = source.calls;
  EXPECT_TRUE((*auth)->Authenticate("Bearer admin-token").ok());
  EXPECT_EQ(source.calls, before);
  source.live = false;
  EXPECT_THAT((*auth)->Authenticate("Bearer db-token"),
              StatusIs(absl::StatusCode::kUnauthenticated, "missing or invalid credential"));
  source.status = absl::UnavailableError("down");
  EXPECT_THAT((*auth)->Authenticate("Bearer db-token"), StatusIs(absl::StatusCode::kUnavailable));
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
