#include "common/server/grpc_auth.h"

#include <memory>
#include <string>

#include "common/server/probe_server.h"
#include "common/status/grpc_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

// Answers every call by authenticating the caller as an admin: OK with the principal's name
// in the trailing metadata, or the authentication error.
class GrpcAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto auth = Authenticator::FromJson(
        R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin-token") + R"("}, {"name": "svc", "role": "service",
        "token_sha256": ")" +
        TokenDigestHex("svc-token") + R"("}]})");
    ASSERT_TRUE(auth.ok()) << auth.status();
    authenticator_ = *std::move(auth);
    probe_ =
        std::make_unique<testing::ProbeServer>([this](grpc::GenericCallbackServerContext& context) {
          auto principal = RequireCaller(*authenticator_, context, {Role::kAdmin});
          if (principal.ok()) context.AddTrailingMetadata("principal", principal->name);
          return principal.ok() ? grpc::Status::OK : ToGrpcStatus(principal.status());
        });
  }

  grpc::Status Call(const std::string& authorization, std::string* principal) {
    return probe_->Call(authorization, "principal", principal);
  }

  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<testing::ProbeServer> probe_;
};

TEST_F(GrpcAuthTest, ReadsTheBearerTokenFromTheCallsMetadata) {
  std::string principal;
  grpc::Status status = Call("Bearer admin-token", &principal);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(principal, "ops");
}

TEST_F(GrpcAuthTest, NoMetadataIsUnauthenticatedTheWrongRolePermissionDenied) {
  std::string principal;
  EXPECT_EQ(Call("", &principal).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Call("Bearer svc-token", &principal).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Call("Bearer wrong", &principal).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(principal.empty());
}

}  // namespace
}  // namespace sharedos::common::server
