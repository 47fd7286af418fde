// The Authorizer service through a real in-process gRPC server (localhost:0) with credentials:
// only the service credential is accepted, errors carry their gRPC codes, and a turn runs
// end to end (open, admit, discover, authorize, reach, escalate, close).
#include "authorizer_svc/server/authorizer_service.h"

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "capability/test_builders.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/status/grpc_status.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"

namespace sharedos::authorizer::server {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::capability::testing::Agent;
using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::Req;
using ::sharedos::capability::testing::T0;
using ::sharedos::common::FromGrpcStatus;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

constexpr char kServiceToken[] = "envelope-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";
constexpr char kHostToken[] = "host-token-0123456789";

class AuthorizerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    using common::server::TokenDigestHex;
    auto authenticator = common::server::Authenticator::FromJson(absl::StrCat(
        R"({"credentials": [
          {"name": "envelope", "role": "service", "token_sha256": ")",
        TokenDigestHex(kServiceToken), R"("},
          {"name": "ops", "role": "admin", "token_sha256": ")",
        TokenDigestHex(kAdminToken), R"("},
          {"name": "host-a", "role": "host", "token_sha256": ")",
        TokenDigestHex(kHostToken),
        R"(", "scope": {"namespaces": ["world-1"], "owners": ["*"]}}]})"));
    ASSERT_THAT(authenticator, IsOk());
    authenticator_ = *std::move(authenticator);
    authorizer_ = std::make_unique<core::AuthorizerCore>(store_, audit_, clock_,
                                                         "service-test-lease-secret-32-bytes",
                                                         core::AuthorizerCore::Options{});
    service_ = std::make_unique<AuthorizerService>(*authorizer_, *authenticator_);
    auto runner =
        common::server::ServerRunner::Start(common::server::ServerOptions{}, {service_.get()});
    ASSERT_THAT(runner, IsOk());
    runner_ = *std::move(runner);
    stub_ = v1::Authorizer::NewStub(
        grpc::CreateChannel(runner_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override { runner_.reset(); }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token = kServiceToken) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  v1::OpenTurnAuthorityResponse Open() {
    v1::OpenTurnAuthorityRequest request;
    *request.mutable_context() = MakeContext();
    request.set_turn_id("turn-1");
    v1::OpenTurnAuthorityResponse response;
    EXPECT_TRUE(stub_->OpenTurnAuthority(Context().get(), request, &response).ok());
    return response;
  }

  common::SimulatedClock clock_{T0() + absl::Seconds(1)};
  grantstore::client::FakeGrantStoreClient store_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<common::server::Authenticator> authenticator_;
  std::unique_ptr<core::AuthorizerCore> authorizer_;
  std::unique_ptr<AuthorizerService> service_;
  std::unique_ptr<common::server::ServerRunner> runner_;
  std::unique_ptr<v1::Authorizer::Stub> stub_;
};

TEST_F(AuthorizerServiceTest, OnlyAServiceCredentialMayCall) {
  v1::OpenTurnAuthorityRequest request;
  *request.mutable_context() = MakeContext();
  request.set_turn_id("turn-1");
  for (const std::string& token :
       {std::string(), std::string(kHostToken), std::string(kAdminToken), std::string("made-up")}) {
    v1::OpenTurnAuthorityResponse response;
    const bool known = token == kHostToken || token == kAdminToken;
    EXPECT_THAT(
        FromGrpcStatus(stub_->OpenTurnAuthority(Context(token).get(), request, &response)),
        StatusIs(known ? absl::StatusCode::kPermissionDenied : absl::StatusCode::kUnauthenticated))
        << "token '" << token << "'";
  }
  EXPECT_EQ(store_.calls(grantstore::client::FakeGrantStoreClient::Method::kLoadAuthority), 0);
  EXPECT_TRUE(audit_.events().empty());

  v1::AuthorizeRequest authorize;
  authorize.set_lease_id("l1.x.y");
  v1::AuthorizeResponse response;
  EXPECT_THAT(FromGrpcStatus(stub_->Authorize(Context(kHostToken).get(), authorize, &response)),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST_F(AuthorizerServiceTest, ErrorsCarryTheirCodesAndNameTheField) {
  v1::OpenTurnAuthorityRequest open;
  *open.mutable_context() = MakeContext();
  open.mutable_context()->clear_owner();
  open.set_turn_id("turn-1");
  v1::OpenTurnAuthorityResponse opened;
  EXPECT_THAT(FromGrpcStatus(stub_->OpenTurnAuthority(Context().get(), open, &opened)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("context.owner")));

  v1::AuthorizeRequest authorize;
  authorize.set_lease_id("l1.not.alease");
  *authorize.mutable_requirement() = Req("files", {"a"}, "read");
  v1::AuthorizeResponse answer;
  EXPECT_THAT(FromGrpcStatus(stub_->Authorize(Context().get(), authorize, &answer)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease_id")));

  const v1::OpenTurnAuthorityResponse lease = Open();
  clock_.AdvanceTime(absl::Hours(1));
  authorize.set_lease_id(lease.lease_id());
  EXPECT_THAT(FromGrpcStatus(stub_->Authorize(Context().get(), authorize, &answer)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("expired")));
}

TEST_F(AuthorizerServiceTest, ATurnEndToEnd) {
  store_.IssueGrant(GrantBuilder("g-exec").WithCapability(
      Cap("sharedos.execution", {"agent", "alice-assistant"}, {"invoke"}, pb::SCOPE_EXACT)));
  store_.IssueGrant(
      GrantBuilder("g-read").MaxUses(5).WithCapability(Cap("files", {"projects"}, {"read"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  ASSERT_EQ(lease.status(), v1::LEASE_STATUS_RESOLVED);

  v1::AdmitTurnRequest admit;
  admit.set_lease_id(lease.lease_id());
  *admit.mutable_agent() = Agent("alice-assistant");
  v1::AdmitTurnResponse admitted;
  ASSERT_TRUE(stub_->AdmitTurn(Context().get(), admit, &admitted).ok());
  EXPECT_TRUE(admitted.decision().allowed());

  v1::DiscoverRequest discover;
  discover.set_lease_id(lease.lease_id());
  auto* tool = discover.add_tools();
  tool->set_name("files.read");
  *tool->mutable_requirement() = Req("files", {"projects"}, "read");
  tool = discover.add_tools();
  tool->set_name("files.write");
  *tool->mutable_requirement() = Req("files", {"projects"}, "write");
  v1::DiscoverResponse discovered;
  ASSERT_TRUE(stub_->Discover(Context().get(), discover, &discovered).ok());
  EXPECT_EQ(discovered.withheld_count(), 1);

  v1::AuthorizeRequest authorize;
  authorize.set_lease_id(lease.lease_id());
  *authorize.mutable_requirement() = Req("files", {"projects", "a.md"}, "read");
  authorize.set_consume(true);
  authorize.set_operation_id("call-1");
  v1::AuthorizeResponse answer;
  ASSERT_TRUE(stub_->Authorize(Context().get(), authorize, &answer).ok());
  EXPECT_TRUE(answer.decision().allowed());
  EXPECT_TRUE(answer.consumed());
  EXPECT_EQ(store_.Usage("world-1", "g-read"), 1);

  *authorize.mutable_requirement() = Req("files", {"projects", "a.md"}, "write");
  ASSERT_TRUE(stub_->Authorize(Context().get(), authorize, &answer).ok());
  EXPECT_EQ(answer.decision().reason_code(), "no_matching_grant");
  ASSERT_TRUE(answer.decision().has_required_authority());

  v1::ReachRequest reach;
  reach.set_lease_id(lease.lease_id());
  v1::ReachResponse reached;
  ASSERT_TRUE(stub_->Reach(Context().get(), reach, &reached).ok());
  EXPECT_EQ(reached.reach().status(), pb::REACH_STATUS_COMPUTED);

  v1::RecordEscalationRequest escalate;
  escalate.set_lease_id(lease.lease_id());
  escalate.set_execution_id("exec-1");
  escalate.set_reason("needs write");
  v1::AuthorityAsk* ask = escalate.mutable_requested_authority_ask();
  *ask->mutable_capabilities() = answer.decision().required_authority().capabilities();
  ask->set_purpose(answer.decision().required_authority().purpose());
  v1::RecordEscalationResponse escalated;
  ASSERT_TRUE(stub_->RecordEscalation(Context().get(), escalate, &escalated).ok());
  EXPECT_EQ(escalated.escalation().requested_authority().id(),
            answer.decision().required_authority().id());

  v1::CloseTurnAuthorityRequest close;
  close.set_lease_id(lease.lease_id());
  v1::CloseTurnAuthorityResponse closed;
  ASSERT_TRUE(stub_->CloseTurnAuthority(Context().get(), close, &closed).ok());
  ASSERT_TRUE(stub_->CloseTurnAuthority(Context().get(), close, &closed).ok());
  EXPECT_THAT(FromGrpcStatus(stub_->Authorize(Context().get(), authorize, &answer)),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("closed")));

  // Grant store down: RecordEscalation is the one method that answers UNAVAILABLE.
  store_.SetDown(true);
  const v1::OpenTurnAuthorityResponse other = [&] {
    v1::OpenTurnAuthorityRequest request;
    *request.mutable_context() = MakeContext();
    request.set_turn_id("turn-2");
    v1::OpenTurnAuthorityResponse response;
    EXPECT_TRUE(stub_->OpenTurnAuthority(Context().get(), request, &response).ok());
    return response;
  }();
  EXPECT_EQ(other.status(), v1::LEASE_STATUS_UNAVAILABLE);
  escalate.set_lease_id(other.lease_id());
  EXPECT_THAT(FromGrpcStatus(stub_->RecordEscalation(Context().get(), escalate, &escalated)),
              StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace sharedos::authorizer::server
