// The identity provider's tokens across a deployment of separate services: a real OpenID
// provider (tests/oidc/provider.mjs) and audit_svc, grantstore_svc, authorizer_svc and
// envelope_svc each its own process, every one started with --oidc_config
// (FourProcessDeployment::Options::oidc_config). On the grant store a reviewer's access token is
// allowed in its namespace and PERMISSION_DENIED outside it; on the envelope (and every other
// process) the provider's admin of every namespace reads the process's status while a reviewer
// or a scoped admin is PERMISSION_DENIED, and no person opens a turn (the provider never yields a
// host) — each refusal PERMISSION_DENIED, not UNAUTHENTICATED, so the token was verified there,
// and a tampered one is UNAUTHENTICATED. The approval a person makes with the provider's token
// names its iss and sub in the escalation record and in the escalation.resolved record audit_svc
// keeps.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/status/v1/status.grpc.pb.h"
#include "tests/oidc/oidc_provider_process.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::OidcProviderProcess;
using Service = FourProcessDeployment::Service;
using ::testing::SizeIs;

class FourProcessOidcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OidcProviderProcess::Options provider_options;
    // The demo world's reviewer and a scoped admin, as the provider knows them (alice: reviewer
    // of world-1; ops: admin of every namespace; carol: no SharedOS group).
    provider_options.users = {{"user-alice", {"sharedos-reviewers-world-demo"}},
                              {"dana", {"sharedos-admins-world-demo"}}};
    auto provider = OidcProviderProcess::Start(provider_options);
    ASSERT_TRUE(provider.ok()) << provider.status();
    provider_ = *std::move(provider);

    dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    FourProcessDeployment::Options options;
    options.dir = dir_;
    options.registry = dir_ + "/registry.textproto";
    std::ofstream(options.registry) << demo::RegistryText();
    options.files_root = dir_ + "/files";
    ASSERT_TRUE(demo::WriteWorkspace(options.files_root).ok());
    options.oidc_config = dir_ + "/oidc.json";
    std::ofstream(options.oidc_config) << absl::StrCat(R"({
      "issuer": ")",
                                                       provider_->issuer(), R"(",
      "allow_loopback_http": true,
      "audiences": ["urn:sharedos:grpc"],
      "claims": {"principal": "sub", "groups": "groups", "rules": [
        {"group": "sharedos-reviewers-world-demo", "role": "reviewer", "namespaces": ["world-demo"]},
        {"group": "sharedos-reviewers-world-1", "role": "reviewer", "namespaces": ["world-1"]},
        {"group": "sharedos-admins-world-demo", "role": "admin", "namespaces": ["world-demo"]},
        {"group": "sharedos-admins", "role": "admin", "namespaces": ["*"]}]}})");
    auto started = FourProcessDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    four_ = *std::move(started);
    grants_ = gs::GrantStore::NewStub(Channel(Service::kGrantstore));
    envelope_ = envelope::v1::Envelope::NewStub(Channel(Service::kEnvelope));
    audit_ = audit::v1::AuditLog::NewStub(Channel(Service::kAudit));
  }

  std::shared_ptr<grpc::Channel> Channel(Service service) {
    return grpc::CreateChannel(four_->address(service), grpc::InsecureChannelCredentials());
  }

  static std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return context;
  }

  std::string Token(const std::string& user) {
    auto token = provider_->UserAccessToken(user);
    EXPECT_TRUE(token.ok()) << token.status();
    return token.ok() ? *token : "";
  }

  grpc::Status ListEscalations(const std::string& token, const std::string& namespace_id) {
    gs::ListEscalationsRequest request;
    request.set_namespace_id(namespace_id);
    gs::ListEscalationsResponse response;
    return grants_->ListEscalations(As(token).get(), request, &response);
  }

  grpc::Status GetStatus(Service service, const std::string& token) {
    auto stub = status::v1::Status::NewStub(Channel(service));
    status::v1::GetStatusResponse response;
    return stub->GetStatus(As(token).get(), status::v1::GetStatusRequest(), &response);
  }

  grpc::Status OpenTurn(const std::string& token, envelope::v1::OpenTurnResponse* turn) {
    return envelope_->OpenTurn(As(token).get(), demo::TurnRequest("exec-oidc-4", "trace-oidc-4"),
                               turn);
  }

  // The demo turn's write, escalated by the host to the demo world's reviewer
  // (human:user-alice); answers the escalation id.
  std::string RaiseEscalation() {
    gs::IssueGrantRequest issue;
    *issue.mutable_grant() = demo::Grant();
    gs::IssueGrantResponse issued;
    grpc::Status granted = grants_->IssueGrant(As(four_->admin_token()).get(), issue, &issued);
    EXPECT_TRUE(granted.ok()) << granted.error_message();
    envelope::v1::OpenTurnResponse turn;
    grpc::Status opened = OpenTurn(four_->host_token(), &turn);
    EXPECT_TRUE(opened.ok()) << opened.error_message();
    envelope::v1::InvokeToolRequest invoke;
    invoke.set_turn_id(turn.turn_id());
    pb::ToolCall* call = invoke.mutable_call();
    call->set_id("call-write");
    call->set_tool("files.create");
    call->set_trace_id("trace-oidc-4");
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(
            R"({"path": "Workspace/summary.txt", "content": "milk"})", call->mutable_arguments())
            .ok());
    call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    envelope::v1::InvokeToolResponse invoked;
    grpc::Status invoked_status =
        envelope_->InvokeTool(As(four_->host_token()).get(), invoke, &invoked);
    EXPECT_TRUE(invoked_status.ok()) << invoked_status.error_message();
    const pb::ToolResult& write = invoked.result();
    EXPECT_EQ(write.error().code(), "no_matching_grant") << write.DebugString();
    std::string json;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(
                    write.error().details().fields().at("requiredAuthority").struct_value(), &json)
                    .ok());
    envelope::v1::FinishTurnRequest finish;
    finish.set_turn_id(turn.turn_id());
    finish.mutable_escalate()->set_reason("The assistant needs to write its summary.");
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    json, finish.mutable_escalate()->mutable_requested_authority())
                    .ok());
    envelope::v1::FinishTurnResponse escalated;
    grpc::Status finished =
        envelope_->FinishTurn(As(four_->host_token()).get(), finish, &escalated);
    EXPECT_TRUE(finished.ok()) << finished.error_message();
    gs::ListEscalationsRequest list;
    list.set_namespace_id("world-demo");
    gs::ListEscalationsResponse queue;
    EXPECT_TRUE(grants_->ListEscalations(As(four_->admin_token()).get(), list, &queue).ok());
    EXPECT_THAT(queue.escalations(), SizeIs(1));
    return queue.escalations_size() == 1 ? queue.escalations(0).escalation_id() : "";
  }

  std::unique_ptr<OidcProviderProcess> provider_;
  std::string dir_;
  std::unique_ptr<FourProcessDeployment> four_;
  std::unique_ptr<gs::GrantStore::Stub> grants_;
  std::unique_ptr<envelope::v1::Envelope::Stub> envelope_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_;
};

TEST_F(FourProcessOidcTest, TheGrantStoreAllowsAProviderTokenInItsScopeAndDeniesItOutside) {
  const std::string alice = Token("alice");  // reviewer of world-1
  grpc::Status in_scope = ListEscalations(alice, "world-1");
  EXPECT_TRUE(in_scope.ok()) << in_scope.error_message();
  grpc::Status out_of_scope = ListEscalations(alice, "world-demo");
  EXPECT_EQ(out_of_scope.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << out_of_scope.error_message();
  // An admin of world-demo lists its grants, not world-1's.
  const std::string dana = Token("dana");
  gs::ListGrantsRequest grants;
  gs::ListGrantsResponse listed;
  grants.mutable_filter()->set_namespace_id("world-demo");
  grpc::Status admin = grants_->ListGrants(As(dana).get(), grants, &listed);
  EXPECT_TRUE(admin.ok()) << admin.error_message();
  grants.mutable_filter()->set_namespace_id("world-1");
  EXPECT_EQ(grants_->ListGrants(As(dana).get(), grants, &listed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A person the provider knows but SharedOS gives no role; a tampered token.
  EXPECT_EQ(ListEscalations(Token("carol"), "world-1").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  std::string tampered = alice;
  tampered[tampered.size() - 5] = tampered[tampered.size() - 5] == 'A' ? 'B' : 'A';
  EXPECT_EQ(ListEscalations(tampered, "world-1").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // The static credentials keep working beside the provider's tokens.
  EXPECT_TRUE(ListEscalations(four_->admin_token(), "world-demo").ok());
}

TEST_F(FourProcessOidcTest, EveryProcessVerifiesTheTokenAndTheEnvelopeAdmitsNoPerson) {
  const std::string ops = Token("ops");  // admin of every namespace: the operator
  const std::string dana = Token("dana");
  const std::string alice = Token("alice");
  for (Service service :
       {Service::kAudit, Service::kGrantstore, Service::kAuthorizer, Service::kEnvelope}) {
    SCOPED_TRACE(four_->address(service));
    // In scope: the operator reads the process's status with the provider's token.
    grpc::Status operator_status = GetStatus(service, ops);
    EXPECT_TRUE(operator_status.ok()) << operator_status.error_message();
    // Out of scope, each verified (PERMISSION_DENIED, not UNAUTHENTICATED): an admin of one
    // namespace and a reviewer do not.
    EXPECT_EQ(GetStatus(service, dana).error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(GetStatus(service, alice).error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_EQ(GetStatus(service, ops.substr(0, ops.size() - 4) + "AAAA").error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  // The envelope: a person's token opens no turn (the provider never yields a host), whatever
  // role it maps to; the host credential does.
  envelope::v1::OpenTurnResponse turn;
  for (const std::string* token : {&alice, &dana, &ops}) {
    grpc::Status refused = OpenTurn(*token, &turn);
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED) << refused.error_message();
  }
  gs::IssueGrantRequest issue;
  *issue.mutable_grant() = demo::Grant();
  gs::IssueGrantResponse issued;
  ASSERT_TRUE(grants_->IssueGrant(As(four_->admin_token()).get(), issue, &issued).ok());
  grpc::Status opened = OpenTurn(four_->host_token(), &turn);
  EXPECT_TRUE(opened.ok()) << opened.error_message();
}

TEST_F(FourProcessOidcTest, TheApprovalNamesTheProvidersIssuerAndSubjectInTheAuditLog) {
  const std::string id = RaiseEscalation();
  ASSERT_FALSE(id.empty());
  // Out of scope: a reviewer of another namespace does not reach it (NOT_FOUND, as an unknown id).
  gs::ResolveEscalationRequest request;
  request.set_escalation_id(id);
  request.set_decision(gs::ESCALATION_DECISION_APPROVE);
  gs::ResolveEscalationResponse approved;
  grpc::Status other = grants_->ResolveEscalation(As(Token("alice")).get(), request, &approved);
  EXPECT_FALSE(other.ok());
  grpc::Status status =
      grants_->ResolveEscalation(As(Token("user-alice")).get(), request, &approved);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(approved.escalation().status(), gs::ESCALATION_RECORD_STATUS_APPROVED);
  EXPECT_EQ(approved.escalation().decided_by().human_user_id(), "user-alice");
  const gs::DecisionCredential& with = approved.escalation().decided_with();
  EXPECT_EQ(with.idp_issuer(), provider_->issuer());
  EXPECT_EQ(with.idp_subject(), "user-alice");
  EXPECT_FALSE(with.break_glass());
  // The record audit_svc keeps (written by grantstore_svc over gRPC): escalation.resolved with
  // the provider's iss and sub.
  audit::v1::QueryRequest query;
  query.mutable_filter()->set_namespace_id("world-demo");
  query.mutable_filter()->set_control_plane_type(
      audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
  audit::v1::QueryResponse answered;
  grpc::Status queried = audit_->Query(As(Token("ops")).get(), query, &answered);
  ASSERT_TRUE(queried.ok()) << queried.error_message();
  ASSERT_THAT(answered.records(), SizeIs(1));
  const auto& fields = answered.records(0).control_plane().metadata().fields();
  EXPECT_EQ(fields.at("escalationId").string_value(), id);
  EXPECT_EQ(fields.at("idpIssuer").string_value(), provider_->issuer());
  EXPECT_EQ(fields.at("idpSubject").string_value(), "user-alice");
  EXPECT_EQ(fields.count("breakGlass"), 0u);
}

}  // namespace
}  // namespace sharedos
