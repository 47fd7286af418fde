#include "common/server/rpc_adapter.h"

#include <future>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/server/auth.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

// Answers every call through RpcAdapter::Unary for admin callers, with a "core" whose answer
// the test sets: the response travels back as the trailing metadata "response".
class Probe : public grpc::CallbackGenericService {
 public:
  explicit Probe(const Authenticator& authenticator) : rpc_(authenticator) {}

  // What the core answers.
  absl::StatusOr<std::string> answer = std::string("answer");
  // What the core saw: how often it ran, and who called.
  int calls = 0;
  std::string caller;

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    std::string response;
    grpc::Status status =
        rpc_.Unary(*context, {Role::kAdmin}, &response, [&](const Principal& principal) {
          caller = principal.name;
          ++calls;
          return answer;
        });
    if (status.ok()) context->AddTrailingMetadata("response", response);
    return new Reactor(status);
  }

 private:
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    explicit Reactor(const grpc::Status& status) { Finish(status); }
    void OnDone() override { delete this; }
  };

  const RpcAdapter rpc_;
};

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
    probe_ = std::make_unique<Probe>(*authenticator_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterCallbackGenericService(probe_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  // Calls the probe with `authorization`; the response lands in `response`.
  grpc::Status Call(const std::string& authorization, std::string* response) {
    grpc::GenericStub stub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                               grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1), reply;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/probe.Probe/Call", grpc::StubOptions(), &request, &reply,
                   [&done](grpc::Status status) { done.set_value(status); });
    grpc::Status status = done.get_future().get();
    auto it = context.GetServerTrailingMetadata().find("response");
    if (it != context.GetServerTrailingMetadata().end()) {
      response->assign(it->second.data(), it->second.size());
    }
    return status;
  }

  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<Probe> probe_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(RpcAdapterTest, AnAuthenticatedCallerGetsTheCoresResponse) {
  std::string response;
  grpc::Status status = Call("Bearer admin-token", &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response, "answer");
  EXPECT_EQ(probe_->calls, 1);
  EXPECT_EQ(probe_->caller, "ops");
}

TEST_F(RpcAdapterTest, NoCredentialAnUnknownOneOrAnotherRoleNeverReachTheCore) {
  std::string response;
  for (const char* authorization : {"", "Bearer wrong", "Bearer svc-token"}) {
    grpc::Status status = Call(authorization, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << authorization;
  }
  EXPECT_EQ(probe_->calls, 0);
  EXPECT_EQ(response, "");
}

TEST_F(RpcAdapterTest, TheCoresErrorIsAnsweredWithItsCodeAndMessage) {
  probe_->answer = absl::NotFoundError("grant grant-1 not found");
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
