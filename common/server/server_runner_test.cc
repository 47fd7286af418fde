#include "common/server/server_runner.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <future>
#include <string>

#include "absl/strings/match.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"

extern char** environ;

namespace sharedos::common::server {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

std::string ToString(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

grpc::ByteBuffer FromString(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// grpc.health.v1.Health/Check for the whole server, spoken as raw protobuf bytes: the request
// is an empty message; a SERVING answer is field 1 = 1 (bytes 08 01).
grpc::Status HealthCheck(const std::string& address, std::string* response_bytes) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::ByteBuffer request = FromString("");
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  grpc::Status status = done.get_future().get();
  if (status.ok()) *response_bytes = ToString(response);
  return status;
}

// grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo with list_services (field 7 = "").
class ListServicesReactor : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit ListServicesReactor(grpc::GenericStub* stub) {
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    request_ = FromString(std::string("\x3a\x00", 2));
    stub->PrepareBidiStreamingCall(&context_,
                                   "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                                   grpc::StubOptions(), this);
    StartWrite(&request_);
    StartRead(&response_);
    StartCall();
  }
  void OnWriteDone(bool) override { StartWritesDone(); }
  void OnReadDone(bool ok) override {
    if (ok) bytes_ += ToString(response_);
  }
  void OnDone(const grpc::Status& status) override { done_.set_value(status); }
  grpc::Status Await() { return done_.get_future().get(); }
  const std::string& bytes() const { return bytes_; }

 private:
  grpc::ClientContext context_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
  std::string bytes_;
  std::promise<grpc::Status> done_;
};

TEST(ServerRunnerTest, PortZeroBindsAFreePortAndServesHealth) {
  auto runner = ServerRunner::Start(ServerOptions{}, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_GT((*runner)->port(), 0);
  EXPECT_EQ((*runner)->address(), "127.0.0.1:" + std::to_string((*runner)->port()));

  std::string response;
  grpc::Status status = HealthCheck((*runner)->address(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response, std::string("\x08\x01", 2));  // SERVING
}

TEST(ServerRunnerTest, ReflectionListsTheHealthService) {
  auto runner = ServerRunner::Start(ServerOptions{}, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  auto channel = grpc::CreateChannel((*runner)->address(), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  ListServicesReactor reactor(&stub);
  grpc::Status status = reactor.Await();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(reactor.bytes(), HasSubstr("grpc.health.v1.Health"));
  EXPECT_THAT(reactor.bytes(), HasSubstr("grpc.reflection.v1alpha.ServerReflection"));
}

TEST(ServerRunnerTest, ShutdownStopsServing) {
  auto runner = ServerRunner::Start(ServerOptions{}, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  const std::string address = (*runner)->address();
  (*runner)->Shutdown();
  (*runner)->Wait();
  std::string response;
  EXPECT_FALSE(HealthCheck(address, &response).ok());
}

TEST(ServerRunnerTest, AnInternalServerServesInProcessOnly) {
  ServerOptions options;
  options.listen = false;
  options.host = "0.0.0.0";  // ignored without a listener
  auto runner = ServerRunner::Start(options, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_EQ((*runner)->port(), 0);
  grpc::GenericStub stub((*runner)->InProcessChannel());
  grpc::ClientContext context;
  grpc::ByteBuffer request = FromString(""), response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  grpc::Status status = done.get_future().get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(ToString(response), std::string("\x08\x01", 2));
}

TEST(ServerRunnerTest, RefusesPlaintextOffLoopback) {
  ServerOptions options;
  options.host = "0.0.0.0";
  EXPECT_THAT(ServerRunner::Start(options, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--host: plaintext is allowed only on loopback")));
}

TEST(ServerRunnerTest, RefusesHalfATlsConfiguration) {
  ServerOptions options;
  options.tls.cert_file = "/nonexistent/cert.pem";
  EXPECT_THAT(ServerRunner::Start(options, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "--tls_key: required with --tls_cert"));
}

TEST(ServerRunnerTest, RefusesUnreadableTlsFiles) {
  ServerOptions options;
  options.tls.cert_file = "/nonexistent/cert.pem";
  options.tls.key_file = "/nonexistent/key.pem";
  EXPECT_THAT(ServerRunner::Start(options, {}).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("--tls_cert: cannot read /nonexistent/cert.pem")));
}

TEST(ServerRunnerTest, RefusesAnOutOfRangePort) {
  ServerOptions options;
  options.port = 70000;
  EXPECT_THAT(ServerRunner::Start(options, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("port")));
}

// The bootstrap as a real process: it prints the bound address, serves health, and exits 0
// on SIGTERM after a graceful shutdown.
TEST(ServerRunnerProcessTest, SigtermShutsDownGracefully) {
  const std::string binary =
      std::string(std::getenv("TEST_SRCDIR")) + "/sharedos/common/server/sample_server";
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  pid_t pid = 0;
  char* argv[] = {const_cast<char*>(binary.c_str()), nullptr};
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);

  std::string output;
  char buffer[256];
  while (output.find('\n') == std::string::npos) {
    ssize_t n = read(out[0], buffer, sizeof(buffer));
    ASSERT_GT(n, 0) << "server exited before reporting its address";
    output.append(buffer, static_cast<size_t>(n));
  }
  const std::string prefix = "sample_server listening on ";
  ASSERT_TRUE(absl::StartsWith(output, prefix)) << output;
  const std::string address = output.substr(prefix.size(), output.find('\n') - prefix.size());

  std::string response;
  grpc::Status health = HealthCheck(address, &response);
  EXPECT_TRUE(health.ok()) << health.error_message();

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  ASSERT_TRUE(WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 0);
  ssize_t n;
  while ((n = read(out[0], buffer, sizeof(buffer))) > 0)
    output.append(buffer, static_cast<size_t>(n));
  close(out[0]);
  EXPECT_THAT(output, HasSubstr("sample_server stopped"));
}

}  // namespace
}  // namespace sharedos::common::server
