// The deployments the end-to-end tests run against, as a gtest fixture parameterized on the
// deployment (tests/testing/deployment.h): false = the four services as separate processes
// (audit_svc, grantstore_svc, authorizer_svc, envelope_svc — real binaries, SQLite files, remote
// audit writers with outboxes), true = one sharedosd process (the embedded default).
//
// Both serve the demo world's namespace "world-demo" (tests/testing/demo_world.h); the host
// credential's scope covers it (owner human:user-alice for the four processes, any owner for
// sharedosd). The files provider's root holds the owner's demo workspace
// (<files_root>/human/user-alice/workspace/Workspace/notes.txt). Stubs, tokens and addresses are
// ready after SetUp; TearDown stops what still runs and expects a clean exit. Not thread-safe
// (one test body).

#ifndef SHAREDOS_TESTS_E2E_E2E_DEPLOYMENT_H_
#define SHAREDOS_TESTS_E2E_E2E_DEPLOYMENT_H_

#include <google/protobuf/text_format.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/deployment.h"

namespace sharedos::e2e {

class DeploymentTest : public ::testing::TestWithParam<bool> {
 protected:
  // `registry`: the ToolRegistryConfig text the envelope loads. With `sharedosd_registry`
  // false, sharedosd keeps its shipped default (standard_tools.textproto) instead.
  DeploymentTest(std::string registry, bool sharedosd_registry)
      : registry_(std::move(registry)), sharedosd_registry_(sharedosd_registry) {}

  void SetUp() override;
  void TearDown() override;

  bool sharedosd() const { return GetParam(); }

  // Stops grantstore_svc (four processes only): the grant store becomes unreachable.
  void StopGrantstore();
  // Stops audit_svc (four processes only): pre-effect writes fail, post-effect ones wait in
  // the writers' outboxes.
  void StopAudit();
  // Starts audit_svc again on its former port and database (after StopAudit); the outboxes
  // deliver what they held.
  void RestartAudit();

  // A context with `authorization: Bearer <token>` and a 30 s deadline.
  static std::unique_ptr<grpc::ClientContext> As(const std::string& token);

  template <typename T>
  static T Parse(const std::string& text) {
    T message;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
    return message;
  }

  // Issues a grant as the admin.
  void IssueGrant(const protocol::v1::CapabilityGrant& grant);
  // The same, from the text of a protocol.v1.CapabilityGrant.
  void IssueGrant(const std::string& grant_text);

  // Reads world-demo's audit log from its first record until `done` holds or 60 s pass (a
  // stream, not a poll: the writers' outboxes deliver post-effect records asynchronously).
  // Returns the protocol "1" events; every record read, control-plane ones included, is kept in
  // audit_records_.
  std::vector<protocol::v1::AuditEvent> AuditUntil(
      const std::function<bool(const std::vector<protocol::v1::AuditEvent>&)>& done);
  std::vector<audit::v1::AuditRecord> audit_records_;

  // Extra envelope_svc flags (four processes), set before SetUp.
  std::vector<std::string> envelope_args_;
  // Host ToolProviders envelope_svc attaches (four processes), id and address, set before SetUp.
  std::vector<std::pair<std::string, std::string>> providers_;
  // Turn-engine flags both envelope_svc and sharedosd take (e.g. --drain_grace), set before
  // SetUp.
  std::vector<std::string> engine_args_;

  std::string admin_token_;
  std::string host_token_;
  std::string dir_, files_root_;
  std::string envelope_address_;
  std::unique_ptr<sharedos::testing::FourProcessDeployment> four_;
  std::unique_ptr<sharedos::testing::SharedosdDeployment> sharedosd_;
  std::unique_ptr<envelope::v1::Envelope::Stub> envelope_stub_;
  std::unique_ptr<grantstore::v1::GrantStore::Stub> grants_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_stub_;

 private:
  void StartFourProcesses();
  void StartSharedosd();
  // Stubs to the envelope, grant store and audit log at their current addresses.
  void Connect();

  const std::string registry_;
  const bool sharedosd_registry_;
};

// "FourProcesses" / "Sharedosd", for INSTANTIATE_TEST_SUITE_P(…, ::testing::Bool(),
// DeploymentName).
std::string DeploymentName(const ::testing::TestParamInfo<bool>& info);

// A file's whole content ("" when unreadable).
std::string ReadFile(const std::string& path);

}  // namespace sharedos::e2e

#endif  // SHAREDOS_TESTS_E2E_E2E_DEPLOYMENT_H_
