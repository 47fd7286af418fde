// GrpcCredentialSource fails closed: a grant store that cannot be reached is UNAVAILABLE, and an
// Authenticator with the source attached refuses the caller UNAVAILABLE (not as unknown). The
// lookups that succeed — issued, unknown, revoked — are covered through real processes by
// tests/e2e:host_credential_e2e_test.
#include "grantstore_svc/client/grpc_credential_source.h"

#include <memory>
#include <string>

#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::client {
namespace {

using ::sharedos::common::StatusIs;

// Port 1 on loopback: nothing listens there.
GrpcCredentialSource Unreachable() {
  return GrpcCredentialSource(
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()), "service-token");
}

TEST(GrpcCredentialSourceTest, AnUnreachableStoreIsUnavailable) {
  const GrpcCredentialSource source = Unreachable();
  EXPECT_THAT(source.FindByDigest(common::server::TokenDigestHex("sos_anything")),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST(GrpcCredentialSourceTest, TheAuthenticatorRefusesUnavailableWhenTheStoreIsAway) {
  auto authenticator = *common::server::Authenticator::FromJson(R"({"credentials": []})");
  const GrpcCredentialSource source = Unreachable();
  authenticator->AttachSource(&source);
  EXPECT_THAT(authenticator->Require("Bearer sos_anything", {common::server::Role::kHost}),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST(AttachGrantStoreCredentialsTest, NoFlagsMeansStaticCredentialsOnly) {
  auto authenticator = *common::server::Authenticator::FromJson(R"({"credentials": []})");
  auto source = AttachGrantStoreCredentials(*authenticator, "", "", {});
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ(*source, nullptr);
  // No source attached: an unknown token is unauthenticated, nothing is asked.
  EXPECT_THAT(authenticator->Require("Bearer sos_anything", {common::server::Role::kHost}),
              StatusIs(absl::StatusCode::kUnauthenticated));
}

TEST(AttachGrantStoreCredentialsTest, ATokenFileWithoutATargetIsRefused) {
  auto authenticator = *common::server::Authenticator::FromJson(R"({"credentials": []})");
  EXPECT_THAT(AttachGrantStoreCredentials(*authenticator, "", "/nonexistent/token", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, "--grantstore_target: required"));
}

}  // namespace
}  // namespace sharedos::grantstore::client
