#include "common/server/rpc_adapter.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/server/auth.h"
#include "common/server/probe_server.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

// Calls through RpcAdapter::Unary for admin callers, with a "core" whose answer the test sets:
// the response travels back as the trailing metadata "response".
class RpcAdapterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = Authenticator::FromJson(
        R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin-token") + R"("}, {"name": "svc", "role": "service",
        "token_sha256": ")" +
        TokenDigestHex("svc-token") + R"("}]})");
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    rpc_ = std::make_unique<RpcAdapter>(*authenticator_);
    probe_ =
        std::make_unique<testing::ProbeServer>([this](grpc::GenericCallbackServerContext& context) {
          std::string response;
          grpc::Status status = rpc_->Unary(context, "sharedos.status.v1.Status/GetStatus",
                                            &response, [&](const Principal& principal) {
                                              caller_ = principal.name;
                                              ++calls_;
                                              return answer_;
                                            });
          if (status.ok()) context.AddTrailingMetadata("response", response);
          return status;
        });
  }

  grpc::Status Call(const std::string& authorization, std::string* response) {
    return probe_->Call(authorization, "response", response);
  }

  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<RpcAdapter> rpc_;
  std::unique_ptr<testing::ProbeServer> probe_;
  // What the core answers; what it saw (how often it ran, who called).
  absl::StatusOr<std::string> answer_ = std::string("answer");
  int calls_ = 0;
  std::string caller_;
};

TEST_F(RpcAdapterTest, AnAuthenticatedCallerGetsTheCoresResponse) {
  std::string response;
  grpc::Status status = Call("Bearer admin-token", &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response, "answer");
  EXPECT_EQ(calls_, 1);
  EXPECT_EQ(caller_, "ops");
}

TEST_F(RpcAdapterTest, NoCredentialAnUnknownOneOrAnotherRoleNeverReachTheCore) {
  std::string response;
  for (const char* authorization : {"", "Bearer wrong"}) {
    grpc::Status status = Call(authorization, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << authorization;
  }
  EXPECT_EQ(Call("Bearer svc-token", &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(response, "");
}

TEST_F(RpcAdapterTest, TheCoresErrorIsAnsweredWithItsCodeAndMessage) {
  answer_ = absl::NotFoundError("grant grant-1 not found");
  std::string response;
  grpc::Status status = Call("Bearer admin-token", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "grant grant-1 not found");
  EXPECT_EQ(response, "");
}

TEST(AnswerTest, MovesTheResponseOrConvertsTheStatus) {
  std::string response;
  EXPECT_TRUE(Answer(absl::StatusOr<std::string>("value"), &response).ok());
  EXPECT_EQ(response, "value");
  grpc::Status failed =
      Answer(absl::StatusOr<std::string>(absl::InvalidArgumentError("x: empty")), &response);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(failed.error_message(), "x: empty");
}

}  // namespace
}  // namespace sharedos::common::server
