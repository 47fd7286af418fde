// Credentials bound to a certificate identity ("cert_san"): parsed and refused like every field;
// a bound token is refused without the certificate, a certificate-only entry authenticates with
// no token; and over a real mTLS listener the SANs the listener verified are what RequireCaller
// matches.
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/client/channel.h"
#include "common/server/auth.h"
#include "common/server/grpc_auth.h"
#include "common/server/tls.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/test_certificates.h"

namespace sharedos::common::server {
namespace {

using ::sharedos::common::StatusIs;
using ::sharedos::testing::TestCertificateAuthority;
using ::testing::HasSubstr;

constexpr char kAuthorizerSan[] = "spiffe://sharedos/authorizer";
constexpr char kAuditSan[] = "audit.sharedos.internal";

std::string Config() {
  return std::string(R"({"credentials": [
    {"name": "ops", "role": "admin", "token_sha256": ")") +
         TokenDigestHex("admin-token") + R"("},
    {"name": "authorizer", "role": "service", "cert_san": ")" +
         kAuthorizerSan + R"(", "token_sha256": ")" + TokenDigestHex("svc-token") + R"("},
    {"name": "audit-reader", "role": "service", "cert_san": ")" +
         kAuditSan + R"("}]})";
}

TEST(CertIdentityTest, ABoundTokenNeedsItsCertificateAndACertificateAloneAuthenticates) {
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok()) << auth.status();
  const auto service = {Role::kService};
  // Token and certificate: both required.
  EXPECT_THAT((*auth)->RequireWithPeer("Bearer svc-token", {}, service),
              StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT((*auth)->RequireWithPeer("Bearer svc-token", {kAuditSan}, service),
              StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT((*auth)->Authenticate("Bearer svc-token"),
              StatusIs(absl::StatusCode::kUnauthenticated));
  auto both = (*auth)->RequireWithPeer("Bearer svc-token", {"x", kAuthorizerSan}, service);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->name, "authorizer");
  // The bound entry has a token: its certificate alone is not enough.
  EXPECT_THAT((*auth)->RequireWithPeer("", {kAuthorizerSan}, service),
              StatusIs(absl::StatusCode::kUnauthenticated));
  // Certificate only.
  auto alone = (*auth)->RequireWithPeer("", {kAuditSan}, service);
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->name, "audit-reader");
  EXPECT_THAT((*auth)->RequireWithPeer("", {kAuditSan}, {Role::kAdmin}),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("role service")));
  EXPECT_THAT((*auth)->RequireWithPeer("", {}, service),
              StatusIs(absl::StatusCode::kUnauthenticated));
  // Unbound tokens work as before, with or without a certificate.
  EXPECT_TRUE((*auth)->RequireWithPeer("Bearer admin-token", {kAuditSan}, {Role::kAdmin}).ok());
  EXPECT_TRUE((*auth)->Require("Bearer admin-token", {Role::kAdmin}).ok());
}

TEST(CertIdentityTest, BadCertSanEntriesAreRefusedNamingTheField) {
  EXPECT_THAT(Authenticator::FromJson(
                  R"({"credentials": [{"name": "a", "role": "service", "cert_san": ""}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "credentials[0].cert_san: must be a string of 1 to 256 bytes"));
  EXPECT_THAT(Authenticator::FromJson(
                  R"({"credentials": [{"name": "a", "role": "service", "cert_san": 7}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("credentials[0].cert_san")));
  EXPECT_THAT(Authenticator::FromJson(R"({"credentials": [{"name": "a", "role": "service"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "credentials[0].token_sha256: must be 64 lowercase hex digits"));
  EXPECT_THAT(Authenticator::FromJson(R"({"credentials": [
                  {"name": "a", "role": "service", "cert_san": "x"},
                  {"name": "b", "role": "service", "cert_san": "x"}]})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "credentials[1].cert_san: the same name is listed twice"));
}

// Every call answers with the name of the principal RequireCaller found, in trailing metadata.
class WhoAmI : public grpc::CallbackGenericService {
 public:
  explicit WhoAmI(const Authenticator& auth) : auth_(auth) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    absl::StatusOr<Principal> caller = RequireCaller(auth_, *context, {Role::kService});
    if (caller.ok()) context->AddTrailingMetadata("principal", caller->name);
    return new Reactor(caller.ok() ? grpc::Status::OK
                                   : grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no"));
  }

 private:
  class Reactor : public grpc::ServerGenericBidiReactor {
   public:
    explicit Reactor(const grpc::Status& status) { Finish(status); }
    void OnDone() override { delete this; }
  };
  const Authenticator& auth_;
};

TEST(CertIdentityTest, AnMtlsListenerMatchesTheSansItVerified) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  auto ca = TestCertificateAuthority::Create(dir, "identity");
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto server_pair = (*ca)->IssueLoopback("identity-server");
  auto authorizer =
      (*ca)->Issue("authorizer", "authorizer", {std::string("URI:") + kAuthorizerSan});
  auto audit = (*ca)->Issue("audit", "audit", {std::string("DNS:") + kAuditSan});
  ASSERT_TRUE(server_pair.ok() && authorizer.ok() && audit.ok());
  auto auth = Authenticator::FromJson(Config());
  ASSERT_TRUE(auth.ok()) << auth.status();

  ServerTls tls;
  tls.cert_file = server_pair->cert_file;
  tls.key_file = server_pair->key_file;
  tls.client_ca_file = (*ca)->ca_file();
  auto credentials = NewServerCredentials(tls, "127.0.0.1");
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  WhoAmI service(**auth);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", *credentials, &port);
  builder.RegisterCallbackGenericService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(port, 0);

  auto call = [&](const sharedos::testing::TestCertificate& client, const std::string& token,
                  std::string* principal) {
    client::ChannelTls channel_tls;
    channel_tls.ca_file = (*ca)->ca_file();
    channel_tls.client_cert_file = client.cert_file;
    channel_tls.client_key_file = client.key_file;
    auto channel = client::NewChannel("127.0.0.1:" + std::to_string(port), channel_tls, "--target");
    grpc::GenericStub stub(*channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1), response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, "/probe.Probe/Call", grpc::StubOptions(), &request, &response,
                   [&done](grpc::Status status) { done.set_value(status); });
    grpc::Status status = done.get_future().get();
    auto it = context.GetServerTrailingMetadata().find("principal");
    principal->assign(it == context.GetServerTrailingMetadata().end()
                          ? ""
                          : std::string(it->second.data(), it->second.size()));
    return status.error_code();
  };
  std::string principal;
  EXPECT_EQ(call(*authorizer, "svc-token", &principal), grpc::StatusCode::OK);
  EXPECT_EQ(principal, "authorizer");
  EXPECT_EQ(call(*audit, "svc-token", &principal), grpc::StatusCode::UNAUTHENTICATED)
      << "the authorizer's token from the audit reader's certificate";
  EXPECT_EQ(call(*audit, "", &principal), grpc::StatusCode::OK);
  EXPECT_EQ(principal, "audit-reader");
  EXPECT_EQ(call(*authorizer, "", &principal), grpc::StatusCode::UNAUTHENTICATED);
  server->Shutdown();
}

}  // namespace
}  // namespace sharedos::common::server
