// The identity provider's tokens on gRPC, through real processes: a real OpenID provider
// (tests/oidc/provider.mjs) and sharedosd started with --oidc_config. A reviewer's access token is
// allowed in its scope and PERMISSION_DENIED outside it; the approval it makes names the
// provider's iss and sub in the resolution record; each kind of bad token is refused
// UNAUTHENTICATED; a rotated provider key is accepted without a restart; an unreachable provider
// with no cached key fails closed (UNAVAILABLE). With the provider configured an admin cannot
// mint a human's reviewer credential, unless the break-glass flag is given, and then the approval
// made with it is recorded as break-glass.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/crypto/base64url.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/e2e/e2e_deployment.h"
#include "tests/oidc/oidc_provider_process.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::OidcProviderProcess;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr char kAudience[] = "urn:sharedos:grpc";

std::string EncodeJson(const nlohmann::json& json) { return common::Base64UrlEncode(json.dump()); }

nlohmann::json DecodePart(const std::string& token, int index) {
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  return nlohmann::json::parse(*common::Base64UrlDecode(parts[index]));
}

class GrpcOidcTest : public e2e::DeploymentTest {
 protected:
  GrpcOidcTest() : DeploymentTest(demo::RegistryText(), /*sharedosd_registry=*/false) {}

  // Extra sharedosd flags, set by a derived fixture.
  virtual std::vector<std::string> ExtraFlags() const { return {}; }
  // Whether to stop the provider before sharedosd ever fetches its keys.
  virtual bool StartProvider() const { return true; }

  void SetUp() override {
    OidcProviderProcess::Options options;
    // The demo world's reviewer, as the provider knows her.
    options.users = {{"user-alice", {"sharedos-reviewers-world-demo"}}};
    auto provider = OidcProviderProcess::Start(options);
    ASSERT_TRUE(provider.ok()) << provider.status();
    provider_ = *std::move(provider);
    const std::string config_path = sharedos::testing::TempPath(absl::StrCat(
        "oidc-",
        absl::StrReplaceAll(::testing::UnitTest::GetInstance()->current_test_info()->name(),
                            {{"/", "-"}}),
        ".json"));
    ASSERT_TRUE(sharedos::testing::WriteFile(config_path, absl::StrCat(R"({
      "issuer": ")",
                                                                       provider_->issuer(), R"(",
      "allow_loopback_http": true,
      "audiences": ["urn:sharedos:grpc"],
      "jwks": {"min_refresh_interval_seconds": 0},
      "claims": {"principal": "sub", "groups": "groups", "rules": [
        {"group": "sharedos-reviewers-world-demo", "role": "reviewer", "namespaces": ["world-demo"]},
        {"group": "sharedos-reviewers-world-1", "role": "reviewer", "namespaces": ["world-1"]},
        {"group": "sharedos-admins", "role": "admin", "namespaces": ["*"]}]}})"))
                    .ok());
    engine_args_ = {absl::StrCat("--oidc_config=", config_path)};
    for (const std::string& flag : ExtraFlags()) engine_args_.push_back(flag);
    if (!StartProvider()) provider_->Stop();
    DeploymentTest::SetUp();
  }

  grpc::Status ListEscalations(const std::string& token, const std::string& namespace_id,
                               gs::ListEscalationsResponse* response) {
    gs::ListEscalationsRequest request;
    request.set_namespace_id(namespace_id);
    return grants_->ListEscalations(As(token).get(), request, response);
  }

  grpc::Status Call(const std::string& token, const std::string& namespace_id = "world-1") {
    gs::ListEscalationsResponse response;
    return ListEscalations(token, namespace_id, &response);
  }

  void ExpectUnauthenticated(const std::string& token) {
    grpc::Status status = Call(token);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
    // The token is never echoed.
    EXPECT_THAT(status.error_message(), ::testing::Not(HasSubstr(token.substr(0, 20))));
  }

  std::string Token(const std::string& user) {
    auto token = provider_->UserAccessToken(user);
    EXPECT_TRUE(token.ok()) << token.status();
    return token.ok() ? *token : "";
  }

  // The demo turn's write escalated to the demo world's reviewer; answers the escalation id.
  std::string RaiseEscalation() {
    IssueGrant(demo::Grant());
    envelope::v1::OpenTurnResponse turn;
    grpc::Status opened = envelope_stub_->OpenTurn(
        As(host_token_).get(), demo::TurnRequest("exec-oidc-1", "trace-oidc"), &turn);
    EXPECT_TRUE(opened.ok()) << opened.error_message();
    envelope::v1::InvokeToolRequest invoke;
    invoke.set_turn_id(turn.turn_id());
    pb::ToolCall* call = invoke.mutable_call();
    call->set_id("call-write");
    call->set_tool("files.create");
    call->set_trace_id("trace-oidc");
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(
            R"({"path": "Workspace/summary.txt", "content": "milk"})", call->mutable_arguments())
            .ok());
    call->mutable_requested_at()->set_seconds(1786438801);
    envelope::v1::InvokeToolResponse invoked;
    EXPECT_TRUE(envelope_stub_->InvokeTool(As(host_token_).get(), invoke, &invoked).ok());
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
    EXPECT_TRUE(envelope_stub_->FinishTurn(As(host_token_).get(), finish, &escalated).ok());
    gs::ListEscalationsResponse queue;
    EXPECT_TRUE(ListEscalations(admin_token_, "world-demo", &queue).ok());
    EXPECT_THAT(queue.escalations(), SizeIs(1));
    return queue.escalations_size() == 1 ? queue.escalations(0).escalation_id() : "";
  }

  grpc::Status Approve(const std::string& token, const std::string& escalation_id,
                       gs::ResolveEscalationResponse* response) {
    gs::ResolveEscalationRequest request;
    request.set_escalation_id(escalation_id);
    request.set_decision(gs::ESCALATION_DECISION_APPROVE);
    return grants_->ResolveEscalation(As(token).get(), request, response);
  }

  grpc::Status IssueHumanReviewerCredential(gs::IssueCredentialResponse* response) {
    return grants_->IssueCredential(As(admin_token_).get(), Parse<gs::IssueCredentialRequest>(R"pb(
                                      credential_id: "alice-reviewer"
                                      principal { human_user_id: "user-alice" }
                                      role: CREDENTIAL_ROLE_REVIEWER
                                      scope { namespaces: "world-demo" })pb"),
                                    response);
  }

  std::unique_ptr<OidcProviderProcess> provider_;
};

TEST_P(GrpcOidcTest, AReviewerTokenIsAllowedInItsScopeAndDeniedOutsideIt) {
  const std::string alice = Token("alice");  // reviewer of world-1
  gs::ListEscalationsResponse response;
  grpc::Status in_scope = ListEscalations(alice, "world-1", &response);
  EXPECT_TRUE(in_scope.ok()) << in_scope.error_message();
  grpc::Status out_of_scope = ListEscalations(alice, "world-demo", &response);
  EXPECT_EQ(out_of_scope.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << out_of_scope.error_message();
  // The provider's admin group: an admin of every namespace; a reviewer calls no admin RPC.
  gs::ListGrantsRequest grants;
  grants.mutable_filter()->set_namespace_id("world-demo");
  gs::ListGrantsResponse listed;
  grpc::Status admin = grants_->ListGrants(As(Token("ops")).get(), grants, &listed);
  EXPECT_TRUE(admin.ok()) << admin.error_message();
  EXPECT_EQ(grants_->ListGrants(As(alice).get(), grants, &listed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A person the provider knows but SharedOS gives no role: refused.
  EXPECT_EQ(Call(Token("carol")).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  // SharedOS's own credentials keep working beside the provider's tokens.
  EXPECT_TRUE(Call(admin_token_, "world-demo").ok());
}

TEST_P(GrpcOidcTest, TheApprovalRecordNamesTheProvidersIssuerAndSubject) {
  const std::string id = RaiseEscalation();
  ASSERT_FALSE(id.empty());
  gs::ResolveEscalationResponse approved;
  grpc::Status status = Approve(Token("user-alice"), id, &approved);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(approved.escalation().status(), gs::ESCALATION_RECORD_STATUS_APPROVED);
  EXPECT_EQ(approved.escalation().decided_by().human_user_id(), "user-alice");
  const gs::DecisionCredential& with = approved.escalation().decided_with();
  EXPECT_EQ(with.idp_issuer(), provider_->issuer());
  EXPECT_EQ(with.idp_subject(), "user-alice");
  EXPECT_FALSE(with.break_glass());
  // As stored.
  gs::GetEscalationRequest get;
  get.set_escalation_id(id);
  gs::GetEscalationResponse stored;
  ASSERT_TRUE(grants_->GetEscalation(As(admin_token_).get(), get, &stored).ok());
  EXPECT_EQ(stored.escalation().decided_with().idp_issuer(), provider_->issuer());
  EXPECT_EQ(stored.escalation().decided_with().idp_subject(), "user-alice");
}

TEST_P(GrpcOidcTest, AnAdminCannotMintAHumansReviewerCredential) {
  gs::IssueCredentialResponse response;
  grpc::Status status = IssueHumanReviewerCredential(&response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("identity provider"));
  EXPECT_THAT(status.error_message(), HasSubstr("--allow_reviewer_credentials_with_idp"));
  // A host credential (not a human's reviewer identity) is still issued.
  gs::IssueCredentialResponse host;
  grpc::Status issued =
      grants_->IssueCredential(As(admin_token_).get(), Parse<gs::IssueCredentialRequest>(R"pb(
                                 credential_id: "host-b"
                                 principal { service_id: "host-b" }
                                 role: CREDENTIAL_ROLE_HOST
                                 scope { namespaces: "world-demo" })pb"),
                               &host);
  EXPECT_TRUE(issued.ok()) << issued.error_message();
}

TEST_P(GrpcOidcTest, RefusesAnExpiredToken) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  auto token = provider_->Sign({{"iss", provider_->issuer()},
                                {"sub", "alice"},
                                {"aud", kAudience},
                                {"groups", {"sharedos-reviewers-world-1"}},
                                {"iat", now - 7200},
                                {"exp", now - 3600}});
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectUnauthenticated(*token);
}

TEST_P(GrpcOidcTest, RefusesATokenForAnotherAudience) {
  auto token = provider_->UserAccessToken("alice", "urn:some:other-api");
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectUnauthenticated(*token);
}

TEST_P(GrpcOidcTest, RefusesATokenOfAnotherIssuer) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  auto token = provider_->Sign({{"iss", "http://127.0.0.1:1"},
                                {"sub", "alice"},
                                {"aud", kAudience},
                                {"groups", {"sharedos-reviewers-world-1"}},
                                {"iat", now},
                                {"exp", now + 600}});
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectUnauthenticated(*token);
}

TEST_P(GrpcOidcTest, RefusesAlgNone) {
  const std::string token = Token("alice");
  ASSERT_TRUE(Call(token).ok());
  nlohmann::json header = DecodePart(token, 0);
  header["alg"] = "none";
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  ExpectUnauthenticated(absl::StrCat(EncodeJson(header), ".", parts[1], "."));
  ExpectUnauthenticated(absl::StrCat(EncodeJson(header), ".", parts[1], ".", parts[2]));
}

TEST_P(GrpcOidcTest, RefusesHs256SignedWithTheProvidersPublicKey) {
  const std::string token = Token("alice");
  auto jwks = provider_->Jwks();
  ASSERT_TRUE(jwks.ok()) << jwks.status();
  nlohmann::json header = DecodePart(token, 0);
  header["alg"] = "HS256";
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  const std::string input = absl::StrCat(EncodeJson(header), ".", parts[1]);
  const std::string secret = (*jwks)["keys"][0].dump();
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &mac_length);
  ExpectUnauthenticated(absl::StrCat(
      input, ".", common::Base64UrlEncode(std::string(reinterpret_cast<char*>(mac), mac_length))));
}

TEST_P(GrpcOidcTest, RefusesAnUnknownKid) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  auto token = provider_->Sign({{"iss", provider_->issuer()},
                                {"sub", "alice"},
                                {"aud", kAudience},
                                {"groups", {"sharedos-reviewers-world-1"}},
                                {"iat", now},
                                {"exp", now + 600}},
                               {{"kid", "no-such-provider-key"}});
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectUnauthenticated(*token);
}

TEST_P(GrpcOidcTest, RefusesATamperedPayload) {
  const std::string token = Token("alice");
  ASSERT_TRUE(Call(token).ok());
  nlohmann::json payload = DecodePart(token, 1);
  payload["groups"] = {"sharedos-admins"};
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  ExpectUnauthenticated(absl::StrCat(parts[0], ".", EncodeJson(payload), ".", parts[2]));
}

TEST_P(GrpcOidcTest, AcceptsTheProvidersRotatedKeyWithoutRestart) {
  ASSERT_TRUE(Call(Token("alice")).ok());
  auto kid = provider_->RotateKey();
  ASSERT_TRUE(kid.ok()) << kid.status();
  const std::string rotated = Token("alice");
  ASSERT_EQ(DecodePart(rotated, 0)["kid"], *kid);
  grpc::Status status = Call(rotated);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

INSTANTIATE_TEST_SUITE_P(Sharedosd, GrpcOidcTest, ::testing::Values(true), e2e::DeploymentName);

// The provider down before sharedosd ever had its keys: every token refused UNAVAILABLE (never
// accepted), SharedOS's own credentials unaffected.
class GrpcOidcUnreachableTest : public GrpcOidcTest {
 protected:
  bool StartProvider() const override { return false; }
};

TEST_P(GrpcOidcUnreachableTest, FailsClosedWhenTheProviderIsUnreachableAndNoKeyIsCached) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  // A well-formed token (its signature cannot be checked: no key can be had).
  const std::string header = EncodeJson({{"alg", "RS256"}, {"kid", "k1"}, {"typ", "at+jwt"}});
  const std::string payload = EncodeJson({{"iss", provider_->issuer()},
                                          {"sub", "alice"},
                                          {"aud", kAudience},
                                          {"groups", {"sharedos-reviewers-world-1"}},
                                          {"iat", now},
                                          {"exp", now + 600}});
  grpc::Status status = Call(absl::StrCat(header, ".", payload, ".c2lnbmF0dXJl"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_TRUE(Call(admin_token_, "world-demo").ok());
}

INSTANTIATE_TEST_SUITE_P(Sharedosd, GrpcOidcUnreachableTest, ::testing::Values(true),
                         e2e::DeploymentName);

// Break-glass: --allow_reviewer_credentials_with_idp lets an admin mint a human's reviewer
// credential; the approval made with it says so.
class GrpcOidcBreakGlassTest : public GrpcOidcTest {
 protected:
  std::vector<std::string> ExtraFlags() const override {
    return {"--allow_reviewer_credentials_with_idp"};
  }
};

TEST_P(GrpcOidcBreakGlassTest, AReviewerCredentialIsIssuedAndItsApprovalRecordedAsBreakGlass) {
  gs::IssueCredentialResponse issued;
  grpc::Status status = IssueHumanReviewerCredential(&issued);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::string id = RaiseEscalation();
  ASSERT_FALSE(id.empty());
  gs::ResolveEscalationResponse approved;
  status = Approve(issued.secret(), id, &approved);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const gs::DecisionCredential& with = approved.escalation().decided_with();
  EXPECT_TRUE(with.break_glass());
  EXPECT_TRUE(with.idp_issuer().empty());
  EXPECT_EQ(with.credential_id(), "alice-reviewer");
}

INSTANTIATE_TEST_SUITE_P(Sharedosd, GrpcOidcBreakGlassTest, ::testing::Values(true),
                         e2e::DeploymentName);

}  // namespace
}  // namespace sharedos
