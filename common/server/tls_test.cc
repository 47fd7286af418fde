// TLS of a real listener (ServerRunner) and channel (client::NewChannel) with certificates made at
// test time: the right CA is accepted; a wrong CA, an expired certificate, a missing or foreign
// client certificate under mTLS are refused; a rotated certificate is picked up without restart;
// plaintext is refused off loopback, naming the flag. And the key pair the MCP front door presents
// (KeyPairWatcher under cpp-httplib's TLS server), rotated the same way.
#include "common/server/tls.h"

#include <openssl/ssl.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "common/client/channel.h"
#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "tests/testing/test_certificates.h"

namespace sharedos::common::server {
namespace {

using ::sharedos::common::StatusIs;
using ::sharedos::testing::TestCertificate;
using ::sharedos::testing::TestCertificateAuthority;
using ::testing::HasSubstr;

// grpc.health.v1.Health/Check for the whole server, as raw bytes (an empty request).
grpc::Status HealthCheck(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1), response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  return done.get_future().get();
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::getenv("TEST_TMPDIR");
    auto ca = TestCertificateAuthority::Create(dir_, "deployment");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *std::move(ca);
    auto other = TestCertificateAuthority::Create(dir_, "other");
    ASSERT_TRUE(other.ok()) << other.status();
    other_ca_ = *std::move(other);
    auto server = ca_->IssueLoopback("server");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
  }

  std::unique_ptr<ServerRunner> Serve(const ServerTls& tls) {
    ServerOptions options;
    options.tls = tls;
    auto runner = ServerRunner::Start(options, {});
    EXPECT_TRUE(runner.ok()) << runner.status();
    return runner.ok() ? *std::move(runner) : nullptr;
  }

  ServerTls ServerFiles(const TestCertificate& certificate, const std::string& client_ca = "") {
    ServerTls tls;
    tls.cert_file = certificate.cert_file;
    tls.key_file = certificate.key_file;
    tls.client_ca_file = client_ca;
    tls.reload_interval = absl::Seconds(1);
    return tls;
  }

  grpc::Status Call(const std::string& address, const client::ChannelTls& tls) {
    auto channel = client::NewChannel(address, tls, "--target");
    if (!channel.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "no channel");
    return HealthCheck(*channel);
  }

  std::string dir_;
  std::unique_ptr<TestCertificateAuthority> ca_, other_ca_;
  TestCertificate server_;
};

TEST_F(TlsTest, AClientTrustingTheCaIsServedOverTls) {
  auto runner = Serve(ServerFiles(server_));
  ASSERT_NE(runner, nullptr);
  client::ChannelTls tls;
  tls.ca_file = ca_->ca_file();
  EXPECT_TRUE(Call(runner->address(), tls).ok());
  // localhost is in the certificate too.
  EXPECT_TRUE(Call("localhost:" + std::to_string(runner->port()), tls).ok());
  // A plaintext client cannot talk to a TLS listener.
  EXPECT_FALSE(Call(runner->address(), {}).ok());
}

TEST_F(TlsTest, AServerSignedByAnotherCaIsRefused) {
  auto runner = Serve(ServerFiles(server_));
  ASSERT_NE(runner, nullptr);
  client::ChannelTls tls;
  tls.ca_file = other_ca_->ca_file();
  EXPECT_EQ(Call(runner->address(), tls).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, AServerNameNotInTheCertificateIsRefusedUnlessOverridden) {
  auto named = ca_->Issue("named", "grantstore", {"DNS:grantstore.sharedos.internal"});
  ASSERT_TRUE(named.ok()) << named.status();
  auto runner = Serve(ServerFiles(*named));
  ASSERT_NE(runner, nullptr);
  client::ChannelTls tls;
  tls.ca_file = ca_->ca_file();
  EXPECT_EQ(Call(runner->address(), tls).error_code(), grpc::StatusCode::UNAVAILABLE);
  tls.server_name = "grantstore.sharedos.internal";
  EXPECT_TRUE(Call(runner->address(), tls).ok());
}

TEST_F(TlsTest, AnExpiredServerCertificateIsRefused) {
  auto expired = ca_->IssueLoopback("expired", /*expired=*/true);
  ASSERT_TRUE(expired.ok()) << expired.status();
  auto runner = Serve(ServerFiles(*expired));
  ASSERT_NE(runner, nullptr);
  client::ChannelTls tls;
  tls.ca_file = ca_->ca_file();
  EXPECT_EQ(Call(runner->address(), tls).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificateFromTheClientCa) {
  auto runner = Serve(ServerFiles(server_, ca_->ca_file()));
  ASSERT_NE(runner, nullptr);
  client::ChannelTls tls;
  tls.ca_file = ca_->ca_file();
  EXPECT_EQ(Call(runner->address(), tls).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "no client certificate";

  auto foreign = other_ca_->Issue("foreign", "authorizer", {"URI:spiffe://sharedos/authorizer"});
  ASSERT_TRUE(foreign.ok());
  tls.client_cert_file = foreign->cert_file;
  tls.client_key_file = foreign->key_file;
  EXPECT_EQ(Call(runner->address(), tls).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "a client certificate of another CA";

  auto expired =
      ca_->Issue("expired-client", "authorizer", {"URI:spiffe://sharedos/authorizer"}, true);
  ASSERT_TRUE(expired.ok());
  tls.client_cert_file = expired->cert_file;
  tls.client_key_file = expired->key_file;
  EXPECT_EQ(Call(runner->address(), tls).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "an expired client certificate";

  auto client = ca_->Issue("client", "authorizer", {"URI:spiffe://sharedos/authorizer"});
  ASSERT_TRUE(client.ok());
  tls.client_cert_file = client->cert_file;
  tls.client_key_file = client->key_file;
  EXPECT_TRUE(Call(runner->address(), tls).ok());
}

TEST_F(TlsTest, ARotatedServerCertificateIsPickedUpWithoutRestart) {
  auto runner = Serve(ServerFiles(server_));
  ASSERT_NE(runner, nullptr);
  client::ChannelTls old_ca, new_ca;
  old_ca.ca_file = ca_->ca_file();
  new_ca.ca_file = other_ca_->ca_file();
  ASSERT_TRUE(Call(runner->address(), old_ca).ok());
  ASSERT_FALSE(Call(runner->address(), new_ca).ok());
  // The same files, now a certificate of the other CA.
  auto rotated = other_ca_->IssueLoopback("server");
  ASSERT_TRUE(rotated.ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  bool picked_up = false;
  while (!picked_up && absl::Now() < deadline) {
    picked_up = Call(runner->address(), new_ca).ok();
    if (!picked_up) absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_TRUE(picked_up);
  EXPECT_FALSE(Call(runner->address(), old_ca).ok());
}

TEST_F(TlsTest, StartUpRefusesBadConfigurationsNamingTheFlag) {
  ServerOptions options;
  options.host = "0.0.0.0";
  EXPECT_THAT(ServerRunner::Start(options, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--host: plaintext is allowed only on loopback; give --tls_cert and "
                       "--tls_key to listen on 0.0.0.0"));
  options.host = "127.0.0.1";
  options.tls.client_ca_file = ca_->ca_file();
  EXPECT_THAT(ServerRunner::Start(options, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--tls_client_ca: requires --tls_cert and --tls_key"));
  auto other = ca_->IssueLoopback("other");
  ASSERT_TRUE(other.ok());
  options.tls = ServerFiles(server_);
  options.tls.key_file = other->key_file;
  EXPECT_THAT(ServerRunner::Start(options, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--tls_key: the key does not match the certificate of --tls_cert"));
  options.tls = ServerFiles(server_);
  options.tls.cert_file = ca_->ca_file() + ".missing";
  EXPECT_THAT(
      ServerRunner::Start(options, {}).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("--tls_cert: cannot read")));
  // Off loopback with TLS is allowed.
  options.tls = ServerFiles(server_);
  options.host = "0.0.0.0";
  EXPECT_TRUE(ServerRunner::Start(options, {}).ok());
}

TEST(ChannelTest, PlaintextReachesOnlyLoopback) {
  EXPECT_TRUE(client::IsLoopbackTarget("127.0.0.1:1"));
  EXPECT_TRUE(client::IsLoopbackTarget("localhost:1"));
  EXPECT_TRUE(client::IsLoopbackTarget("[::1]:1"));
  EXPECT_TRUE(client::IsLoopbackTarget("dns:///localhost:1"));
  EXPECT_TRUE(client::IsLoopbackTarget("ipv4:127.0.0.1:1"));
  EXPECT_TRUE(client::IsLoopbackTarget("unix:/tmp/socket"));
  EXPECT_FALSE(client::IsLoopbackTarget("10.0.0.1:1"));
  EXPECT_FALSE(client::IsLoopbackTarget("audit:50053"));
  EXPECT_FALSE(client::IsLoopbackTarget("dns:///audit.sharedos:50053"));
  EXPECT_FALSE(client::IsLoopbackTarget("[2001:db8::1]:1"));
  EXPECT_THAT(client::NewChannel("audit:50053", {}, "--audit_target").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--audit_target: plaintext is allowed only on loopback; give --tls_ca to "
                       "reach audit:50053"));
  EXPECT_THAT(client::NewChannel("", {}, "--audit_target").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "--audit_target: required"));
  client::ChannelTls tls;
  tls.client_cert_file = "cert.pem";
  EXPECT_THAT(client::NewChannel("127.0.0.1:1", tls, "--audit_target").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--tls_client_key: required with --tls_client_cert"));
  tls = {};
  tls.ca_file = "/nonexistent/ca.pem";
  EXPECT_THAT(client::NewChannel("audit:50053", tls, "--audit_target").status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("--tls_ca: cannot read")));
}

// The subject CN of the certificate an HTTPS server on `port` presents ("" when refused).
std::string PresentedName(int port, const std::string& ca_file) {
  httplib::SSLClient client("127.0.0.1", port);
  client.set_ca_cert_path(ca_file.c_str());
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(3, 0);
  auto result = client.Get("/name");
  if (!result || result->status != 200) return "";
  return result->body;
}

TEST_F(TlsTest, AnHttpsListenerPresentsTheWatchedPairAndPicksUpARotation) {
  ServerTls tls = ServerFiles(server_);
  SimulatedClock clock(absl::Now());
  tls.clock = &clock;
  auto watcher = KeyPairWatcher::Load(tls);
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  httplib::SSLServer http([&](SSL_CTX& ctx) { return (*watcher)->Install(ctx); });
  ASSERT_TRUE(http.is_valid());
  http.Get("/name", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok", "text/plain");
  });
  const int port = http.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread loop([&] { http.listen_after_bind(); });
  while (!http.is_running()) std::this_thread::yield();

  EXPECT_EQ(PresentedName(port, ca_->ca_file()), "ok");
  EXPECT_EQ(PresentedName(port, other_ca_->ca_file()), "");
  ASSERT_TRUE(other_ca_->IssueLoopback("server").ok());
  // Within the reload interval the files are not looked at again.
  clock.AdvanceTime(tls.reload_interval - absl::Milliseconds(1));
  EXPECT_EQ(PresentedName(port, other_ca_->ca_file()), "");
  clock.AdvanceTime(absl::Milliseconds(1));
  EXPECT_EQ(PresentedName(port, other_ca_->ca_file()), "ok");
  EXPECT_EQ(PresentedName(port, ca_->ca_file()), "");
  http.stop();
  loop.join();
}

TEST_F(TlsTest, AWatcherKeepsTheLastGoodPairWhenTheFilesAreBroken) {
  ServerTls tls = ServerFiles(server_);
  tls.reload_interval = absl::ZeroDuration();
  auto watcher = KeyPairWatcher::Load(tls);
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  auto other = ca_->IssueLoopback("unrelated");
  ASSERT_TRUE(other.ok());
  // The key replaced by one that does not match the certificate: not taken.
  ASSERT_EQ(std::rename(other->key_file.c_str(), server_.key_file.c_str()), 0);
  EXPECT_FALSE((*watcher)->MaybeReload());
  // A whole new pair: taken.
  ASSERT_TRUE(ca_->IssueLoopback("server").ok());
  EXPECT_TRUE((*watcher)->MaybeReload());
}

TEST_F(TlsTest, AnHttpListenerServesPlaintextOnlyOnLoopbackAndNeverAsksForAClientCertificate) {
  auto plaintext =
      HttpListenerKeyPair(ServerTls{}, "127.0.0.1", "--mcp_host", "the MCP front door");
  ASSERT_TRUE(plaintext.ok()) << plaintext.status();
  EXPECT_EQ(*plaintext, nullptr);
  EXPECT_THAT(HttpListenerKeyPair(ServerTls{}, "0.0.0.0", "--console_host", "the console"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--console_host: the console serves plaintext HTTP only on "
                                 "loopback (got 0.0.0.0)")));
  ServerTls tls = ServerFiles(server_);
  tls.client_ca_file = "/nonexistent/client-ca.pem";
  auto https = HttpListenerKeyPair(tls, "0.0.0.0", "--witness_host", "the witness");
  ASSERT_TRUE(https.ok()) << https.status();
  EXPECT_NE(*https, nullptr);
}

}  // namespace
}  // namespace sharedos::common::server
