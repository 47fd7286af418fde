#include "tests/e2e/e2e_deployment.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/process.h"

namespace sharedos::e2e {
namespace {

namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::SharedosdDeployment;
using Service = FourProcessDeployment::Service;

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
  absl::Status workspace = demo::WriteWorkspace(files_root_);
  ASSERT_TRUE(workspace.ok()) << workspace;
  MustWrite(dir_ + "/registry.textproto", registry_);
  if (sharedosd()) {
    StartSharedosd();
  } else {
    StartFourProcesses();
  }
}

void DeploymentTest::StartFourProcesses() {
  FourProcessDeployment::Options options;
  options.dir = dir_;
  options.registry = dir_ + "/registry.textproto";
  options.files_root = files_root_;
  options.providers = providers_;
  options.envelope_args = envelope_args_;
  options.envelope_args.insert(options.envelope_args.end(), engine_args_.begin(),
                               engine_args_.end());
  auto started = FourProcessDeployment::Start(std::move(options));
  ASSERT_TRUE(started.ok()) << started.status();
  four_ = *std::move(started);
  admin_token_ = four_->admin_token();
  host_token_ = four_->host_token();
  Connect();
}

// One process serving all four services, with the tokens it minted into its data directory.
void DeploymentTest::StartSharedosd() {
  SharedosdDeployment::Options options;
  options.data_dir = dir_ + "/sharedosd-data";
  options.files_root = files_root_;
  if (sharedosd_registry_) options.registry = dir_ + "/registry.textproto";
  options.args = engine_args_;
  auto started = SharedosdDeployment::Start(std::move(options));
  ASSERT_TRUE(started.ok()) << started.status();
  sharedosd_ = *std::move(started);
  admin_token_ = sharedosd_->admin_token();
  host_token_ = sharedosd_->host_token();
  Connect();
}

void DeploymentTest::Connect() {
  envelope_address_ = four_ ? four_->envelope_address() : sharedosd_->address();
  const std::string grantstore = four_ ? four_->grantstore_address() : sharedosd_->address();
  const std::string audit = four_ ? four_->audit_address() : sharedosd_->address();
  envelope_stub_ = envelope::v1::Envelope::NewStub(
      grpc::CreateChannel(envelope_address_, grpc::InsecureChannelCredentials()));
  grants_ = grantstore::v1::GrantStore::NewStub(
      grpc::CreateChannel(grantstore, grpc::InsecureChannelCredentials()));
  audit_stub_ =
      audit::v1::AuditLog::NewStub(grpc::CreateChannel(audit, grpc::InsecureChannelCredentials()));
}

void DeploymentTest::TearDown() {
  // Clients first (an idle channel does not process the server's GOAWAY), then the services in
  // reverse order of their dependencies.
  envelope_stub_.reset();
  grants_.reset();
  audit_stub_.reset();
  if (four_) {
    absl::Status stopped = four_->StopAll();
    EXPECT_TRUE(stopped.ok()) << stopped;
  }
  if (sharedosd_) {
    absl::Status stopped = sharedosd_->Stop();
    EXPECT_TRUE(stopped.ok()) << stopped;
  }
}

void DeploymentTest::StopGrantstore() {
  ASSERT_FALSE(sharedosd()) << "sharedosd has no separate grant store";
  ASSERT_NE(four_, nullptr);
  absl::Status stopped = four_->Stop(Service::kGrantstore);
  EXPECT_TRUE(stopped.ok()) << stopped;
}

void DeploymentTest::StopAudit() {
  ASSERT_FALSE(sharedosd()) << "sharedosd has no separate audit service";
  ASSERT_NE(four_, nullptr);
  absl::Status stopped = four_->Stop(Service::kAudit);
  EXPECT_TRUE(stopped.ok()) << stopped;
}

void DeploymentTest::RestartAudit() {
  ASSERT_FALSE(sharedosd()) << "sharedosd has no separate audit service";
  ASSERT_NE(four_, nullptr);
  absl::Status restarted = four_->Restart(Service::kAudit);
  ASSERT_TRUE(restarted.ok()) << restarted;
  Connect();
}

std::unique_ptr<grpc::ClientContext> DeploymentTest::As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

void DeploymentTest::IssueGrant(const protocol::v1::CapabilityGrant& grant) {
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = grant;
  grantstore::v1::IssueGrantResponse issued;
  grpc::Status status = grants_->IssueGrant(As(admin_token_).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message() << "\n" << grant.DebugString();
}

void DeploymentTest::IssueGrant(const std::string& grant_text) {
  IssueGrant(Parse<protocol::v1::CapabilityGrant>(grant_text));
}

std::vector<protocol::v1::AuditEvent> DeploymentTest::AuditUntil(
    const std::function<bool(const std::vector<protocol::v1::AuditEvent>&)>& done) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Bearer ", admin_token_));
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  audit::v1::TailRequest request;
  request.mutable_filter()->set_namespace_id(demo::kNamespace);
  request.set_from_sequence(1);
  auto reader = audit_stub_->Tail(&context, request);
  std::vector<protocol::v1::AuditEvent> events;
  audit::v1::TailResponse response;
  audit_records_.clear();
  while (!done(events) && reader->Read(&response)) {
    if (response.record().has_event()) events.push_back(response.record().event());
    audit_records_.push_back(response.record());
  }
  context.TryCancel();
  reader->Finish().IgnoreError();
  return events;
}

}  // namespace sharedos::e2e
