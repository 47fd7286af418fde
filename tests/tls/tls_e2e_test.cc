// TLS on every hop of a real deployment, with a CA and certificates made at test time
// (tests/testing/test_certificates.h): the four services as separate processes, each listening
// with TLS and verifying the services it calls against the CA — and, under mTLS, requiring and
// presenting client certificates. A host's turn reads a file (envelope → authorizer → grant store,
// every writer → audit_svc in remote mode, all over TLS); the audit log is read back over TLS; a
// client trusting another CA, a plaintext client and (under mTLS) a client without a certificate
// are refused; the MCP front door serves HTTPS at the URL the operator gave. And a service asked
// to listen off loopback without TLS refuses to start, naming the flag.
#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/client/channel.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tests/testing/test_certificates.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::TestCertificateAuthority;
using ::testing::StartsWith;

std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  return context;
}

// Param: false = TLS, true = mTLS.
class TlsEndToEndTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    static int started = 0;
    dir_ = sharedos::testing::TempPath(absl::StrCat("tls-e2e-", ++started));
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((dir_ + "/files").c_str(), 0700), 0);
    ASSERT_TRUE(demo::WriteWorkspace(dir_ + "/files").ok());
    ASSERT_TRUE(
        sharedos::testing::WriteFile(dir_ + "/registry.textproto", demo::RegistryText()).ok());
    auto ca = TestCertificateAuthority::Create(dir_, "deployment");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *std::move(ca);
    auto other = TestCertificateAuthority::Create(dir_, "other");
    ASSERT_TRUE(other.ok()) << other.status();
    other_ca_ = *std::move(other);
    auto services = ca_->IssueLoopback("services");
    ASSERT_TRUE(services.ok()) << services.status();
    auto client = ca_->Issue("client", "host-a", {"DNS:host-a.example"});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *client;

    FourProcessDeployment::Options options;
    options.dir = dir_;
    options.registry = dir_ + "/registry.textproto";
    options.files_root = dir_ + "/files";
    options.mcp = true;
    options.envelope_args = {"--mcp_public_url=https://mcp.sharedos.example/mcp"};
    options.tls = {ca_->ca_file(), services->cert_file, services->key_file, GetParam()};
    auto deployment = FourProcessDeployment::Start(std::move(options));
    ASSERT_TRUE(deployment.ok()) << deployment.status();
    deployment_ = *std::move(deployment);
  }

  // The test's own TLS: the deployment's CA and, under mTLS, a client certificate of it.
  common::client::ChannelTls ClientTls() const {
    common::client::ChannelTls tls;
    tls.ca_file = ca_->ca_file();
    if (GetParam()) {
      tls.client_cert_file = client_.cert_file;
      tls.client_key_file = client_.key_file;
    }
    return tls;
  }

  std::shared_ptr<grpc::Channel> Channel(const std::string& address,
                                         const common::client::ChannelTls& tls) {
    auto channel = common::client::NewChannel(address, tls, "--target");
    EXPECT_TRUE(channel.ok()) << channel.status();
    return channel.ok() ? *channel : nullptr;
  }

  // GetTurn of an unknown turn: NOT_FOUND means the call reached the envelope.
  grpc::StatusCode ReachEnvelope(const common::client::ChannelTls& tls) {
    auto stub = envelope::v1::Envelope::NewStub(Channel(deployment_->envelope_address(), tls));
    envelope::v1::GetTurnRequest request;
    request.set_turn_id("turn-unknown");
    envelope::v1::GetTurnResponse response;
    return stub->GetTurn(As(deployment_->host_token()).get(), request, &response).error_code();
  }

  std::string dir_;
  std::unique_ptr<TestCertificateAuthority> ca_, other_ca_;
  sharedos::testing::TestCertificate client_;
  std::unique_ptr<FourProcessDeployment> deployment_;
};

TEST_P(TlsEndToEndTest, ATurnRunsOverTlsOnEveryHop) {
  auto grants =
      grantstore::v1::GrantStore::NewStub(Channel(deployment_->grantstore_address(), ClientTls()));
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = demo::Grant();
  grantstore::v1::IssueGrantResponse issued;
  grpc::Status status = grants->IssueGrant(As(deployment_->admin_token()).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message();

  auto envelope =
      envelope::v1::Envelope::NewStub(Channel(deployment_->envelope_address(), ClientTls()));
  envelope::v1::OpenTurnResponse turn;
  status = envelope->OpenTurn(As(deployment_->host_token()).get(),
                              demo::TurnRequest("exec-tls-1", "trace-tls"), &turn);
  ASSERT_TRUE(status.ok()) << status.error_message();
  envelope::v1::InvokeToolRequest invoke;
  invoke.set_turn_id(turn.turn_id());
  pb::ToolCall* call = invoke.mutable_call();
  call->set_id("call-read");
  call->set_tool("files.read");
  call->set_trace_id("trace-tls");
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(R"({"path": "Workspace/notes.txt"})",
                                                          call->mutable_arguments())
                  .ok());
  call->mutable_requested_at()->set_seconds(1786438801);
  envelope::v1::InvokeToolResponse invoked;
  status = envelope->InvokeTool(As(deployment_->host_token()).get(), invoke, &invoked);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(invoked.result().status(), pb::TOOL_RESULT_STATUS_SUCCEEDED)
      << invoked.result().DebugString();
  EXPECT_EQ(invoked.result().output().struct_value().fields().at("content").string_value(),
            "buy milk\n");

  // The audit log, read over TLS, holds the grant store's, the authorizer's and the
  // envelope's records (remote writers: each reached audit_svc over TLS before answering).
  auto audit = audit::v1::AuditLog::NewStub(Channel(deployment_->audit_address(), ClientTls()));
  audit::v1::VerifyRequest verify;
  audit::v1::VerifyResponse verified;
  status = audit->Verify(As(deployment_->admin_token()).get(), verify, &verified);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(verified.ok()) << verified.DebugString();
  EXPECT_GE(verified.checked(), 3) << verified.DebugString();
}

TEST_P(TlsEndToEndTest, TheMcpFrontDoorServesHttpsAtTheUrlTheOperatorGave) {
  auto grants =
      grantstore::v1::GrantStore::NewStub(Channel(deployment_->grantstore_address(), ClientTls()));
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = demo::Grant();
  grantstore::v1::IssueGrantResponse issued;
  ASSERT_TRUE(grants->IssueGrant(As(deployment_->admin_token()).get(), issue, &issued).ok());
  auto envelope =
      envelope::v1::Envelope::NewStub(Channel(deployment_->envelope_address(), ClientTls()));
  envelope::v1::OpenTurnResponse turn;
  grpc::Status status = envelope->OpenTurn(
      As(deployment_->host_token()).get(),
      demo::TurnRequest("exec-tls-mcp", "trace-tls", envelope::v1::RUNTIME_MCP), &turn);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(turn.mcp().url(), "https://mcp.sharedos.example/mcp");

  // The listener itself, reached on loopback over HTTPS with the deployment's CA.
  const std::string& url = deployment_->mcp_url();
  ASSERT_THAT(url, StartsWith("https://127.0.0.1:"));
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  httplib::SSLClient client("127.0.0.1", port);
  client.set_ca_cert_path(ca_->ca_file().c_str());
  client.enable_server_certificate_verification(true);
  httplib::Headers headers = {{"Authorization", "Bearer " + turn.mcp().token()},
                              {"Accept", "application/json, text/event-stream"}};
  auto listed =
      client.Post("/mcp", headers, R"({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})",
                  "application/json");
  ASSERT_TRUE(listed) << httplib::to_string(listed.error());
  EXPECT_EQ(listed->status, 200) << listed->body;
  EXPECT_THAT(listed->body, ::testing::HasSubstr("files.read"));

  httplib::SSLClient untrusting("127.0.0.1", port);
  untrusting.set_ca_cert_path(other_ca_->ca_file().c_str());
  untrusting.enable_server_certificate_verification(true);
  EXPECT_FALSE(untrusting.Post("/mcp", headers, "{}", "application/json"))
      << "a certificate of another CA";
}

TEST_P(TlsEndToEndTest, ClientsThatCannotBeVerifiedOrDoNotVerifyAreRefused) {
  EXPECT_EQ(ReachEnvelope(ClientTls()), grpc::StatusCode::NOT_FOUND) << "the right CA";
  common::client::ChannelTls wrong = ClientTls();
  wrong.ca_file = other_ca_->ca_file();
  EXPECT_EQ(ReachEnvelope(wrong), grpc::StatusCode::UNAVAILABLE) << "another CA";
  EXPECT_EQ(ReachEnvelope({}), grpc::StatusCode::UNAVAILABLE) << "plaintext";
  if (GetParam()) {
    common::client::ChannelTls anonymous;
    anonymous.ca_file = ca_->ca_file();
    EXPECT_EQ(ReachEnvelope(anonymous), grpc::StatusCode::UNAVAILABLE) << "no client certificate";
    auto foreign = other_ca_->Issue("foreign", "host-a", {"DNS:host-a.example"});
    ASSERT_TRUE(foreign.ok());
    common::client::ChannelTls impostor = ClientTls();
    impostor.client_cert_file = foreign->cert_file;
    impostor.client_key_file = foreign->key_file;
    EXPECT_EQ(ReachEnvelope(impostor), grpc::StatusCode::UNAVAILABLE)
        << "a client certificate of another CA";
  }
}

INSTANTIATE_TEST_SUITE_P(Tls, TlsEndToEndTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Mutual" : "ServerOnly";
                         });

TEST(TlsStartUpTest, OffLoopbackWithoutTlsAServiceRefusesToStartNamingTheFlag) {
  const std::string dir = sharedos::testing::TempPath("tls-refused");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_TRUE(sharedos::testing::WriteFile(dir + "/credentials.json",
                                           sharedos::testing::CredentialsJson({}))
                  .ok());
  auto process = sharedos::testing::Process::Start(
      "grantstore_svc/server/grantstore_svc",
      {"--host=0.0.0.0", "--port=0", "--db=" + dir + "/grants.db",
       "--credentials=" + dir + "/credentials.json", "--audit=discard"});
  ASSERT_TRUE(process.ok()) << process.status();
  auto line = process->WaitForLine("grantstore_svc: ", absl::Seconds(30));
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(*line,
            "--host: plaintext is allowed only on loopback; give --tls_cert and --tls_key to "
            "listen on 0.0.0.0");
  EXPECT_EQ(process->Terminate(), 2);

  auto sharedosd = sharedos::testing::Process::Start(
      "sharedosd/sharedosd", {"--host=0.0.0.0", "--port=0", "--data_dir=" + dir + "/data"});
  ASSERT_TRUE(sharedosd.ok()) << sharedosd.status();
  line = sharedosd->WaitForLine("sharedosd: ", absl::Seconds(30));
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(*line, StartsWith("--host: plaintext is allowed only on loopback"));
  struct stat st;
  EXPECT_NE(stat((dir + "/data").c_str(), &st), 0) << "nothing written before the refusal";
}

}  // namespace
}  // namespace sharedos
