// Durability of acknowledged writes: start the real grantstore_svc binary, stream IssueGrant
// calls, kill -9 it mid-stream, restart it on the same file and check that every grant whose
// IssueGrant was acknowledged is there.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/server/auth.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

extern char** environ;

namespace sharedos::grantstore::server {
namespace {

constexpr char kAdminToken[] = "admin-token-durability";

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

// A running grantstore_svc child process.
class Server {
 public:
  Server(const std::string& db, const std::string& credentials) {
    const std::string binary =
        absl::StrCat(std::getenv("TEST_SRCDIR"), "/sharedos/grantstore_svc/server/grantstore_svc");
    int out[2];
    if (pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> args = {binary, "--port=0", absl::StrCat("--db=", db),
                                     absl::StrCat("--credentials=", credentials),
                                     "--audit=discard"};
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const bool spawned =
        posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (!spawned) {
      close(out[0]);
      pid_ = 0;
      return;
    }
    // Read until the "listening on" line (blocking reads: no sleeps).
    const std::string prefix = "grantstore_svc listening on ";
    std::string output;
    char c;
    while (read(out[0], &c, 1) == 1) {
      if (c != '\n') {
        output.push_back(c);
        continue;
      }
      if (absl::StartsWith(output, prefix)) {
        address_ = output.substr(prefix.size());
        break;
      }
      output.clear();
    }
    out_ = out[0];
  }

  ~Server() {
    Kill(SIGKILL);
    if (out_ >= 0) close(out_);
  }

  const std::string& address() const { return address_; }

  // Sends `signal` and reaps the process.
  void Kill(int signal) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
  }

 private:
  pid_t pid_ = 0;
  int out_ = -1;
  std::string address_;
};

sharedos::protocol::v1::CapabilityGrant Grant(int i) {
  sharedos::protocol::v1::CapabilityGrant grant;
  grant.set_id(absl::StrCat("grant-", i));
  grant.set_namespace_id("world");
  grant.mutable_subject()->set_agent_id(absl::StrCat("agent-", i % 7));
  grant.mutable_issuer()->set_human_user_id("alice");
  auto* capability = grant.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path(absl::StrCat("doc-", i));
  capability->mutable_resource()->mutable_owner()->set_human_user_id("alice");
  capability->add_actions("read");
  capability->set_scope(sharedos::protocol::v1::SCOPE_EXACT);
  grant.mutable_constraints();
  grant.mutable_issued_at()->set_seconds(1700000000 + i);
  return grant;
}

std::unique_ptr<grpc::ClientContext> Admin() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", absl::StrCat("Bearer ", kAdminToken));
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return context;
}

TEST(DurabilityTest, EveryAcknowledgedGrantSurvivesKillNine) {
  const std::string db = TempPath("durability.db");
  for (const char* extension : {"", "-wal", "-shm"}) {
    std::remove(absl::StrCat(db, extension).c_str());
  }
  const std::string credentials = TempPath("credentials.json");
  {
    std::ofstream file(credentials);
    file << R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")"
         << common::server::TokenDigestHex(kAdminToken) << R"("}]})";
  }

  std::vector<int> acknowledged;
  int64_t last_revision = 0;
  {
    Server server(db, credentials);
    ASSERT_FALSE(server.address().empty()) << "grantstore_svc did not start";
    auto stub = v1::GrantStore::NewStub(
        grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));

    // Two writers stream IssueGrant calls until the server dies under them.
    absl::Mutex mu;
    int acked = 0;
    std::vector<std::thread> writers;
    std::vector<std::vector<int>> acked_by(2);
    std::vector<int64_t> revisions(2, 0);
    for (int w = 0; w < 2; ++w) {
      writers.emplace_back([&, w] {
        for (int i = w;; i += 2) {
          v1::IssueGrantRequest request;
          *request.mutable_grant() = Grant(i);
          v1::IssueGrantResponse response;
          if (!stub->IssueGrant(Admin().get(), request, &response).ok()) return;
          acked_by[w].push_back(i);
          revisions[w] = std::max(revisions[w], response.revision());
          absl::MutexLock lock(&mu);
          ++acked;
        }
      });
    }
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(
          +[](int* count) { return *count >= 300; }, &acked));
    }
    server.Kill(SIGKILL);  // Mid-stream: both writers have calls in flight.
    for (std::thread& writer : writers) writer.join();
    for (int w = 0; w < 2; ++w) {
      acknowledged.insert(acknowledged.end(), acked_by[w].begin(), acked_by[w].end());
      last_revision = std::max(last_revision, revisions[w]);
    }
  }
  ASSERT_GE(acknowledged.size(), 300u);

  Server restarted(db, credentials);
  ASSERT_FALSE(restarted.address().empty()) << "grantstore_svc did not restart";
  auto stub = v1::GrantStore::NewStub(
      grpc::CreateChannel(restarted.address(), grpc::InsecureChannelCredentials()));
  int missing = 0;
  for (int i : acknowledged) {
    v1::GetGrantRequest request;
    request.set_namespace_id("world");
    request.set_grant_id(absl::StrCat("grant-", i));
    v1::GetGrantResponse response;
    const grpc::Status status = stub->GetGrant(Admin().get(), request, &response);
    if (!status.ok()) {
      ++missing;
      ADD_FAILURE() << "acknowledged grant-" << i << " lost: " << status.error_message();
      continue;
    }
    EXPECT_EQ(response.grant().SerializeAsString(), Grant(i).SerializeAsString());
  }
  EXPECT_EQ(missing, 0);
  // The store carries on from where it stopped: the next write takes a later revision.
  v1::IssueGrantRequest next;
  *next.mutable_grant() = Grant(1000000);
  v1::IssueGrantResponse response;
  ASSERT_TRUE(stub->IssueGrant(Admin().get(), next, &response).ok());
  EXPECT_GT(response.revision(), last_revision);
}

}  // namespace
}  // namespace sharedos::grantstore::server
