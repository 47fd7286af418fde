// AuthorizerCore with the fake grant store, the fake audit writer and a simulated clock: every
// lease and decision path, and the order of consumption and audit.
#include "authorizer_svc/core/authorizer_core.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "capability/capability_request.h"
#include "capability/test_builders.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "gtest/gtest.h"

namespace sharedos::authorizer::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
using ::sharedos::capability::testing::Agent;
using ::sharedos::capability::testing::At;
using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::Human;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::Req;
using ::sharedos::capability::testing::T0;
using ::sharedos::capability::testing::Ts;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::grantstore::client::CallOptions;
using ::sharedos::grantstore::client::FakeGrantStoreClient;
using Method = ::sharedos::grantstore::client::FakeGrantStoreClient::Method;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr char kSecret[] = "a-test-lease-secret-of-32-bytes!";

std::string Str(const pb::AuditEvent& event, const std::string& key) {
  auto it = event.metadata().fields().find(key);
  return it == event.metadata().fields().end() ? "<absent>" : it->second.string_value();
}

bool Has(const pb::AuditEvent& event, const std::string& key) {
  return event.metadata().fields().contains(key);
}

// A grant store where another caller spends the last use of a grant between our GetUsage and
// our TryConsume (a lost race), once.
class RacingGrantStore : public FakeGrantStoreClient {
 public:
  absl::StatusOr<gs::TryConsumeResponse> TryConsume(const gs::TryConsumeRequest& request,
                                                    const CallOptions& options) override {
    if (!raced_) {
      raced_ = true;
      SetUsage(request.namespace_id(), request.grant_id(), request.max_uses());
    }
    return FakeGrantStoreClient::TryConsume(request, options);
  }

 private:
  bool raced_ = false;
};

class AuthorizerCoreTest : public ::testing::Test {
 protected:
  AuthorizerCoreTest() : clock_(T0() + absl::Seconds(5)) { Rebuild(); }

  void Rebuild(AuthorizerCore::Options options = {}) {
    authorizer_ = std::make_unique<AuthorizerCore>(store_, audit_, clock_, kSecret, options);
  }

  static v1::OpenTurnAuthorityRequest OpenRequest(const std::string& turn_id = "turn-1") {
    v1::OpenTurnAuthorityRequest request;
    *request.mutable_context() = MakeContext();
    request.set_turn_id(turn_id);
    return request;
  }

  v1::OpenTurnAuthorityResponse Open(const std::string& turn_id = "turn-1") {
    absl::StatusOr<v1::OpenTurnAuthorityResponse> opened =
        authorizer_->OpenTurnAuthority(OpenRequest(turn_id));
    EXPECT_THAT(opened, IsOk());
    return opened.ok() ? *opened : v1::OpenTurnAuthorityResponse();
  }

  static v1::AuthorizeRequest AuthorizeRequest(const std::string& lease_id,
                                               pb::CapabilityRequirement requirement,
                                               bool consume = false) {
    v1::AuthorizeRequest request;
    request.set_lease_id(lease_id);
    *request.mutable_requirement() = std::move(requirement);
    request.set_consume(consume);
    request.set_operation_id("call-1");
    request.set_tool("files.read");
    return request;
  }

  v1::AuthorizeResponse Authorize(const std::string& lease_id,
                                  pb::CapabilityRequirement requirement, bool consume = false,
                                  AuthorizerCore* authorizer = nullptr) {
    if (authorizer == nullptr) authorizer = authorizer_.get();
    absl::StatusOr<v1::AuthorizeResponse> answered =
        authorizer->Authorize(AuthorizeRequest(lease_id, std::move(requirement), consume));
    EXPECT_THAT(answered, IsOk());
    return answered.ok() ? *answered : v1::AuthorizeResponse();
  }

  static pb::CapabilityRequirement ReadNotes() {
    return Req("files", {"projects", "notes.md"}, "read");
  }

  void IssueReadGrant(const std::string& id = "g-read") {
    store_.IssueGrant(GrantBuilder(id).WithCapability(Cap("files", {"projects"}, {"read"})));
  }

  std::vector<pb::AuditEvent> Events(pb::AuditEventType type) const {
    std::vector<pb::AuditEvent> out;
    for (const pb::AuditEvent& event : audit_.events()) {
      if (event.type() == type) out.push_back(event);
    }
    return out;
  }

  common::SimulatedClock clock_;
  FakeGrantStoreClient store_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<AuthorizerCore> authorizer_;
};

// --- Opening a lease ---

TEST_F(AuthorizerCoreTest, OpenLoadsOnceResolvesAndRecordsAuthorityResolvedPreEffect) {
  IssueReadGrant("g-b");
  IssueReadGrant("g-a");
  const v1::OpenTurnAuthorityResponse lease = Open();
  EXPECT_EQ(lease.status(), v1::LEASE_STATUS_RESOLVED);
  EXPECT_EQ(lease.grant_count(), 2);
  EXPECT_EQ(lease.revision(), 2);
  EXPECT_THAT(lease.authority_hash(), SizeIs(64));
  EXPECT_EQ(lease.host_policy_status(), v1::HOST_POLICY_STATUS_ABSENT);
  EXPECT_TRUE(lease.code().empty());

  const auto recorded = audit_.recorded();
  ASSERT_THAT(recorded, SizeIs(1));
  EXPECT_TRUE(recorded[0].pre_effect);
  const pb::AuditEvent& event = recorded[0].event;
  EXPECT_EQ(event.type(), pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_EQ(event.authority_hash(), lease.authority_hash());
  EXPECT_FALSE(event.has_fail_closed());
  const auto& ids = event.metadata().fields().at("grantIds").list_value().values();
  ASSERT_EQ(ids.size(), 2);
  EXPECT_EQ(ids[0].string_value(), "g-a");
  EXPECT_EQ(ids[1].string_value(), "g-b");
  EXPECT_EQ(event.metadata().fields().at("grantCount").number_value(), 2);
  EXPECT_EQ(Str(event, "hostCeiling"), "absent");
  EXPECT_EQ(Str(event, "hostPolicy"), "absent");
  EXPECT_EQ(Str(event, "turnId"), "turn-1");
  EXPECT_EQ(event.trace_id(), "trace-1");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(event.at(), Ts(T0())));

  // Decisions under the lease never read the store again.
  Authorize(lease.lease_id(), ReadNotes());
  Authorize(lease.lease_id(), ReadNotes());
  EXPECT_EQ(store_.calls(Method::kLoadAuthority), 1);
}

TEST_F(AuthorizerCoreTest, OpenWithAHostPolicyReportsTheCeiling) {
  IssueReadGrant();
  gs::HostPolicy policy;
  policy.set_namespace_id("world-1");
  policy.set_version("policy-7");
  store_.PutHostPolicy(policy);
  const v1::OpenTurnAuthorityResponse lease = Open();
  EXPECT_EQ(lease.host_policy_status(), v1::HOST_POLICY_STATUS_LOADED);
  EXPECT_EQ(lease.host_policy_version(), "policy-7");
  const auto events = Events(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(Str(events[0], "hostCeiling"), "installed");
  EXPECT_EQ(Str(events[0], "hostPolicy"), "loaded");
}

TEST_F(AuthorizerCoreTest, AStoreOutageAtOpenIsAnUnavailableLeaseForTheWholeTurn) {
  IssueReadGrant();
  store_.SetDown(true);
  const v1::OpenTurnAuthorityResponse lease = Open();
  EXPECT_EQ(lease.status(), v1::LEASE_STATUS_UNAVAILABLE);
  EXPECT_EQ(lease.code(), "authority_unavailable");
  EXPECT_TRUE(lease.authority_hash().empty());

  auto resolved = Events(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  ASSERT_THAT(resolved, SizeIs(1));
  EXPECT_EQ(resolved[0].outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(resolved[0].reason(), "authority_unavailable");
  EXPECT_TRUE(resolved[0].fail_closed());
  EXPECT_EQ(Str(resolved[0], "authority"), "grant_source_failed");
  EXPECT_FALSE(Has(resolved[0], "hostPolicy")) << "the store never answered";

  // The store comes back: the turn stays fail closed.
  store_.SetDown(false);
  const v1::AuthorizeResponse answer = Authorize(lease.lease_id(), ReadNotes(), true);
  EXPECT_FALSE(answer.decision().allowed());
  EXPECT_EQ(answer.decision().reason_code(), "authority_unavailable");
  EXPECT_TRUE(answer.fail_closed());
  EXPECT_FALSE(answer.decision().has_required_authority());
  EXPECT_EQ(answer.decision()
                .metadata()
                .fields()
                .at("authority")
                .struct_value()
                .fields()
                .at("code")
                .string_value(),
            "grant_source_failed");
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(1));
  EXPECT_EQ(checked[0].reason(), "authority_unavailable");
  EXPECT_TRUE(checked[0].fail_closed());
  EXPECT_TRUE(checked[0].authority_hash().empty());
  EXPECT_EQ(store_.calls(Method::kLoadAuthority), 1);
}

TEST_F(AuthorizerCoreTest, ASlowStoreAtOpenFailsClosedWithoutWaiting) {
  IssueReadGrant();
  store_.SetLatency(absl::Seconds(30));
  const v1::OpenTurnAuthorityResponse lease = Open();
  EXPECT_EQ(lease.status(), v1::LEASE_STATUS_UNAVAILABLE);
  EXPECT_EQ(lease.code(), "authority_unavailable");
}

TEST_F(AuthorizerCoreTest, MoreThan256GrantsIsGrantLimitExceeded) {
  for (int i = 0; i < 257; ++i) IssueReadGrant(absl::StrCat("g-", i));
  const v1::OpenTurnAuthorityResponse lease = Open();
  EXPECT_EQ(lease.status(), v1::LEASE_STATUS_UNAVAILABLE);
  auto resolved = Events(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  ASSERT_THAT(resolved, SizeIs(1));
  EXPECT_EQ(Str(resolved[0], "authority"), "grant_limit_exceeded");
}

TEST_F(AuthorizerCoreTest, AnAuditOutageAtOpenKeepsTheTurnFailClosed) {
  IssueReadGrant();
  audit_.FailPreEffect(true);
  const v1::OpenTurnAuthorityResponse lease = Open();
  EXPECT_EQ(lease.status(), v1::LEASE_STATUS_UNAVAILABLE);
  EXPECT_EQ(lease.code(), "audit_unavailable");
  audit_.FailPreEffect(false);
  const v1::AuthorizeResponse answer = Authorize(lease.lease_id(), ReadNotes());
  EXPECT_FALSE(answer.decision().allowed());
  EXPECT_EQ(answer.decision().reason_code(), "audit_unavailable");
  EXPECT_TRUE(answer.fail_closed());
}

TEST_F(AuthorizerCoreTest, ReopeningTheSameTurnAnswersTheHeldLease) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse first = Open("turn-1");
  IssueReadGrant("g-later");
  const v1::OpenTurnAuthorityResponse again = Open("turn-1");
  EXPECT_EQ(again.lease_id(), first.lease_id());
  EXPECT_EQ(again.grant_count(), 1);
  EXPECT_EQ(store_.calls(Method::kLoadAuthority), 1);
  EXPECT_THAT(Events(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED), SizeIs(1));

  // Another turn of the same context is isolated (ADR 0027).
  const v1::OpenTurnAuthorityResponse other = Open("turn-2");
  EXPECT_NE(other.lease_id(), first.lease_id());
  EXPECT_EQ(other.grant_count(), 2);
}

// --- Expiry and close ---

TEST_F(AuthorizerCoreTest, LeasesExpireAfterTheirTimeoutByTheInjectedClock) {
  IssueReadGrant();
  v1::OpenTurnAuthorityRequest request = OpenRequest();
  request.mutable_timeout()->set_seconds(10);
  auto lease = authorizer_->OpenTurnAuthority(request);
  ASSERT_THAT(lease, IsOk());
  clock_.AdvanceTime(absl::Seconds(9));
  EXPECT_TRUE(Authorize(lease->lease_id(), ReadNotes()).decision().allowed());
  clock_.AdvanceTime(absl::Seconds(1));
  EXPECT_THAT(authorizer_->Authorize(AuthorizeRequest(lease->lease_id(), ReadNotes())),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("expired")));
  // A replica that never held it refuses it the same way.
  AuthorizerCore other(store_, audit_, clock_, kSecret, {});
  EXPECT_THAT(other.Authorize(AuthorizeRequest(lease->lease_id(), ReadNotes())),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("expired")));
  // Expired leases are swept at the next open.
  EXPECT_EQ(authorizer_->held_leases(), 1);
  Open("turn-2");
  EXPECT_EQ(authorizer_->held_leases(), 1);
}

TEST_F(AuthorizerCoreTest, TheDefaultTimeoutApplies) {
  AuthorizerCore::Options options;
  options.default_lease_timeout = absl::Seconds(60);
  Rebuild(options);
  const v1::OpenTurnAuthorityResponse lease = Open();
  clock_.AdvanceTime(absl::Seconds(60));
  EXPECT_THAT(authorizer_->Reach([&] {
    v1::ReachRequest request;
    request.set_lease_id(lease.lease_id());
    return request;
  }()),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(AuthorizerCoreTest, CloseIsIdempotentAndAClosedLeaseIsNotFound) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::CloseTurnAuthorityRequest close;
  close.set_lease_id(lease.lease_id());
  EXPECT_THAT(authorizer_->CloseTurnAuthority(close), IsOk());
  EXPECT_THAT(authorizer_->CloseTurnAuthority(close), IsOk());
  EXPECT_THAT(authorizer_->Authorize(AuthorizeRequest(lease.lease_id(), ReadNotes())),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("closed")));
  EXPECT_EQ(authorizer_->held_leases(), 0);
  clock_.AdvanceTime(absl::Hours(1));
  EXPECT_THAT(authorizer_->CloseTurnAuthority(close), IsOk()) << "expired closes too";
  close.set_lease_id("not-a-lease");
  EXPECT_THAT(authorizer_->CloseTurnAuthority(close),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease_id")));
}

// --- Lease ids survive a replica, and cannot be forged ---

TEST_F(AuthorizerCoreTest, AnotherReplicaRebuildsTheLeaseAtItsRevision) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  // A grant issued after the lease opened is not part of it, on any replica.
  store_.IssueGrant(GrantBuilder("g-write").WithCapability(Cap("files", {"projects"}, {"write"})));
  audit_.Clear();

  AuthorizerCore replica(store_, audit_, clock_, kSecret, {});
  const v1::AuthorizeResponse read = Authorize(lease.lease_id(), ReadNotes(), false, &replica);
  EXPECT_TRUE(read.decision().allowed());
  const v1::AuthorizeResponse write =
      Authorize(lease.lease_id(), Req("files", {"projects", "notes.md"}, "write"), false, &replica);
  EXPECT_FALSE(write.decision().allowed());
  EXPECT_EQ(write.decision().reason_code(), "no_matching_grant");
  EXPECT_EQ(store_.calls(Method::kLoadAuthority), 2) << "one open, one rebuild, then held";

  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(2));
  EXPECT_EQ(checked[0].authority_hash(), lease.authority_hash());
  EXPECT_THAT(Events(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED), SizeIs(0))
      << "a rebuild is the same snapshot, not a new resolution";
}

TEST_F(AuthorizerCoreTest, ARebuildDuringAnOutageFailsClosedAndRetriesLater) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  AuthorizerCore replica(store_, audit_, clock_, kSecret, {});
  store_.SetDown(true);
  const v1::AuthorizeResponse down = Authorize(lease.lease_id(), ReadNotes(), false, &replica);
  EXPECT_FALSE(down.decision().allowed());
  EXPECT_EQ(down.decision().reason_code(), "authority_unavailable");
  EXPECT_TRUE(down.fail_closed());
  store_.SetDown(false);
  EXPECT_TRUE(Authorize(lease.lease_id(), ReadNotes(), false, &replica).decision().allowed());
}

TEST_F(AuthorizerCoreTest, AnUnavailableLeaseStaysUnavailableOnEveryReplica) {
  store_.SetDown(true);
  const v1::OpenTurnAuthorityResponse lease = Open();
  store_.SetDown(false);
  IssueReadGrant();
  AuthorizerCore replica(store_, audit_, clock_, kSecret, {});
  const v1::AuthorizeResponse answer = Authorize(lease.lease_id(), ReadNotes(), false, &replica);
  EXPECT_EQ(answer.decision().reason_code(), "authority_unavailable");
  EXPECT_TRUE(answer.fail_closed());
  EXPECT_EQ(store_.calls(Method::kLoadAuthority), 1) << "nothing to rebuild";
}

TEST_F(AuthorizerCoreTest, ForgedOrAlteredLeaseIdsAreRefused) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  std::string altered = lease.lease_id();
  altered[5] = altered[5] == 'A' ? 'B' : 'A';
  EXPECT_THAT(authorizer_->Authorize(AuthorizeRequest(altered, ReadNotes())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease_id")));

  common::SimulatedClock clock(T0());
  AuthorizerCore elsewhere(store_, audit_, clock_, "another-deployment-secret-32-byte", {});
  auto foreign = elsewhere.OpenTurnAuthority(OpenRequest("turn-9"));
  ASSERT_THAT(foreign, IsOk());
  EXPECT_THAT(authorizer_->Authorize(AuthorizeRequest(foreign->lease_id(), ReadNotes())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("integrity")));
  EXPECT_THAT(authorizer_->Authorize(AuthorizeRequest("l1.e30.AAAA", ReadNotes())),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease_id")));
}

// --- Decisions and their records ---

TEST_F(AuthorizerCoreTest, AnAllowIsRecordedWithEveryKernelFactBeforeItIsAnswered) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::AuthorizeRequest request = AuthorizeRequest(lease.lease_id(), ReadNotes());
  *request.mutable_operation_instant() = Ts(T0() + absl::Seconds(3));
  auto answer = authorizer_->Authorize(request);
  ASSERT_THAT(answer, IsOk());
  EXPECT_TRUE(answer->decision().allowed());
  EXPECT_EQ(answer->decision().matched_grant_id(), "g-read");
  EXPECT_FALSE(answer->consumed());
  EXPECT_FALSE(answer->fail_closed());

  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(1));
  const pb::AuditEvent& event = checked[0];
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_ALLOWED);
  EXPECT_EQ(event.resource().namespace_(), "files");
  EXPECT_THAT(event.resource().path(), ElementsAre("projects", "notes.md"));
  EXPECT_EQ(event.action(), "read");
  EXPECT_EQ(event.authority_hash(), lease.authority_hash());
  EXPECT_EQ(event.grant_id(), "g-read");
  EXPECT_EQ(event.operation_id(), "call-1");
  EXPECT_EQ(event.tool(), "files.read");
  EXPECT_TRUE(event.reason().empty());
  EXPECT_FALSE(event.consumed());
  EXPECT_FALSE(event.has_fail_closed());
  EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(event.at(), Ts(T0() + absl::Seconds(3))));
  EXPECT_TRUE(audit_.recorded().back().pre_effect);
}

TEST_F(AuthorizerCoreTest, RequiredAuthorityOnlyOnAnInvocationNoMatchingGrant) {
  store_.IssueGrant(
      GrantBuilder("g-once").MaxUses(1).WithCapability(Cap("files", {"projects"}, {"read"})));
  store_.SetUsage("world-1", "g-once", 1);
  const v1::OpenTurnAuthorityResponse lease = Open();

  const v1::AuthorizeResponse missing =
      Authorize(lease.lease_id(), Req("files", {"reports", "q3.md"}, "write"));
  EXPECT_EQ(missing.decision().reason_code(), "no_matching_grant");
  ASSERT_TRUE(missing.decision().has_required_authority());
  EXPECT_THAT(missing.decision().required_authority().id(), HasSubstr("capreq-"));
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(1));
  EXPECT_EQ(checked[0].reason(), "no_matching_grant");
  EXPECT_EQ(checked[0].metadata().fields().at("grantsResolved").number_value(), 1);
  const auto& rejected = checked[0].metadata().fields().at("rejectedGrants").list_value();
  ASSERT_EQ(rejected.values_size(), 1);
  EXPECT_EQ(rejected.values(0).struct_value().fields().at("grantId").string_value(), "g-once");
  EXPECT_EQ(rejected.values(0).struct_value().fields().at("reason").string_value(), "capability");

  const v1::AuthorizeResponse exhausted = Authorize(lease.lease_id(), ReadNotes(), true);
  EXPECT_EQ(exhausted.decision().reason_code(), "grant_exhausted");
  EXPECT_FALSE(exhausted.decision().has_required_authority());

  store_.SetDown(true);
  const v1::AuthorizeResponse infra = Authorize(lease.lease_id(), ReadNotes(), true);
  EXPECT_EQ(infra.decision().reason_code(), "usage_store_unavailable");
  EXPECT_FALSE(infra.decision().has_required_authority());
  store_.SetDown(false);

  // Discovery describes nothing: its entries carry a code only.
  v1::DiscoverRequest discover;
  discover.set_lease_id(lease.lease_id());
  auto* tool = discover.add_tools();
  tool->set_name("reports.write");
  *tool->mutable_requirement() = Req("files", {"reports"}, "write");
  auto discovered = authorizer_->Discover(discover);
  ASSERT_THAT(discovered, IsOk());
  EXPECT_EQ(discovered->entries(0).reason_code(), "no_matching_grant");
}

TEST_F(AuthorizerCoreTest, AConsumingAllowReservesThenSpendsOneUse) {
  store_.IssueGrant(
      GrantBuilder("g-twice").MaxUses(2).WithCapability(Cap("files", {"projects"}, {"read"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  const v1::AuthorizeResponse answer = Authorize(lease.lease_id(), ReadNotes(), true);
  EXPECT_TRUE(answer.decision().allowed());
  EXPECT_TRUE(answer.consumed());
  EXPECT_EQ(store_.Usage("world-1", "g-twice"), 1);
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(1));
  EXPECT_EQ(checked[0].outcome(), pb::AUDIT_OUTCOME_ALLOWED);
  EXPECT_FALSE(checked[0].consumed()) << "ADR 0029: the record precedes the use";
  EXPECT_EQ(Str(checked[0], "usageState"), "reserved");

  // Non-consuming checks read the counter and spend nothing.
  EXPECT_TRUE(Authorize(lease.lease_id(), ReadNotes(), false).decision().allowed());
  EXPECT_EQ(store_.Usage("world-1", "g-twice"), 1);
  EXPECT_TRUE(Authorize(lease.lease_id(), ReadNotes(), true).consumed());
  const v1::AuthorizeResponse spent = Authorize(lease.lease_id(), ReadNotes(), true);
  EXPECT_EQ(spent.decision().reason_code(), "grant_exhausted");
  EXPECT_EQ(spent.decision().matched_grant_id(), "g-twice");
  EXPECT_FALSE(spent.consumed());
  EXPECT_EQ(store_.Usage("world-1", "g-twice"), 2);
}

TEST_F(AuthorizerCoreTest, AnAuditOutageIsAnAuditUnavailableDenialAndConsumesNothing) {
  store_.IssueGrant(
      GrantBuilder("g-once").MaxUses(1).WithCapability(Cap("files", {"projects"}, {"read"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  audit_.FailPreEffect(true);
  const v1::AuthorizeResponse answer = Authorize(lease.lease_id(), ReadNotes(), true);
  EXPECT_FALSE(answer.decision().allowed());
  EXPECT_EQ(answer.decision().reason_code(), "audit_unavailable");
  EXPECT_TRUE(answer.fail_closed());
  EXPECT_FALSE(answer.consumed());
  EXPECT_TRUE(answer.decision().matched_grant_id().empty());
  EXPECT_EQ(store_.Usage("world-1", "g-once"), 0);
  EXPECT_EQ(store_.calls(Method::kTryConsume), 0);

  // The use is still there once audit is back.
  audit_.FailPreEffect(false);
  EXPECT_TRUE(Authorize(lease.lease_id(), ReadNotes(), true).consumed());
}

TEST_F(AuthorizerCoreTest, AnAuditOutageDeniesUnboundedAllowsToo) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  audit_.FailPreEffect(true);
  const v1::AuthorizeResponse answer = Authorize(lease.lease_id(), ReadNotes());
  EXPECT_EQ(answer.decision().reason_code(), "audit_unavailable");
  EXPECT_TRUE(answer.fail_closed());
}

TEST_F(AuthorizerCoreTest, AStoreOutageMidTurnKeepsUnboundedGrantsAndFailsBoundedOnes) {
  IssueReadGrant("g-read");
  store_.IssueGrant(GrantBuilder("g-write-once")
                        .MaxUses(1)
                        .WithCapability(Cap("files", {"projects"}, {"write"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  store_.SetDown(true);
  EXPECT_TRUE(Authorize(lease.lease_id(), ReadNotes(), true).decision().allowed());
  const v1::AuthorizeResponse write =
      Authorize(lease.lease_id(), Req("files", {"projects", "a.md"}, "write"), true);
  EXPECT_FALSE(write.decision().allowed());
  EXPECT_EQ(write.decision().reason_code(), "usage_store_unavailable");
  EXPECT_TRUE(write.fail_closed());
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(2));
  EXPECT_FALSE(checked[0].has_fail_closed());
  EXPECT_TRUE(checked[1].fail_closed());
  EXPECT_EQ(checked[1].reason(), "usage_store_unavailable");

  v1::ReachRequest reach;
  reach.set_lease_id(lease.lease_id());
  auto reached = authorizer_->Reach(reach);
  ASSERT_THAT(reached, IsOk());
  EXPECT_EQ(reached->reach().status(), pb::REACH_STATUS_UNAVAILABLE);
  EXPECT_EQ(reached->reach().reason_code(), "usage_store_unavailable");
}

TEST_F(AuthorizerCoreTest, ACounterFailureAfterTheReservationReleasesIt) {
  store_.IssueGrant(
      GrantBuilder("g-once").MaxUses(1).WithCapability(Cap("files", {"projects"}, {"read"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  store_.FailMethod(Method::kTryConsume, absl::UnavailableError("gone"));
  const v1::AuthorizeResponse answer = Authorize(lease.lease_id(), ReadNotes(), true);
  EXPECT_EQ(answer.decision().reason_code(), "usage_store_unavailable");
  EXPECT_TRUE(answer.fail_closed());
  EXPECT_FALSE(answer.consumed());
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(2));
  EXPECT_EQ(Str(checked[0], "usageState"), "reserved");
  EXPECT_EQ(checked[1].reason(), "usage_store_unavailable");
  EXPECT_EQ(Str(checked[1], "releasedGrantId"), "g-once");
}

TEST(AuthorizerCoreRaceTest, ALostRaceForTheLastUseDecidesAgain) {
  common::SimulatedClock clock(T0());
  RacingGrantStore store;
  audit::client::FakeAuditWriter audit;
  store.IssueGrant(
      GrantBuilder("g-once").MaxUses(1).WithCapability(Cap("files", {"projects"}, {"read"})));
  store.IssueGrant(
      GrantBuilder("g-unbounded").WithCapability(Cap("files", {"projects"}, {"read"})));
  AuthorizerCore authorizer(store, audit, clock, kSecret, {});
  v1::OpenTurnAuthorityRequest open;
  *open.mutable_context() = MakeContext();
  open.set_turn_id("turn-1");
  auto lease = authorizer.OpenTurnAuthority(open);
  ASSERT_THAT(lease, IsOk());
  v1::AuthorizeRequest request;
  request.set_lease_id(lease->lease_id());
  *request.mutable_requirement() = Req("files", {"projects", "x"}, "read");
  request.set_consume(true);
  auto answer = authorizer.Authorize(request);
  ASSERT_THAT(answer, IsOk());
  EXPECT_TRUE(answer->decision().allowed());
  EXPECT_EQ(answer->decision().matched_grant_id(), "g-unbounded");
  EXPECT_FALSE(answer->consumed());
  std::vector<pb::AuditEvent> checked;
  for (const pb::AuditEvent& event : audit.events()) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED) checked.push_back(event);
  }
  ASSERT_THAT(checked, SizeIs(2));
  EXPECT_EQ(checked[0].grant_id(), "g-once");
  EXPECT_EQ(Str(checked[0], "usageState"), "reserved");
  EXPECT_EQ(checked[1].grant_id(), "g-unbounded");
  EXPECT_EQ(Str(checked[1], "releasedGrantId"), "g-once");
}

TEST_F(AuthorizerCoreTest, DelegatedGrantsResolveTheirAncestorsAtTheLeaseRevision) {
  store_.IssueGrant(GrantBuilder("g-parent")
                        .Subject(Human("alice"))
                        .Issuer(Human("alice"))
                        .DelegationDepth(1)
                        .WithCapability(Cap("files", {"projects"}, {"read"})));
  store_.IssueGrant(GrantBuilder("g-child")
                        .Parent("g-parent")
                        .DelegationDepth(0)
                        .WithCapability(Cap("files", {"projects"}, {"read"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  const v1::AuthorizeResponse first = Authorize(lease.lease_id(), ReadNotes());
  EXPECT_TRUE(first.decision().allowed()) << first.decision().DebugString();
  Authorize(lease.lease_id(), ReadNotes());
  EXPECT_EQ(store_.calls(Method::kResolveGrant), 1) << "a revision never changes: cached";

  // A replica rebuilding the lease while the resolver fails: unverified, fail closed.
  store_.FailMethod(Method::kResolveGrant, absl::UnavailableError("gone"));
  AuthorizerCore third(store_, audit_, clock_, kSecret, {});
  const v1::AuthorizeResponse unverified = Authorize(lease.lease_id(), ReadNotes(), false, &third);
  EXPECT_EQ(unverified.decision().reason_code(), "delegation_chain_unverified");
  EXPECT_TRUE(unverified.fail_closed());
}

TEST_F(AuthorizerCoreTest, LiveRevocationIsConsultedWhenEnabled) {
  AuthorizerCore::Options options;
  options.live_revocation = true;
  Rebuild(options);
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  EXPECT_TRUE(Authorize(lease.lease_id(), ReadNotes()).decision().allowed());
  store_.RevokeGrant("world-1", "g-read", T0());
  EXPECT_EQ(Authorize(lease.lease_id(), ReadNotes()).decision().reason_code(), "no_matching_grant");
  store_.SetDown(true);
  const v1::AuthorizeResponse down = Authorize(lease.lease_id(), ReadNotes());
  EXPECT_EQ(down.decision().reason_code(), "authority_unavailable");
  EXPECT_TRUE(down.fail_closed());
}

TEST_F(AuthorizerCoreTest, AContextIsATurnOfOneOperation) {
  IssueReadGrant();
  v1::AuthorizeRequest request;
  *request.mutable_context() = MakeContext();
  *request.mutable_requirement() = ReadNotes();
  auto answer = authorizer_->Authorize(request);
  ASSERT_THAT(answer, IsOk());
  EXPECT_TRUE(answer->decision().allowed());
  auto resolved = Events(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(resolved, SizeIs(1));
  ASSERT_THAT(checked, SizeIs(1));
  EXPECT_EQ(resolved[0].authority_hash(), checked[0].authority_hash());
  EXPECT_FALSE(Has(resolved[0], "turnId"));
  EXPECT_EQ(authorizer_->held_leases(), 0);

  store_.SetDown(true);
  answer = authorizer_->Authorize(request);
  ASSERT_THAT(answer, IsOk());
  EXPECT_EQ(answer->decision().reason_code(), "authority_unavailable");
  EXPECT_TRUE(answer->fail_closed());
}

TEST_F(AuthorizerCoreTest, AdmitTurnConsumesTheExecutionGrant) {
  store_.IssueGrant(GrantBuilder("g-exec").MaxUses(1).WithCapability(
      Cap("sharedos.execution", {"agent", "alice-assistant"}, {"invoke"}, pb::SCOPE_EXACT)));
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::AdmitTurnRequest admit;
  admit.set_lease_id(lease.lease_id());
  *admit.mutable_agent() = Agent("alice-assistant");
  auto admitted = authorizer_->AdmitTurn(admit);
  ASSERT_THAT(admitted, IsOk());
  EXPECT_TRUE(admitted->decision().allowed());
  EXPECT_TRUE(admitted->consumed());
  auto again = authorizer_->AdmitTurn(admit);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->decision().reason_code(), "grant_exhausted");
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(2));
  EXPECT_EQ(checked[0].resource().namespace_(), "sharedos.execution");
  EXPECT_THAT(checked[0].resource().path(), ElementsAre("agent", "alice-assistant"));
  EXPECT_EQ(checked[0].action(), "invoke");
}

TEST_F(AuthorizerCoreTest, DiscoverAnswersTheWholeCatalogueInOrder) {
  IssueReadGrant();
  store_.IssueGrant(GrantBuilder("g-bounded").MaxUses(3).WithCapability(Cap("mail", {}, {"send"})));
  gs::HostPolicy policy;
  policy.set_namespace_id("world-1");
  policy.set_version("v2");
  auto* rule = policy.add_rules();
  rule->set_id("no-secrets");
  rule->set_resource_namespace("files");
  rule->add_path("projects");
  rule->add_path("secrets");
  rule->set_scope(pb::SCOPE_DESCENDANTS);
  store_.PutHostPolicy(policy);
  const v1::OpenTurnAuthorityResponse lease = Open();

  v1::DiscoverRequest request;
  request.set_lease_id(lease.lease_id());
  const std::vector<std::pair<std::string, pb::CapabilityRequirement>> tools = {
      {"files.read", Req("files", {"projects"}, "read")},
      {"files.secrets", Req("files", {"projects", "secrets"}, "read")},
      {"files.write", Req("files", {"projects"}, "write")},
      {"mail.send", Req("mail", {}, "send")},
      {"mail.send2", Req("mail", {}, "send")},
  };
  for (const auto& [name, requirement] : tools) {
    auto* tool = request.add_tools();
    tool->set_name(name);
    *tool->mutable_requirement() = requirement;
  }
  auto discovered = authorizer_->Discover(request);
  ASSERT_THAT(discovered, IsOk());
  ASSERT_EQ(discovered->entries_size(), 5);
  EXPECT_TRUE(discovered->entries(0).discoverable());
  EXPECT_EQ(discovered->entries(0).reason_code(), "allowed");
  EXPECT_EQ(discovered->entries(1).reason_code(), "host_policy_denied");
  EXPECT_EQ(discovered->entries(2).reason_code(), "no_matching_grant");
  EXPECT_TRUE(discovered->entries(3).discoverable());
  EXPECT_TRUE(discovered->entries(4).discoverable());
  EXPECT_EQ(discovered->withheld_count(), 2);
  EXPECT_EQ(store_.calls(Method::kGetUsage), 1) << "one read per bounded grant per batch";
  EXPECT_EQ(store_.Usage("world-1", "g-bounded"), 0);
  EXPECT_THAT(Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED), SizeIs(0));

  store_.SetHostPolicyUnavailable("world-1", true);
  const v1::OpenTurnAuthorityResponse unavailable_policy = Open("turn-2");
  EXPECT_EQ(unavailable_policy.host_policy_status(), v1::HOST_POLICY_STATUS_UNAVAILABLE);
  request.set_lease_id(unavailable_policy.lease_id());
  discovered = authorizer_->Discover(request);
  ASSERT_THAT(discovered, IsOk());
  EXPECT_EQ(discovered->entries(0).reason_code(), "host_policy_unavailable");
  EXPECT_TRUE(discovered->entries(0).fail_closed());
}

TEST_F(AuthorizerCoreTest, DiscoverUnderAnUnavailableLeaseWithholdsEverythingFailClosed) {
  store_.SetDown(true);
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::DiscoverRequest request;
  request.set_lease_id(lease.lease_id());
  auto* tool = request.add_tools();
  tool->set_name("files.read");
  *tool->mutable_requirement() = Req("files", {"projects"}, "read");
  auto discovered = authorizer_->Discover(request);
  ASSERT_THAT(discovered, IsOk());
  EXPECT_FALSE(discovered->entries(0).discoverable());
  EXPECT_EQ(discovered->entries(0).reason_code(), "authority_unavailable");
  EXPECT_TRUE(discovered->entries(0).fail_closed());
  EXPECT_EQ(discovered->withheld_count(), 1);
}

// --- Authorize with the declared ceiling: discovery and decision in one call ---

TEST_F(AuthorizerCoreTest, ADiscoverableCeilingIsCheckedThenTheDecisionIsTakenAndRecorded) {
  store_.IssueGrant(
      GrantBuilder("g-twice").MaxUses(2).WithCapability(Cap("files", {"projects"}, {"read"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::AuthorizeRequest request = AuthorizeRequest(lease.lease_id(), ReadNotes(), true);
  *request.mutable_declared_ceiling() = Req("files", {"projects"}, "read");
  auto answer = authorizer_->Authorize(request);
  ASSERT_THAT(answer, IsOk());
  ASSERT_TRUE(answer->has_discovery());
  EXPECT_EQ(answer->discovery().name(), "files.read");
  EXPECT_TRUE(answer->discovery().discoverable());
  EXPECT_EQ(answer->discovery().reason_code(), "allowed");
  EXPECT_FALSE(answer->discovery().fail_closed());
  EXPECT_TRUE(answer->decision().allowed());
  EXPECT_TRUE(answer->consumed());
  EXPECT_EQ(store_.Usage("world-1", "g-twice"), 1);
  // The same records as a Discover followed by an Authorize: the decision's, nothing for
  // discovery.
  auto checked = Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  ASSERT_THAT(checked, SizeIs(1));
  EXPECT_EQ(checked[0].outcome(), pb::AUDIT_OUTCOME_ALLOWED);
  EXPECT_EQ(checked[0].grant_id(), "g-twice");

  // Without the field there is no discovery entry.
  EXPECT_FALSE(Authorize(lease.lease_id(), ReadNotes()).has_discovery());
}

TEST_F(AuthorizerCoreTest, AnUndiscoverableCeilingWithholdsTheToolAndDecidesNothing) {
  store_.IssueGrant(
      GrantBuilder("g-once").MaxUses(1).WithCapability(Cap("files", {"projects"}, {"read"})));
  const v1::OpenTurnAuthorityResponse lease = Open();
  // The requirement itself would be allowed; the declared ceiling (write) is not discoverable.
  v1::AuthorizeRequest request = AuthorizeRequest(lease.lease_id(), ReadNotes(), true);
  *request.mutable_declared_ceiling() = Req("files", {"projects"}, "write");
  auto answer = authorizer_->Authorize(request);
  ASSERT_THAT(answer, IsOk());
  ASSERT_TRUE(answer->has_discovery());
  EXPECT_FALSE(answer->discovery().discoverable());
  EXPECT_EQ(answer->discovery().reason_code(), "no_matching_grant");
  EXPECT_FALSE(answer->discovery().fail_closed());
  EXPECT_FALSE(answer->has_decision());
  EXPECT_FALSE(answer->consumed());
  EXPECT_EQ(store_.Usage("world-1", "g-once"), 0);
  EXPECT_EQ(store_.calls(Method::kTryConsume), 0);
  EXPECT_THAT(Events(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED), SizeIs(0));
}

TEST_F(AuthorizerCoreTest, UnderAnUnavailableLeaseTheCeilingIsWithheldFailClosed) {
  store_.SetDown(true);
  const v1::OpenTurnAuthorityResponse lease = Open();
  const size_t recorded = audit_.events().size();
  v1::AuthorizeRequest request = AuthorizeRequest(lease.lease_id(), ReadNotes(), true);
  *request.mutable_declared_ceiling() = Req("files", {"projects"}, "read");
  auto answer = authorizer_->Authorize(request);
  ASSERT_THAT(answer, IsOk());
  EXPECT_FALSE(answer->discovery().discoverable());
  EXPECT_EQ(answer->discovery().reason_code(), "authority_unavailable");
  EXPECT_TRUE(answer->discovery().fail_closed());
  EXPECT_FALSE(answer->has_decision());
  EXPECT_EQ(audit_.events().size(), recorded);
}

TEST_F(AuthorizerCoreTest, AMalformedDeclaredCeilingIsNamed) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::AuthorizeRequest request = AuthorizeRequest(lease.lease_id(), ReadNotes());
  request.mutable_declared_ceiling()->set_action("read");  // no resource
  EXPECT_THAT(authorizer_->Authorize(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("declared_ceiling")));
}

TEST_F(AuthorizerCoreTest, ReachListsWhatTheLeaseReaches) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::ReachRequest request;
  request.set_lease_id(lease.lease_id());
  auto reached = authorizer_->Reach(request);
  ASSERT_THAT(reached, IsOk());
  EXPECT_EQ(reached->reach().status(), pb::REACH_STATUS_COMPUTED);
  ASSERT_EQ(reached->reach().reach_size(), 1);
  EXPECT_EQ(reached->reach().reach(0).namespace_(), "files");
}

// --- Escalation ---

v1::AuthorityAsk AskOf(const pb::CapabilityRequest& request) {
  v1::AuthorityAsk ask;
  *ask.mutable_capabilities() = request.capabilities();
  ask.set_purpose(request.purpose());
  if (request.has_constraints()) *ask.mutable_constraints() = request.constraints();
  if (request.has_metadata()) *ask.mutable_metadata() = request.metadata();
  return ask;
}

TEST_F(AuthorizerCoreTest, TheDenialToEscalationHopKeepsTheRequestId) {
  IssueReadGrant();
  const v1::OpenTurnAuthorityResponse lease = Open();
  const v1::AuthorizeResponse denial =
      Authorize(lease.lease_id(), Req("files", {"reports", "q3.md"}, "write"));
  ASSERT_TRUE(denial.decision().has_required_authority());
  const pb::CapabilityRequest& required = denial.decision().required_authority();

  clock_.AdvanceTime(absl::Minutes(2));
  v1::RecordEscalationRequest request;
  request.set_lease_id(lease.lease_id());
  request.set_execution_id("exec-1");
  request.set_reason("  needs to write the Q3 report  ");
  *request.mutable_requested_authority_ask() = AskOf(required);
  auto escalated = authorizer_->RecordEscalation(request);
  ASSERT_THAT(escalated, IsOk());
  const pb::Escalation& escalation = escalated->escalation();
  EXPECT_EQ(escalation.requested_authority().id(), required.id());
  EXPECT_EQ(escalation.reason(), "needs to write the Q3 report");
  EXPECT_EQ(escalation.reviewer().human_user_id(), "alice");
  EXPECT_EQ(escalation.status(), pb::ESCALATION_STATUS_PENDING);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(escalation.requested_at(),
                                                                 Ts(clock_.Now())));
  EXPECT_THAT(escalated->escalation_id(), HasSubstr("esc-"));

  auto stored = store_.escalations();
  ASSERT_THAT(stored, SizeIs(1));
  EXPECT_EQ(stored[0].escalation_id(), escalated->escalation_id());
  EXPECT_EQ(stored[0].execution_id(), "exec-1");
  EXPECT_EQ(stored[0].namespace_id(), "world-1");
  // The turn's context authority travels with it: an approval issues the grant under it.
  EXPECT_EQ(stored[0].authority().human_user_id(), "alice");

  const auto recorded = audit_.recorded();
  const auto& last = recorded.back();
  EXPECT_FALSE(last.pre_effect);
  EXPECT_EQ(last.event.type(), pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED);
  EXPECT_EQ(last.event.outcome(), pb::AUDIT_OUTCOME_ESCALATED);
  EXPECT_EQ(last.event.reason(), "escalation_requested");
  EXPECT_EQ(last.event.requested_authority().id(), required.id());
  EXPECT_EQ(Str(last.event, "detail"), "needs to write the Q3 report");
  EXPECT_EQ(Str(last.event, "resolution"), "pending");
  EXPECT_TRUE(last.event.metadata().fields().at("reviewerAssumed").bool_value());
  EXPECT_EQ(last.event.metadata()
                .fields()
                .at("reviewer")
                .struct_value()
                .fields()
                .at("userId")
                .string_value(),
            "alice");

  // A retry of the same escalation (same instant) is the same id, stored once.
  *request.mutable_operation_instant() = escalation.requested_at();
  auto retried = authorizer_->RecordEscalation(request);
  ASSERT_THAT(retried, IsOk());
  EXPECT_EQ(retried->escalation_id(), escalated->escalation_id());
  EXPECT_THAT(store_.escalations(), SizeIs(1));
}

TEST_F(AuthorizerCoreTest, ARequestedEventIdIsTheEscalationRecordsIdOnEveryRetry) {
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::RecordEscalationRequest request;
  request.set_lease_id(lease.lease_id());
  request.set_execution_id("exec-1");
  request.set_reason("asked before the envelope stopped");
  *request.mutable_operation_instant() = Ts(clock_.Now());
  request.set_requested_event_id("9b6c0c52-0d2f-4c55-9a39-3d1f0f0b6f11");
  auto first = authorizer_->RecordEscalation(request);
  ASSERT_THAT(first, IsOk());
  auto second = authorizer_->RecordEscalation(request);
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->escalation_id(), first->escalation_id());
  EXPECT_THAT(store_.escalations(), SizeIs(1));
  // Both writes carry the caller's id (audit_svc keeps one record under it).
  std::vector<pb::AuditEvent> requested;
  for (const auto& recorded : audit_.recorded()) {
    if (recorded.event.type() == pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED) {
      requested.push_back(recorded.event);
    }
  }
  ASSERT_THAT(requested, SizeIs(2));
  EXPECT_EQ(requested[0].id(), "9b6c0c52-0d2f-4c55-9a39-3d1f0f0b6f11");
  EXPECT_EQ(requested[1].id(), requested[0].id());

  request.set_requested_event_id("   ");
  auto refused = authorizer_->RecordEscalation(request);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("requested_event_id"));
}

TEST_F(AuthorizerCoreTest, EscalationIdentityIsMintedFromTheLeaseNotTheCaller) {
  const v1::OpenTurnAuthorityResponse lease = Open();
  // A request minted for somebody else: only its ask travels (AuthorityAsk has no identity).
  pb::AccessContext other = MakeContext();
  other.set_namespace_id("world-2");
  *other.mutable_actor() = Agent("mallory");
  *other.mutable_owner() = Human("bob");
  pb::CapabilityRequest foreign;
  *foreign.add_capabilities() = Cap("files", {"payroll"}, {"read"}, pb::SCOPE_EXACT);
  foreign.set_purpose("assist");
  auto minted_elsewhere = capability::MintCapabilityRequest(other, foreign);
  ASSERT_THAT(minted_elsewhere, IsOk());

  v1::RecordEscalationRequest request;
  request.set_lease_id(lease.lease_id());
  request.set_execution_id("exec-1");
  request.set_reason("wants payroll");
  *request.mutable_requested_authority_ask() = AskOf(*minted_elsewhere);
  auto escalated = authorizer_->RecordEscalation(request);
  ASSERT_THAT(escalated, IsOk());
  const pb::CapabilityRequest& minted = escalated->escalation().requested_authority();
  EXPECT_EQ(minted.namespace_id(), "world-1");
  EXPECT_EQ(minted.requester().agent_id(), "alice-assistant");
  EXPECT_EQ(minted.owner().human_user_id(), "alice");
  EXPECT_NE(minted.id(), minted_elsewhere->id());
  pb::AccessContext lease_context = MakeContext();
  *lease_context.mutable_now() = Ts(clock_.Now());
  auto expected = capability::MintCapabilityRequest(lease_context, foreign);
  ASSERT_THAT(expected, IsOk());
  EXPECT_EQ(minted.id(), expected->id());
}

TEST_F(AuthorizerCoreTest, EscalationNeedsTheStoreButNotAuditOrAuthority) {
  store_.SetDown(true);
  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::RecordEscalationRequest request;
  request.set_lease_id(lease.lease_id());
  request.set_execution_id("exec-1");
  request.set_reason("stuck");
  EXPECT_THAT(authorizer_->RecordEscalation(request),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("escalation not stored")));
  store_.SetDown(false);
  audit_.FailPostEffect(true);
  auto escalated = authorizer_->RecordEscalation(request);
  ASSERT_THAT(escalated, IsOk()) << "under an unavailable lease, with audit down";
  EXPECT_FALSE(escalated->escalation().has_requested_authority());
}

// --- Strict input ---

TEST_F(AuthorizerCoreTest, MalformedRequestsNameTheField) {
  v1::OpenTurnAuthorityRequest open = OpenRequest();
  open.mutable_context()->set_purpose("");
  EXPECT_THAT(authorizer_->OpenTurnAuthority(open),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("context.purpose")));
  open = OpenRequest("  ");
  EXPECT_THAT(authorizer_->OpenTurnAuthority(open),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("turn_id")));
  open = OpenRequest();
  open.mutable_timeout()->set_seconds(3600);
  EXPECT_THAT(authorizer_->OpenTurnAuthority(open),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("timeout")));
  open.mutable_timeout()->set_seconds(-1);
  EXPECT_THAT(authorizer_->OpenTurnAuthority(open),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("timeout")));
  open = OpenRequest();
  open.mutable_context()
      ->mutable_actor()
      ->GetReflection()
      ->MutableUnknownFields(open.mutable_context()->mutable_actor())
      ->AddVarint(99, 1);
  EXPECT_THAT(authorizer_->OpenTurnAuthority(open),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown field 99")));

  const v1::OpenTurnAuthorityResponse lease = Open();
  v1::AuthorizeRequest none;
  *none.mutable_requirement() = ReadNotes();
  EXPECT_THAT(authorizer_->Authorize(none),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("subject")));
  v1::AuthorizeRequest bad = AuthorizeRequest(lease.lease_id(), Req("files", {"a"}, " "));
  EXPECT_THAT(authorizer_->Authorize(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("requirement.action")));
  bad = AuthorizeRequest(lease.lease_id(), Req("files", {".."}, "read"));
  EXPECT_THAT(authorizer_->Authorize(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("requirement.resource")));
  bad = AuthorizeRequest(lease.lease_id(), ReadNotes());
  bad.mutable_operation_instant()->set_nanos(-1);
  EXPECT_THAT(authorizer_->Authorize(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("operation_instant")));

  v1::DiscoverRequest discover;
  discover.set_lease_id(lease.lease_id());
  EXPECT_THAT(authorizer_->Discover(discover),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tools")));
  for (int i = 0; i < 2; ++i) {
    auto* tool = discover.add_tools();
    tool->set_name("files.read");
    *tool->mutable_requirement() = ReadNotes();
  }
  EXPECT_THAT(authorizer_->Discover(discover),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tools[1].name: duplicate")));

  v1::RecordEscalationRequest escalation;
  escalation.set_lease_id(lease.lease_id());
  escalation.set_execution_id("exec-1");
  escalation.set_reason(std::string(513, 'x'));
  EXPECT_THAT(authorizer_->RecordEscalation(escalation),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reason")));
  escalation.set_reason("ok");
  escalation.mutable_requested_authority_ask()->set_purpose("assist");
  EXPECT_THAT(authorizer_->RecordEscalation(escalation),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("requested_authority_ask")));

  v1::AdmitTurnRequest admit;
  admit.set_lease_id(lease.lease_id());
  EXPECT_THAT(authorizer_->AdmitTurn(admit),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("agent")));
}

}  // namespace
}  // namespace sharedos::authorizer::core
