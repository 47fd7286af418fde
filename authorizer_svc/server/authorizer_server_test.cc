// BuildAuthorizerServer as both composition roots use it: the core over an injected grantstore
// client and audit writer, served on port 0, and the same core reached in-process (sharedosd's
// envelope); its options are checked, naming the flags.
#include "authorizer_svc/server/authorizer_server.h"

#include <chrono>
#include <memory>
#include <string>

#include "audit_svc/client/fake_audit_writer.h"
#include "capability/test_builders.h"
#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"

namespace sharedos::authorizer::server {
namespace {

using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::T0;
using ::sharedos::common::StatusIs;
using ::sharedos::common::server::Authenticator;
using ::sharedos::common::server::ServerOptions;
using ::sharedos::common::server::ServerRunner;
using ::sharedos::common::server::TokenDigestHex;

constexpr char kLeaseSecret[] = "authorizer-server-test-lease-secret";

class AuthorizerServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = Authenticator::FromJson(
        R"({"credentials": [
          {"name": "envelope", "role": "service", "token_sha256": ")" +
        TokenDigestHex("svc") + R"("}]})");
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
  }

  AuthorizerServerDeps Deps() {
    auto grantstore = std::make_unique<grantstore::client::FakeGrantStoreClient>();
    grantstore_ = grantstore.get();
    return {std::move(grantstore), std::make_unique<audit::client::FakeAuditWriter>(),
            *authenticator_, clock_};
  }

  static v1::OpenTurnAuthorityRequest Open() {
    v1::OpenTurnAuthorityRequest request;
    *request.mutable_context() = MakeContext();
    request.set_turn_id("turn-1");
    return request;
  }

  common::SimulatedClock clock_{T0() + absl::Seconds(1)};
  std::unique_ptr<Authenticator> authenticator_;
  grantstore::client::FakeGrantStoreClient* grantstore_ = nullptr;
};

TEST_F(AuthorizerServerTest, ServesTheCoreOnAFreePortLoadingThroughTheInjectedStore) {
  auto built = BuildAuthorizerServer(Deps(), {kLeaseSecret, {}});
  ASSERT_TRUE(built.ok()) << built.status();
  auto runner = ServerRunner::Start(ServerOptions{}, (*built)->services());
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_GT((*runner)->port(), 0);
  auto stub = v1::Authorizer::NewStub(
      grpc::CreateChannel((*runner)->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer svc");
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::OpenTurnAuthorityResponse opened;
  grpc::Status status = stub->OpenTurnAuthority(&context, Open(), &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(opened.lease_id().empty());
  EXPECT_EQ(grantstore_->calls(grantstore::client::FakeGrantStoreClient::Method::kLoadAuthority),
            1);
}

TEST_F(AuthorizerServerTest, AnInProcessClientAndAnotherAdapterReachTheSameCore) {
  auto built = BuildAuthorizerServer(Deps(), {kLeaseSecret, {}});
  ASSERT_TRUE(built.ok()) << built.status();
  std::unique_ptr<client::AuthorizerClient> local = (*built)->NewInProcessClient();
  auto opened = local->OpenTurnAuthority(Open(), absl::Seconds(1));
  ASSERT_TRUE(opened.ok()) << opened.status();

  std::unique_ptr<grpc::Service> second = (*built)->NewService();
  auto runner = ServerRunner::Start(ServerOptions{}, {second.get()});
  ASSERT_TRUE(runner.ok()) << runner.status();
  auto stub = v1::Authorizer::NewStub((*runner)->InProcessChannel());
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer svc");
  v1::CloseTurnAuthorityRequest close;
  close.set_lease_id(opened->lease_id());
  v1::CloseTurnAuthorityResponse closed;
  grpc::Status status = stub->CloseTurnAuthority(&context, close, &closed);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(AuthorizerServerTest, OptionsAreCheckedNamingTheFlag) {
  EXPECT_THAT(
      BuildAuthorizerServer(Deps(), {"short", {}}),
      StatusIs(absl::StatusCode::kInvalidArgument, "--lease_secret_file: shorter than 32 bytes"));
  AuthorizerServerOptions options{kLeaseSecret, {}};
  options.core.default_lease_timeout = absl::Seconds(631);
  EXPECT_THAT(BuildAuthorizerServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--default_lease_timeout: must be positive and at most 630s"));
  options.core.default_lease_timeout = absl::ZeroDuration();
  EXPECT_THAT(BuildAuthorizerServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--default_lease_timeout: must be positive and at most 630s"));
}

}  // namespace
}  // namespace sharedos::authorizer::server
