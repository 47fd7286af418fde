// One behavioural suite for every GrantStoreClient: the in-memory fake and the gRPC client
// against a real in-process grantstore_svc (SQLite in memory), so the fake the authorizer's
// tests rely on answers the way the service does.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "grantstore_svc/client/grpc_grant_store_client.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/server/grantstore_service.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::client {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kServiceToken[] = "authorizer-token-0123456789";
constexpr char kAdminToken[] = "admin-token-0123456789";

template <typename T>
T Parse(const std::string& text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    ADD_FAILURE() << "bad text proto: " << text;
  }
  return message;
}

pb::CapabilityGrant Grant(const std::string& id, const std::string& subject = "assistant") {
  auto grant = Parse<pb::CapabilityGrant>(R"pb(
    namespace_id: "world"
    issuer { human_user_id: "alice" }
    capabilities {
      resource { namespace: "files" path: "docs" }
      actions: "read"
      scope: SCOPE_DESCENDANTS
    }
    constraints { max_uses: 2 }
    issued_at { seconds: 1700000000 }
  )pb");
  grant.set_id(id);
  grant.mutable_subject()->set_agent_id(subject);
  return grant;
}

v1::LoadAuthorityRequest Load() {
  return Parse<v1::LoadAuthorityRequest>(R"pb(
    namespace_id: "world"
    actor { agent_id: "assistant" }
    authority { human_user_id: "alice" }
  )pb");
}

v1::RecordEscalationRequest Escalation(const std::string& reason) {
  auto request = Parse<v1::RecordEscalationRequest>(R"pb(
    namespace_id: "world"
    execution_id: "exec-1"
    escalation_id: "esc-1"
    escalation {
      reviewer { human_user_id: "alice" }
      requested_at { seconds: 1700000100 }
      status: ESCALATION_STATUS_PENDING
    }
  )pb");
  request.mutable_escalation()->set_reason(reason);
  return request;
}

// A store behind a GrantStoreClient, seeded the way an operator would.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual GrantStoreClient& client() = 0;
  // Each returns the revision the mutation took.
  virtual int64_t Issue(pb::CapabilityGrant grant) = 0;
  virtual int64_t Revoke(const std::string& grant_id) = 0;
  virtual int64_t PutPolicy(v1::HostPolicy policy) = 0;
  // Makes the store unreachable.
  virtual void TakeDown() = 0;
};

class FakeBackend : public Backend {
 public:
  GrantStoreClient& client() override { return fake_; }
  int64_t Issue(pb::CapabilityGrant grant) override { return fake_.IssueGrant(std::move(grant)); }
  int64_t Revoke(const std::string& grant_id) override {
    return fake_.RevokeGrant("world", grant_id, absl::FromUnixSeconds(1700000500));
  }
  int64_t PutPolicy(v1::HostPolicy policy) override {
    return fake_.PutHostPolicy(std::move(policy));
  }
  void TakeDown() override { fake_.SetDown(true); }

 private:
  FakeGrantStoreClient fake_;
};

class GrpcBackend : public Backend {
 public:
  GrpcBackend() : clock_(absl::FromUnixSeconds(1700000500)) {
    using common::server::TokenDigestHex;
    authenticator_ = *common::server::Authenticator::FromJson(absl::StrCat(
        R"({"credentials": [{"name": "authorizer", "role": "service", "token_sha256": ")",
        TokenDigestHex(kServiceToken), R"("}, {"name": "ops", "role": "admin", "token_sha256": ")",
        TokenDigestHex(kAdminToken), R"("}]})"));
    storage::SqliteGrantStore::Options options;
    options.path = ":memory:";
    store_ = *storage::SqliteGrantStore::Open(options);
    core_ = std::make_unique<core::GrantStoreCore>(*store_, audit_, clock_);
    service_ = std::make_unique<server::GrantStoreService>(*core_, *authenticator_);
    runner_ =
        *common::server::ServerRunner::Start(common::server::ServerOptions{}, {service_.get()});
    channel_ = grpc::CreateChannel(runner_->address(), grpc::InsecureChannelCredentials());
    client_ = std::make_unique<GrpcGrantStoreClient>(channel_, kServiceToken);
  }
  ~GrpcBackend() override {
    client_.reset();
    runner_.reset();
  }

  GrantStoreClient& client() override { return *client_; }
  int64_t Issue(pb::CapabilityGrant grant) override {
    v1::IssueGrantRequest request;
    *request.mutable_grant() = std::move(grant);
    auto response = core_->IssueGrant(core::InProcessOperator("ops"), request);
    EXPECT_THAT(response, IsOk());
    return response.ok() ? response->revision() : -1;
  }
  int64_t Revoke(const std::string& grant_id) override {
    v1::RevokeGrantRequest request;
    request.set_namespace_id("world");
    request.set_grant_id(grant_id);
    auto response = core_->RevokeGrant(core::InProcessOperator("ops"), request);
    EXPECT_THAT(response, IsOk());
    return response.ok() ? response->revision() : -1;
  }
  int64_t PutPolicy(v1::HostPolicy policy) override {
    v1::PutHostPolicyRequest request;
    *request.mutable_policy() = std::move(policy);
    auto response = core_->PutHostPolicy(core::InProcessOperator("ops"), request);
    EXPECT_THAT(response, IsOk());
    return response.ok() ? response->revision() : -1;
  }
  void TakeDown() override { runner_->Shutdown(); }

  std::shared_ptr<grpc::Channel> channel() { return channel_; }

 private:
  common::SimulatedClock clock_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<common::server::Authenticator> authenticator_;
  std::unique_ptr<storage::SqliteGrantStore> store_;
  std::unique_ptr<core::GrantStoreCore> core_;
  std::unique_ptr<server::GrantStoreService> service_;
  std::unique_ptr<common::server::ServerRunner> runner_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<GrpcGrantStoreClient> client_;
};

enum class Kind { kFake, kGrpc };

class GrantStoreClientTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kFake) {
      backend_ = std::make_unique<FakeBackend>();
    } else {
      backend_ = std::make_unique<GrpcBackend>();
    }
  }
  GrantStoreClient& client() { return backend_->client(); }

  CallOptions options_;
  std::unique_ptr<Backend> backend_;
};

TEST_P(GrantStoreClientTest, LoadAuthorityAnswersTheActorsGrantsInIssueOrder) {
  backend_->Issue(Grant("g-b"));
  backend_->Issue(Grant("g-other", "someone-else"));
  const int64_t revision = backend_->Issue(Grant("g-a"));
  auto loaded = client().LoadAuthority(Load(), options_);
  ASSERT_THAT(loaded, IsOk());
  ASSERT_EQ(loaded->grants_size(), 2);
  EXPECT_EQ(loaded->grants(0).id(), "g-b");
  EXPECT_EQ(loaded->grants(1).id(), "g-a");
  EXPECT_EQ(loaded->revision(), revision);
  EXPECT_TRUE(loaded->host_policy().has_absent());
}

TEST_P(GrantStoreClientTest, LoadAuthorityAtARevisionIsReproducible) {
  const int64_t first = backend_->Issue(Grant("g-1"));
  backend_->Issue(Grant("g-2"));
  const int64_t before_revocation = backend_->Revoke("g-1") - 1;

  v1::LoadAuthorityRequest at_first = Load();
  at_first.set_at_revision(first);
  auto loaded = client().LoadAuthority(at_first, options_);
  ASSERT_THAT(loaded, IsOk());
  ASSERT_EQ(loaded->grants_size(), 1);
  EXPECT_EQ(loaded->grants(0).id(), "g-1");
  EXPECT_FALSE(loaded->grants(0).has_revoked_at());

  v1::LoadAuthorityRequest before = Load();
  before.set_at_revision(before_revocation);
  loaded = client().LoadAuthority(before, options_);
  ASSERT_THAT(loaded, IsOk());
  ASSERT_EQ(loaded->grants_size(), 2);
  EXPECT_FALSE(loaded->grants(0).has_revoked_at());

  // grantstore.proto says revoked grants come back with revoked_at set; the SQLite store
  // leaves them out. Either way the revoked grant cannot serve the turn.
  loaded = client().LoadAuthority(Load(), options_);
  ASSERT_THAT(loaded, IsOk());
  ASSERT_GE(loaded->grants_size(), 1);
  for (const pb::CapabilityGrant& grant : loaded->grants()) {
    EXPECT_TRUE(grant.id() == "g-2" || grant.has_revoked_at()) << grant.id();
  }

  v1::LoadAuthorityRequest ahead = Load();
  ahead.set_at_revision(loaded->revision() + 10);
  EXPECT_THAT(client().LoadAuthority(ahead, options_),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_P(GrantStoreClientTest, LoadAuthorityCarriesTheHostPolicyOfItsRevision) {
  backend_->Issue(Grant("g-1"));
  const int64_t before = backend_->PutPolicy(Parse<v1::HostPolicy>(R"pb(
    namespace_id: "world"
    version: "v1"
    rules { id: "no-secrets" resource_namespace: "files" path: "secrets" scope: SCOPE_DESCENDANTS }
  )pb")) - 1;
  auto loaded = client().LoadAuthority(Load(), options_);
  ASSERT_THAT(loaded, IsOk());
  ASSERT_TRUE(loaded->host_policy().has_loaded());
  EXPECT_EQ(loaded->host_policy().loaded().version(), "v1");
  ASSERT_EQ(loaded->host_policy().loaded().rules_size(), 1);

  v1::LoadAuthorityRequest at_before = Load();
  at_before.set_at_revision(before);
  loaded = client().LoadAuthority(at_before, options_);
  ASSERT_THAT(loaded, IsOk());
  EXPECT_TRUE(loaded->host_policy().has_absent());
}

TEST_P(GrantStoreClientTest, ResolveGrantIsNeverStale) {
  const int64_t first = backend_->Issue(Grant("g-1"));
  backend_->Issue(Grant("g-2"));
  v1::ResolveGrantRequest request;
  request.set_namespace_id("world");
  request.set_grant_id("g-2");
  auto resolved = client().ResolveGrant(request, options_);
  ASSERT_THAT(resolved, IsOk());
  EXPECT_EQ(resolved->grant().id(), "g-2");

  request.set_at_revision(first);
  EXPECT_THAT(client().ResolveGrant(request, options_), StatusIs(absl::StatusCode::kNotFound));
  request.clear_at_revision();
  request.set_grant_id("missing");
  EXPECT_THAT(client().ResolveGrant(request, options_), StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(GrantStoreClientTest, TryConsumeSpendsUpToMaxUses) {
  backend_->Issue(Grant("g-1"));
  v1::TryConsumeRequest consume;
  consume.set_namespace_id("world");
  consume.set_grant_id("g-1");
  consume.set_max_uses(2);
  for (bool expected : {true, true, false}) {
    auto consumed = client().TryConsume(consume, options_);
    ASSERT_THAT(consumed, IsOk());
    EXPECT_EQ(consumed->consumed(), expected);
  }
  v1::GetUsageRequest usage;
  usage.set_namespace_id("world");
  usage.set_grant_id("g-1");
  auto used = client().GetUsage(usage, options_);
  ASSERT_THAT(used, IsOk());
  EXPECT_EQ(used->uses(), 2);

  consume.set_grant_id("missing");
  EXPECT_THAT(client().TryConsume(consume, options_), StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(GrantStoreClientTest, CheckRevocationsReportsRevokedAndUnknownIds) {
  backend_->Issue(Grant("g-1"));
  backend_->Issue(Grant("g-2"));
  backend_->Revoke("g-2");
  v1::CheckRevocationsRequest request;
  request.set_namespace_id("world");
  request.add_grant_ids("g-1");
  request.add_grant_ids("g-2");
  request.add_grant_ids("unknown");
  auto checked = client().CheckRevocations(request, options_);
  ASSERT_THAT(checked, IsOk());
  EXPECT_THAT(checked->revoked_grant_ids(), ElementsAre("g-2", "unknown"));
}

TEST_P(GrantStoreClientTest, RecordEscalationIsIdempotentOnItsId) {
  EXPECT_THAT(
      client().RecordEscalation(Escalation("needs write"), options_),
      IsOkAndHolds(::testing::Property(&v1::RecordEscalationResponse::escalation_id, "esc-1")));
  EXPECT_THAT(client().RecordEscalation(Escalation("needs write"), options_), IsOk());
  EXPECT_THAT(client().RecordEscalation(Escalation("something else"), options_),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_P(GrantStoreClientTest, AStoreThatIsDownIsUnavailable) {
  backend_->Issue(Grant("g-1"));
  backend_->TakeDown();
  EXPECT_THAT(client().LoadAuthority(Load(), options_), StatusIs(absl::StatusCode::kUnavailable));
}

INSTANTIATE_TEST_SUITE_P(Backends, GrantStoreClientTest,
                         ::testing::Values(Kind::kFake, Kind::kGrpc), [](const auto& info) {
                           return info.param == Kind::kFake ? "Fake" : "Grpc";
                         });

// --- What only one of them does ---

TEST(GrpcGrantStoreClientTest, SendsTheServiceCredential) {
  GrpcBackend backend;
  GrpcGrantStoreClient wrong(backend.channel(), "not-a-token");
  EXPECT_THAT(wrong.LoadAuthority(Load(), CallOptions{}),
              StatusIs(absl::StatusCode::kUnauthenticated));
  GrpcGrantStoreClient admin(backend.channel(), kAdminToken);
  EXPECT_THAT(admin.LoadAuthority(Load(), CallOptions{}),
              StatusIs(absl::StatusCode::kPermissionDenied))
      << "data-plane methods take only the service credential";
  EXPECT_THAT(backend.client().LoadAuthority(Load(), CallOptions{}), IsOk());
}

TEST(GrpcGrantStoreClientTest, AnExpiredDeadlineFailsTheCall) {
  GrpcBackend backend;
  CallOptions options;
  options.deadline = absl::Seconds(-1);  // Already past when the call starts.
  EXPECT_THAT(backend.client().LoadAuthority(Load(), options),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST(FakeGrantStoreClientTest, ASlowStoreMissesShortDeadlinesWithoutSleeping) {
  FakeGrantStoreClient fake;
  fake.IssueGrant(Grant("g-1"));
  fake.SetLatency(absl::Seconds(5));
  CallOptions options;
  options.deadline = absl::Seconds(1);
  EXPECT_THAT(fake.LoadAuthority(Load(), options),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("slow")));
  options.deadline = absl::Seconds(10);
  EXPECT_THAT(fake.LoadAuthority(Load(), options), IsOk());
}

TEST(FakeGrantStoreClientTest, OneMethodCanFailAndCallsAreCounted) {
  FakeGrantStoreClient fake;
  fake.IssueGrant(Grant("g-1"));
  fake.FailMethod(FakeGrantStoreClient::Method::kTryConsume, absl::UnavailableError("boom"));
  v1::TryConsumeRequest consume;
  consume.set_namespace_id("world");
  consume.set_grant_id("g-1");
  consume.set_max_uses(1);
  EXPECT_THAT(fake.TryConsume(consume, CallOptions{}), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(fake.LoadAuthority(Load(), CallOptions{}), IsOk());
  fake.FailMethod(FakeGrantStoreClient::Method::kTryConsume, absl::OkStatus());
  EXPECT_THAT(fake.TryConsume(consume, CallOptions{}), IsOk());
  EXPECT_EQ(fake.calls(FakeGrantStoreClient::Method::kTryConsume), 2);
  EXPECT_EQ(fake.Usage("world", "g-1"), 1);
}

}  // namespace
}  // namespace sharedos::grantstore::client
