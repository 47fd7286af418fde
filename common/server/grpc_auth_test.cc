#include "common/server/grpc_auth.h"

#include <future>

#include "common/status/grpc_status.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

// Answers every method by authenticating the caller as an admin: OK with the principal's name
// in the trailing metadata, or the authentication error.
class AuthProbe : public grpc::CallbackGenericService {
 public:
  explicit AuthProbe(const Authenticator& authenticator) : authenticator_(authenticator) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override {
    class Reactor : public grpc::ServerGenericBidiReactor {
     public:
      Reactor(const Authenticator& authenticator, grpc::GenericCallbackServerContext* context) {
        auto principal = RequireCaller(authenticator, *context, {Role::kAdmin});
        if (principal.ok()) context->AddTrailingMetadata("principal", principal->name);
        Finish(principal.ok() ? grpc::Status::OK : ToGrpcStatus(principal.status()));
      }
      void OnDone() override { delete this; }
    };
    return new Reactor(authenticator_, context);
  }

 private:
  const Authenticator& authenticator_;
};

class GrpcAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto auth = Authenticator::FromJson(
        R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin-token") + R"("}, {"name": "svc", "role": "service",
        "token_sha256": ")" + TokenDigestHex("svc-token") + R"("}]})");
    ASSERT_TRUE(auth.ok()) << auth.status();
    authenticator_ = *std::move(auth);
    probe_ = std::make_unique<AuthProbe>(*authenticator_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterCallbackGenericService(probe_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  grpc::Status Call(const std::string& authorization, std::string* principal) {
    grpc::GenericStub stub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                               grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1), response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/probe.Probe/Call", grpc::StubOptions(), &request, &response,
                   [&done](grpc::Status status) { done.set_value(status); });
    grpc::Status status = done.get_future().get();
    auto it = context.GetServerTrailingMetadata().find("principal");
    if (it != context.GetServerTrailingMetadata().end()) {
      principal->assign(it->second.data(), it->second.size());
    }
    return status;
  }

  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<AuthProbe> probe_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(GrpcAuthTest, ReadsTheBearerTokenFromTheCallsMetadata) {
  std::string principal;
  grpc::Status status = Call("Bearer admin-token", &principal);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(principal, "ops");
}

TEST_F(GrpcAuthTest, NoMetadataOrTheWrongRoleIsUnauthenticated) {
  std::string principal;
  EXPECT_EQ(Call("", &principal).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Call("Bearer svc-token", &principal).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Call("Bearer wrong", &principal).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(principal.empty());
}

}  // namespace
}  // namespace sharedos::common::server
