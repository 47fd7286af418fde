// BuildEnvelopeServer as both composition roots use it: the shipped registry, the files
// provider on a directory under TEST_TMPDIR, the MCP front door, decisions through an injected
// authorizer client; served on port 0, a host opens a turn over the wire. Its options are checked,
// naming the flags.
#include "envelope_svc/server/envelope_server.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"

namespace sharedos::envelope::server {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::common::server::Authenticator;
using ::sharedos::common::server::ServerOptions;
using ::sharedos::common::server::ServerRunner;
using ::sharedos::common::server::TokenDigestHex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kSecret[] = "envelope-server-test-mcp-secret-32-bytes";

std::string StandardTools() {
  return std::string(std::getenv("TEST_SRCDIR")) +
         "/sharedos/envelope_svc/config/standard_tools.textproto";
}

class EnvelopeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = Authenticator::FromJson(
        R"({"credentials": [{"name": "host-a", "role": "host", "token_sha256": ")" +
        TokenDigestHex("host") + R"(", "scope": {"namespaces": ["world-1"], "owners": ["*"]}}]})");
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    files_root_ = std::string(std::getenv("TEST_TMPDIR")) + "/files";
    mkdir(files_root_.c_str(), 0700);
  }

  EnvelopeServerDeps Deps() {
    return {std::make_unique<authorizer::client::FakeAuthorizerClient>(),
            std::make_unique<audit::client::FakeAuditWriter>(), *authenticator_, clock_};
  }

  EnvelopeServerOptions Options() {
    EnvelopeServerOptions options;
    options.registry_files = {StandardTools()};
    options.files_root = files_root_;
    options.mcp = McpFrontDoor{kSecret, {}};
    return options;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::unique_ptr<Authenticator> authenticator_;
  std::string files_root_;
};

TEST_F(EnvelopeServerTest, ServesTurnsOnAFreePortWithTheMcpFrontDoorBeside) {
  auto built = BuildEnvelopeServer(Deps(), Options());
  ASSERT_TRUE(built.ok()) << built.status();
  EnvelopeServer& server = **built;
  EXPECT_GT(server.tool_count(), 1u);
  EXPECT_THAT(server.mcp_url(), StartsWith("http://127.0.0.1:"));
  EXPECT_THAT(server.side_listeners(),
              ElementsAre(std::pair<std::string, std::string>("mcp", server.mcp_url())));
  auto runner = ServerRunner::Start(ServerOptions{}, server.services());
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_GT((*runner)->port(), 0);

  auto stub = v1::Envelope::NewStub(
      grpc::CreateChannel((*runner)->address(), grpc::InsecureChannelCredentials()));
  v1::OpenTurnRequest open;
  *open.mutable_execution_request() =
      core::testing::TestExecutionRequest({"files.read", "sharedos.escalate"});
  open.set_runtime(v1::RUNTIME_MCP);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer host");
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::OpenTurnResponse opened;
  grpc::Status status = stub->OpenTurn(&context, open, &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(opened.has_result()) << opened.result().DebugString();
  EXPECT_EQ(opened.catalog().tools_size(), 2);
  EXPECT_EQ(opened.mcp().url(), server.mcp_url());
  server.StopSideListeners();
}

TEST_F(EnvelopeServerTest, WithoutFilesRootOrSecretNeitherIsOffered) {
  EnvelopeServerOptions options = Options();
  options.files_root.clear();
  options.mcp.reset();
  auto built = BuildEnvelopeServer(Deps(), std::move(options));
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ((*built)->mcp_url(), "");
  EXPECT_TRUE((*built)->side_listeners().empty());
  std::unique_ptr<grpc::Service> second = (*built)->NewService();
  EXPECT_NE(second, nullptr);
}

TEST_F(EnvelopeServerTest, OptionsAreCheckedNamingTheFlag) {
  EnvelopeServerOptions options = Options();
  options.registry_files.clear();
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument, "--registry: required"));
  options = Options();
  options.registry_files = {"/nonexistent/registry.textproto"};
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--registry: ")));
  options = Options();
  options.files_root = "/nonexistent/files";
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--files_root: ")));
  options = Options();
  options.mcp->secret = "short";
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--mcp_secret_file: the secret must hold at least 32 bytes"));
  options = Options();
  options.mcp->server.host = "10.1.2.3";
  EXPECT_THAT(
      BuildEnvelopeServer(Deps(), options),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("--mcp_host: the MCP front door serves plaintext HTTP only on loopback")));
  options = Options();
  options.engine.drain_grace = absl::Seconds(601);
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument, "--drain_grace: must be 0s..600s"));
  options = Options();
  options.replica.peers = {{"r2", "127.0.0.1:1"}};
  EXPECT_THAT(
      BuildEnvelopeServer(Deps(), options),
      StatusIs(absl::StatusCode::kInvalidArgument, "--replica_peers: needs --replica_name"));
  options = Options();
  options.replica.name = "R1";
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--replica_name: ")));
  options = Options();
  options.replica.name = "r1";
  options.replica.peers = {{"r2", "10.1.2.3:1"}};
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--replica_peers: plaintext is allowed only on loopback")));
  options = Options();
  options.replica.name = "r1";
  options.replica.peers = {{"r2", "127.0.0.1:1"}};
  options.builtin_messaging = true;
  EXPECT_THAT(BuildEnvelopeServer(Deps(), options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--replica_token_file: required with --replica_peers and the "
                                 "built-in messaging")));
  options = Options();
  options.replica.name = "r1";
  options.drain_timeout = absl::Seconds(601);
  EXPECT_THAT(
      BuildEnvelopeServer(Deps(), options),
      StatusIs(absl::StatusCode::kInvalidArgument, "--replica_drain_timeout: must be 0s..600s"));
}

TEST(CheckTurnOptionsTest, NamesEachFlagOutOfBounds) {
  core::TurnEngine::Options options;
  EXPECT_THAT(CheckTurnOptions(options), IsOk());
  options.default_max_steps = 0;
  EXPECT_THAT(CheckTurnOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument, "--default_max_steps: must be 1..1000"));
  options = {};
  options.default_timeout_ms = 600001;
  EXPECT_THAT(CheckTurnOptions(options), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  "--default_timeout_ms: must be 1..600000"));
  options = {};
  options.drain_grace = -absl::Seconds(1);
  EXPECT_THAT(CheckTurnOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument, "--drain_grace: must be 0s..600s"));
}

}  // namespace
}  // namespace sharedos::envelope::server
