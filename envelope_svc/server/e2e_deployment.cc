#include "envelope_svc/server/e2e_deployment.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/server/auth.h"

namespace sharedos::envelope::e2e {
namespace {

using ::sharedos::testing::Process;

constexpr char kAdminToken[] = "e2e-admin-token-0123456789";
constexpr char kServiceToken[] = "e2e-service-token-0123456789";
constexpr char kHostToken[] = "e2e-host-token-0123456789";

void MustWrite(const std::string& path, const std::string& content) {
  absl::Status written = sharedos::testing::WriteFile(path, content);
  ASSERT_TRUE(written.ok()) << written;
}

}  // namespace

std::string DeploymentName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Sharedosd" : "FourProcesses";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void DeploymentTest::SetUp() {
  // One directory per test of the binary.
  static int tests_started = 0;
  dir_ = sharedos::testing::TempPath(
      absl::StrCat(sharedosd() ? "envelope-e2e-sharedosd-" : "envelope-e2e-", ++tests_started));
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0) << dir_;
  files_root_ = dir_ + "/files";
  ASSERT_EQ(mkdir(files_root_.c_str(), 0700), 0);
  for (const std::string sub : {"/human", "/human/user-alice", "/human/user-alice/workspace",
                                "/human/user-alice/workspace/Workspace"}) {
    ASSERT_EQ(mkdir((files_root_ + sub).c_str(), 0700), 0) << sub;
  }
  MustWrite(dir_ + "/registry.textproto", registry_);
  if (sharedosd()) {
    StartSharedosd();
  } else {
    StartFourProcesses();
  }
}

void DeploymentTest::StartFourProcesses() {
  admin_token_ = kAdminToken;
  host_token_ = kHostToken;
  MustWrite(
      dir_ + "/credentials.json",
      absl::StrCat(R"({"credentials": [)", R"({"name": "ops", "role": "admin", "token_sha256": ")",
                   common::server::TokenDigestHex(kAdminToken), R"("},)",
                   R"({"name": "services", "role": "service", "token_sha256": ")",
                   common::server::TokenDigestHex(kServiceToken), R"("},)",
                   R"({"name": "host-a", "role": "host", "token_sha256": ")",
                   common::server::TokenDigestHex(kHostToken),
                   R"(", "scope": {"namespaces": ["world-demo"], )",
                   R"("owners": ["human:user-alice"]}}]})"));
  MustWrite(dir_ + "/service.token", std::string(kServiceToken) + "\n");
  MustWrite(dir_ + "/lease.secret", "e2e-lease-secret-0123456789abcdef0123456789");
  const std::string credentials = "--credentials=" + dir_ + "/credentials.json";
  const std::string token_file = dir_ + "/service.token";

  audit_args_ = {"--db=" + dir_ + "/audit.db", "--durability=normal", credentials};
  std::vector<std::string> args = {"--port=0"};
  args.insert(args.end(), audit_args_.begin(), audit_args_.end());
  audit_ = StartService("audit_svc/server/audit_svc", "audit_svc", args);
  auto audit_flags = [&](const std::string& name) {
    return std::vector<std::string>{"--audit=remote", "--audit_target=" + audit_address_,
                                    "--audit_token_file=" + token_file,
                                    "--audit_outbox=" + dir_ + "/" + name + ".outbox"};
  };
  args = {"--port=0", "--db=" + dir_ + "/grantstore.db", credentials};
  for (const std::string& flag : audit_flags("grantstore")) args.push_back(flag);
  grantstore_ = StartService("grantstore_svc/server/grantstore_svc", "grantstore_svc", args);
  args = {"--port=0", credentials, "--grantstore_target=" + grantstore_address_,
          "--grantstore_token_file=" + token_file, "--lease_secret_file=" + dir_ + "/lease.secret"};
  for (const std::string& flag : audit_flags("authorizer")) args.push_back(flag);
  authorizer_ = StartService("authorizer_svc/server/authorizer_svc", "authorizer_svc", args);
  args = {"--port=0",
          credentials,
          "--authorizer_target=" + authorizer_address_,
          "--authorizer_token_file=" + token_file,
          "--registry=" + dir_ + "/registry.textproto",
          "--files_root=" + files_root_};
  for (const std::string& flag : audit_flags("envelope")) args.push_back(flag);
  args.insert(args.end(), envelope_args_.begin(), envelope_args_.end());
  args.insert(args.end(), engine_args_.begin(), engine_args_.end());
  envelope_ = StartService("envelope_svc/server/envelope_svc", "envelope_svc", args);
  Connect();
}

// One process serving all four services, with the tokens it minted into its data directory.
void DeploymentTest::StartSharedosd() {
  const std::string data = dir_ + "/sharedosd-data";
  std::vector<std::string> args = {"--port=0", "--data_dir=" + data, "--files_root=" + files_root_,
                                   "--durability=normal"};
  if (sharedosd_registry_) args.push_back("--registry=" + dir_ + "/registry.textproto");
  args.insert(args.end(), engine_args_.begin(), engine_args_.end());
  auto process = Process::Start("sharedosd/sharedosd", args);
  ASSERT_TRUE(process.ok()) << process.status();
  envelope_ = std::make_unique<Process>(*std::move(process));
  auto address = envelope_->WaitForLine("sharedosd listening on ", absl::Seconds(60));
  ASSERT_TRUE(address.ok()) << address.status();
  audit_address_ = grantstore_address_ = authorizer_address_ = envelope_address_ = *address;
  admin_token_ = sharedos::testing::ReadFirstLine(data + "/admin.token");
  host_token_ = sharedos::testing::ReadFirstLine(data + "/host.token");
  Connect();
}

void DeploymentTest::Connect() {
  envelope_stub_ = v1::Envelope::NewStub(
      grpc::CreateChannel(envelope_address_, grpc::InsecureChannelCredentials()));
  grants_ = grantstore::v1::GrantStore::NewStub(
      grpc::CreateChannel(grantstore_address_, grpc::InsecureChannelCredentials()));
  audit_stub_ = audit::v1::AuditLog::NewStub(
      grpc::CreateChannel(audit_address_, grpc::InsecureChannelCredentials()));
}

void DeploymentTest::TearDown() {
  envelope_stub_.reset();
  grants_.reset();
  audit_stub_.reset();
  // Clients first, then the services in reverse order of their dependencies.
  for (std::unique_ptr<Process>* process : {&envelope_, &authorizer_, &grantstore_, &audit_}) {
    if (*process) {
      EXPECT_EQ((*process)->Terminate(), 0) << (*process)->output();
    }
  }
}

void DeploymentTest::StopGrantstore() {
  ASSERT_FALSE(sharedosd()) << "sharedosd has no separate grant store";
  ASSERT_NE(grantstore_, nullptr);
  EXPECT_EQ(grantstore_->Terminate(), 0) << grantstore_->output();
  grantstore_.reset();
}

void DeploymentTest::StopAudit() {
  ASSERT_FALSE(sharedosd()) << "sharedosd has no separate audit service";
  ASSERT_NE(audit_, nullptr);
  EXPECT_EQ(audit_->Terminate(), 0) << audit_->output();
  audit_.reset();
}

void DeploymentTest::RestartAudit() {
  ASSERT_FALSE(sharedosd()) << "sharedosd has no separate audit service";
  ASSERT_EQ(audit_, nullptr);
  const std::string former = audit_address_;
  std::vector<std::string> args = {"--port=" + former.substr(former.rfind(':') + 1)};
  args.insert(args.end(), audit_args_.begin(), audit_args_.end());
  audit_ = StartService("audit_svc/server/audit_svc", "audit_svc", args);
  ASSERT_NE(audit_, nullptr);
  ASSERT_EQ(audit_address_, former);
  Connect();
}

std::unique_ptr<Process> DeploymentTest::StartService(const std::string& binary,
                                                      const std::string& name,
                                                      const std::vector<std::string>& args) {
  auto process = Process::Start(binary, args);
  EXPECT_TRUE(process.ok()) << process.status();
  if (!process.ok()) return nullptr;
  auto started = std::make_unique<Process>(*std::move(process));
  auto address = started->WaitForLine(name + " listening on ", absl::Seconds(60));
  EXPECT_TRUE(address.ok()) << address.status();
  std::string* target = name == "audit_svc"        ? &audit_address_
                        : name == "grantstore_svc" ? &grantstore_address_
                        : name == "authorizer_svc" ? &authorizer_address_
                                                   : &envelope_address_;
  *target = address.ok() ? *address : "";
  return started;
}

std::unique_ptr<grpc::ClientContext> DeploymentTest::As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

void DeploymentTest::IssueGrant(const std::string& grant_text) {
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = Parse<protocol::v1::CapabilityGrant>(grant_text);
  grantstore::v1::IssueGrantResponse issued;
  grpc::Status status = grants_->IssueGrant(As(admin_token_).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << grant_text;
}

std::vector<protocol::v1::AuditEvent> DeploymentTest::AuditUntil(
    const std::function<bool(const std::vector<protocol::v1::AuditEvent>&)>& done) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Bearer ", admin_token_));
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  audit::v1::TailRequest request;
  request.mutable_filter()->set_namespace_id("world-demo");
  request.set_from_sequence(1);
  auto reader = audit_stub_->Tail(&context, request);
  std::vector<protocol::v1::AuditEvent> events;
  audit::v1::TailResponse response;
  while (!done(events) && reader->Read(&response)) events.push_back(response.record().event());
  context.TryCancel();
  reader->Finish().IgnoreError();
  return events;
}

}  // namespace sharedos::envelope::e2e
