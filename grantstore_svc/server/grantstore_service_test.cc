// The service through a real in-process gRPC server on localhost:0, with real credentials.
#include "grantstore_svc/server/grantstore_service.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/status/grpc_status.h"
#include "common/status/proto_matchers.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::server {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::EqualsProto;
using ::sharedos::common::FromGrpcStatus;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;

template <typename T>
T Parse(const std::string& text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    ADD_FAILURE() << "bad text proto: " << text;
  }
  return message;
}

constexpr char kAdminToken[] = "admin-token-0123456789";
constexpr char kServiceToken[] = "service-token-0123456789";
constexpr char kHostToken[] = "host-token-0123456789";
constexpr char kReviewerToken[] = "alice-token-0123456789";

std::string CredentialsJson() {
  using common::server::TokenDigestHex;
  return absl::StrCat(R"({"credentials": [
    {"name": "ops", "role": "admin", "token_sha256": ")",
                      TokenDigestHex(kAdminToken), R"("},
    {"name": "authorizer", "role": "service", "token_sha256": ")",
                      TokenDigestHex(kServiceToken), R"("},
    {"name": "host-a", "role": "host", "token_sha256": ")",
                      TokenDigestHex(kHostToken),
                      R"(", "scope": {"namespaces": ["world"], "owners": ["*"]}},
    {"name": "alice", "role": "reviewer", "principal": "human:alice", "token_sha256": ")",
                      TokenDigestHex(kReviewerToken),
                      R"(", "scope": {"namespaces": ["world"]}}]})");
}

pb::CapabilityGrant Grant(const std::string& id) {
  auto grant = Parse<pb::CapabilityGrant>(R"pb(
    namespace_id: "world"
    subject { agent_id: "assistant" }
    issuer { human_user_id: "alice" }
    capabilities {
      resource {
        namespace: "files"
        path: "docs"
        owner { human_user_id: "alice" }
      }
      actions: "read"
      scope: SCOPE_DESCENDANTS
    }
    constraints { max_uses: 2 }
    issued_at { seconds: 1700000000 }
  )pb");
  grant.set_id(id);
  return grant;
}

v1::LoadAuthorityRequest Load() {
  return Parse<v1::LoadAuthorityRequest>(R"pb(
    namespace_id: "world"
    actor { agent_id: "assistant" }
    authority { human_user_id: "alice" }
  )pb");
}

v1::RecordEscalationRequest Escalation() {
  return Parse<v1::RecordEscalationRequest>(R"pb(
    namespace_id: "world"
    execution_id: "exec-1"
    escalation_id: "esc-1"
    escalation {
      reason: "needs to write"
      reviewer { human_user_id: "alice" }
      requested_at { seconds: 1700000100 }
      status: ESCALATION_STATUS_PENDING
      requested_authority {
        id: "capreq-1"
        namespace_id: "world"
        requester { agent_id: "assistant" }
        owner { human_user_id: "alice" }
        capabilities {
          resource { namespace: "files" path: "reports" }
          actions: "write"
          scope: SCOPE_EXACT
        }
        purpose: "assist"
        requested_at { seconds: 1700000100 }
      }
    }
  )pb");
}

class GrantStoreServiceTest : public ::testing::Test {
 protected:
  GrantStoreServiceTest() : clock_(absl::FromUnixSeconds(1700000500)) {}

  void SetUp() override {
    auto authenticator = common::server::Authenticator::FromJson(CredentialsJson());
    ASSERT_THAT(authenticator, IsOk());
    authenticator_ = *std::move(authenticator);
    storage::SqliteGrantStore::Options options;
    options.path = ":memory:";
    auto store = storage::SqliteGrantStore::Open(options);
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    core_ = std::make_unique<core::GrantStoreCore>(*store_, audit_, clock_);
    service_ = std::make_unique<GrantStoreService>(*core_, *authenticator_);
    auto runner =
        common::server::ServerRunner::Start(common::server::ServerOptions{}, {service_.get()});
    ASSERT_THAT(runner, IsOk());
    runner_ = *std::move(runner);
    stub_ = v1::GrantStore::NewStub(
        grpc::CreateChannel(runner_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (runner_ != nullptr) {
      runner_->Shutdown();
      runner_->Wait();
    }
  }

  // A client context presenting `token` ("" presents none).
  static std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
    return context;
  }

  absl::Status IssueAsAdmin(const pb::CapabilityGrant& grant) {
    v1::IssueGrantRequest request;
    *request.mutable_grant() = grant;
    v1::IssueGrantResponse response;
    return FromGrpcStatus(stub_->IssueGrant(As(kAdminToken).get(), request, &response));
  }

  common::SimulatedClock clock_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<common::server::Authenticator> authenticator_;
  std::unique_ptr<storage::SqliteGrantStore> store_;
  std::unique_ptr<core::GrantStoreCore> core_;
  std::unique_ptr<GrantStoreService> service_;
  std::unique_ptr<common::server::ServerRunner> runner_;
  std::unique_ptr<v1::GrantStore::Stub> stub_;
};

// One call of every RPC with an empty (or minimal) request, as a given credential.
using Call = std::function<grpc::Status(v1::GrantStore::Stub&, grpc::ClientContext*)>;

template <typename Request, typename Response>
Call Rpc(grpc::Status (v1::GrantStore::Stub::*method)(grpc::ClientContext*, const Request&,
                                                      Response*)) {
  return [method](v1::GrantStore::Stub& stub, grpc::ClientContext* context) {
    Request request;
    Response response;
    return (stub.*method)(context, request, &response);
  };
}

using Stub = v1::GrantStore::Stub;
const std::vector<std::pair<std::string, Call>>& AdminRpcs() {
  static const auto* rpcs = new std::vector<std::pair<std::string, Call>>{
      {"IssueGrant", Rpc(&Stub::IssueGrant)},
      {"DeriveGrant", Rpc(&Stub::DeriveGrant)},
      {"RevokeGrant", Rpc(&Stub::RevokeGrant)},
      {"GetGrant", Rpc(&Stub::GetGrant)},
      {"ListGrants", Rpc(&Stub::ListGrants)},
      {"PutHostPolicy", Rpc(&Stub::PutHostPolicy)},
      {"GetHostPolicy", Rpc(&Stub::GetHostPolicy)},
      {"ResolveEscalation", Rpc(&Stub::ResolveEscalation)},
  };
  return *rpcs;
}

// Admins read escalations, and hosts too (the status of their scope's: host_credential_e2e_test).
const std::vector<std::pair<std::string, Call>>& EscalationReadRpcs() {
  static const auto* rpcs = new std::vector<std::pair<std::string, Call>>{
      {"ListEscalations", Rpc(&Stub::ListEscalations)},
      {"GetEscalation", Rpc(&Stub::GetEscalation)},
  };
  return *rpcs;
}

const std::vector<std::pair<std::string, Call>>& ServiceRpcs() {
  static const auto* rpcs = new std::vector<std::pair<std::string, Call>>{
      {"LoadAuthority", Rpc(&Stub::LoadAuthority)},
      {"ResolveGrant", Rpc(&Stub::ResolveGrant)},
      {"TryConsume", Rpc(&Stub::TryConsume)},
      {"CheckRevocations", Rpc(&Stub::CheckRevocations)},
      {"RecordEscalation", Rpc(&Stub::RecordEscalation)},
  };
  return *rpcs;
}

TEST_F(GrantStoreServiceTest, EveryRpcRequiresItsOwnRole) {
  struct Role {
    std::vector<std::pair<std::string, Call>> rpcs;
    std::string right;
    std::vector<std::string> wrong;
  };
  const std::vector<Role> roles = {
      {AdminRpcs(), kAdminToken, {"", kServiceToken, kHostToken, "not-a-token"}},
      {EscalationReadRpcs(), kAdminToken, {"", kServiceToken, "not-a-token"}},
      {ServiceRpcs(), kServiceToken, {"", kAdminToken, kHostToken, "not-a-token"}},
  };
  for (const Role& role : roles) {
    for (const auto& [name, call] : role.rpcs) {
      for (const std::string& token : role.wrong) {
        // No or an unknown credential is UNAUTHENTICATED; a known one of another role is
        // PERMISSION_DENIED.
        const bool known = !token.empty() && token != "not-a-token";
        EXPECT_THAT(FromGrpcStatus(call(*stub_, As(token).get())),
                    StatusIs(known ? absl::StatusCode::kPermissionDenied
                                   : absl::StatusCode::kUnauthenticated))
            << name << " as \"" << token << "\"";
      }
      // The right credential reaches the core, which rejects the empty request.
      EXPECT_THAT(FromGrpcStatus(call(*stub_, As(role.right).get())),
                  StatusIs(absl::StatusCode::kInvalidArgument))
          << name;
    }
  }
  EXPECT_THAT(audit_.control_plane_events(), ::testing::IsEmpty());
}

TEST_F(GrantStoreServiceTest, CredentialsNeverAppearInErrors) {
  v1::GetGrantResponse response;
  grpc::Status status =
      stub_->GetGrant(As("secret-guess-42").get(), v1::GetGrantRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), ::testing::Not(HasSubstr("secret-guess-42")));
}

TEST_F(GrantStoreServiceTest, IssueThenLoadOverTheWire) {
  ASSERT_THAT(IssueAsAdmin(Grant("g1")), IsOk());
  v1::LoadAuthorityResponse loaded;
  ASSERT_TRUE(stub_->LoadAuthority(As(kServiceToken).get(), Load(), &loaded).ok());
  v1::LoadAuthorityResponse expected;
  *expected.add_grants() = Grant("g1");
  expected.set_revision(1);
  expected.mutable_host_policy()->mutable_absent();
  EXPECT_THAT(loaded, EqualsProto(expected));
  // The audit actor is the admin credential's name, as a service address.
  ASSERT_THAT(audit_.control_plane_events(), SizeIs(1));
  EXPECT_THAT(audit_.control_plane_events()[0].actor(),
              EqualsProto(Parse<pb::Address>(R"pb(service_id: "ops")pb")));

  auto consume =
      Parse<v1::TryConsumeRequest>(R"pb(namespace_id: "world" grant_id: "g1" max_uses: 2)pb");
  const std::vector<std::pair<bool, int>> expected_answers = {{true, 1}, {true, 2}, {false, 2}};
  for (const auto& [expected_consumed, expected_uses] : expected_answers) {
    v1::TryConsumeResponse consumed;
    ASSERT_TRUE(stub_->TryConsume(As(kServiceToken).get(), consume, &consumed).ok());
    EXPECT_EQ(consumed.consumed(), expected_consumed);
    EXPECT_EQ(consumed.uses(), expected_uses);
  }
  v1::GetUsageResponse usage;
  ASSERT_TRUE(
      stub_
          ->GetUsage(As(kServiceToken).get(), Parse<v1::GetUsageRequest>(R"pb(namespace_id: "world"
                                                                              grant_id: "g1")pb"),
                     &usage)
          .ok());
  EXPECT_EQ(usage.uses(), 2);
}

TEST_F(GrantStoreServiceTest, EscalationRoundTripOverTheWire) {
  v1::RecordEscalationResponse recorded;
  ASSERT_TRUE(stub_->RecordEscalation(As(kServiceToken).get(), Escalation(), &recorded).ok());
  EXPECT_EQ(recorded.escalation_id(), "esc-1");

  v1::ListEscalationsResponse queue;
  ASSERT_TRUE(stub_
                  ->ListEscalations(As(kAdminToken).get(),
                                    Parse<v1::ListEscalationsRequest>(
                                        R"pb(namespace_id: "world"
                                             status: ESCALATION_RECORD_STATUS_PENDING)pb"),
                                    &queue)
                  .ok());
  ASSERT_THAT(queue.escalations(), SizeIs(1));
  EXPECT_EQ(queue.escalations(0).escalation_id(), "esc-1");

  v1::ResolveEscalationResponse resolved;
  ASSERT_TRUE(stub_
                  ->ResolveEscalation(As(kReviewerToken).get(),
                                      Parse<v1::ResolveEscalationRequest>(R"pb(
                                        escalation_id: "esc-1"
                                        decision: ESCALATION_DECISION_APPROVE
                                        reviewer { human_user_id: "alice" }
                                        narrowing { max_uses: 1 }
                                        grant_id: "approved-1"
                                      )pb"),
                                      &resolved)
                  .ok());
  EXPECT_EQ(resolved.escalation().status(), v1::ESCALATION_RECORD_STATUS_APPROVED);
  EXPECT_EQ(resolved.grant().id(), "approved-1");

  v1::LoadAuthorityResponse loaded;
  ASSERT_TRUE(stub_->LoadAuthority(As(kServiceToken).get(), Load(), &loaded).ok());
  ASSERT_THAT(loaded.grants(), SizeIs(1));
  EXPECT_THAT(loaded.grants(0), EqualsProto(resolved.grant()));
  EXPECT_EQ(loaded.grants(0).constraints().max_uses(), 1);

  v1::ResolveEscalationResponse again;
  grpc::Status twice =
      stub_->ResolveEscalation(As(kReviewerToken).get(), Parse<v1::ResolveEscalationRequest>(R"pb(
                                 escalation_id: "esc-1"
                                 decision: ESCALATION_DECISION_DENY
                                 reviewer { human_user_id: "alice" }
                               )pb"),
                               &again);
  EXPECT_THAT(FromGrpcStatus(twice),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already resolved")));
  // The record names the reviewer as the decider, taken from the credential.
  EXPECT_THAT(resolved.escalation().decided_by(),
              EqualsProto(Parse<pb::Address>(R"pb(human_user_id: "alice")pb")));
}

TEST_F(GrantStoreServiceTest, ErrorsCrossTheWireWithTheirCodeAndField) {
  // Unknown fields sent by a newer client are refused, never dropped.
  v1::IssueGrantRequest unknown;
  *unknown.mutable_grant() = Grant("g1");
  unknown.mutable_grant()
      ->GetReflection()
      ->MutableUnknownFields(unknown.mutable_grant())
      ->AddLengthDelimited(99, "future");
  v1::IssueGrantResponse issued;
  EXPECT_THAT(FromGrpcStatus(stub_->IssueGrant(As(kAdminToken).get(), unknown, &issued)),
              StatusIs(absl::StatusCode::kInvalidArgument, "grant: unknown field 99"));

  v1::GetGrantResponse got;
  EXPECT_THAT(FromGrpcStatus(stub_->GetGrant(As(kAdminToken).get(),
                                             Parse<v1::GetGrantRequest>(R"pb(namespace_id: "world"
                                                                             grant_id: "nope")pb"),
                                             &got)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"nope\"")));

  ASSERT_THAT(IssueAsAdmin(Grant("g1")), IsOk());
  pb::CapabilityGrant other = Grant("g1");
  other.mutable_subject()->set_agent_id("someone-else");
  EXPECT_THAT(IssueAsAdmin(other),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already used")));

  v1::LoadAuthorityRequest ahead = Load();
  ahead.set_at_revision(5);
  v1::LoadAuthorityResponse loaded;
  EXPECT_THAT(FromGrpcStatus(stub_->LoadAuthority(As(kServiceToken).get(), ahead, &loaded)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("at_revision 5")));

  audit_.FailPreEffect(true);
  EXPECT_THAT(IssueAsAdmin(Grant("g2")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
  audit_.FailPreEffect(false);
  EXPECT_THAT(FromGrpcStatus(stub_->GetGrant(
                  As(kAdminToken).get(),
                  Parse<v1::GetGrantRequest>(R"pb(namespace_id: "world" grant_id: "g2")pb"), &got)),
              StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace sharedos::grantstore::server
