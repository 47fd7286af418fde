#include "grantstore_svc/core/grant_store_core.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "audit_svc/core/control_plane_event.h"
#include "common/metrics/metrics.h"
#include "common/proto/deterministic.h"
#include "common/status/proto_matchers.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "common/validation/protocol.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grantstore_svc/core/request_validation.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::EqualsProto;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

template <typename T>
T Parse(const std::string& text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    ADD_FAILURE() << "bad text proto: " << text;
  }
  return message;
}

// 2023-11-14T22:13:20Z.
constexpr int64_t kT0 = 1700000000;

// A root grant of agent:assistant from human:alice in namespace "world".
pb::CapabilityGrant BaseGrant(const std::string& id) {
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
      actions: "write"
      scope: SCOPE_DESCENDANTS
    }
    constraints {}
    issued_at { seconds: 1700000000 }
  )pb");
  grant.set_id(id);
  return grant;
}

// The base grant with `extra` merged over it (text format merge: messages merge, scalars and
// oneofs are replaced).
pb::CapabilityGrant Grant(const std::string& id, const std::string& extra = "") {
  pb::CapabilityGrant grant = BaseGrant(id);
  if (!google::protobuf::TextFormat::MergeFromString(extra, &grant)) {
    ADD_FAILURE() << "bad text proto: " << extra;
  }
  return grant;
}

v1::IssueGrantRequest Issue(const pb::CapabilityGrant& grant, const std::string& key = "") {
  v1::IssueGrantRequest request;
  *request.mutable_grant() = grant;
  request.set_idempotency_key(key);
  return request;
}

// A pending escalation of agent:assistant for owner human:alice asking to write files/docs.
v1::RecordEscalationRequest EscalationRequest(const std::string& id,
                                              const std::string& constraints = "") {
  auto request = Parse<v1::RecordEscalationRequest>(R"pb(
    namespace_id: "world"
    execution_id: "exec-1"
    escalation {
      reason: "needs to write the report"
      reviewer { human_user_id: "alice" }
      requested_at { seconds: 1700000100 }
      status: ESCALATION_STATUS_PENDING
      requested_authority {
        id: "capreq-0123"
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
        metadata {
          fields {
            key: "hint"
            value { string_value: "secret-ish" }
          }
        }
      }
    }
  )pb");
  request.set_escalation_id(id);
  if (!constraints.empty()) {
    *request.mutable_escalation()->mutable_requested_authority()->mutable_constraints() =
        Parse<pb::CapabilityConstraints>(constraints);
  }
  return request;
}

class GrantStoreCoreTest : public ::testing::Test {
 protected:
  GrantStoreCoreTest() : clock_(absl::FromUnixSeconds(kT0 + 500)) {}

  void SetUp() override {
    storage::SqliteGrantStore::Options options;
    options.path = ":memory:";
    auto store = storage::SqliteGrantStore::Open(options);
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    GrantStoreCore::Options core_options;
    core_options.new_id = [this] { return absl::StrCat("id-", ++ids_); };
    core_ = std::make_unique<GrantStoreCore>(*store_, audit_, clock_, core_options);
  }

  int64_t Revision() {
    auto revision = store_->CurrentRevision();
    EXPECT_THAT(revision, IsOk());
    return revision.ok() ? *revision : -1;
  }

  std::vector<audit::v1::ControlPlaneEventType> EventTypes() {
    std::vector<audit::v1::ControlPlaneEventType> types;
    for (const audit::v1::ControlPlaneEvent& event : audit_.control_plane_events())
      types.push_back(event.type());
    return types;
  }

  // The last recorded event without the writer-stamped id.
  audit::v1::ControlPlaneEvent LastEvent() {
    std::vector<audit::v1::ControlPlaneEvent> events = audit_.control_plane_events();
    if (events.empty()) return audit::v1::ControlPlaneEvent();
    audit::v1::ControlPlaneEvent event = events.back();
    event.clear_id();
    return event;
  }

  void IssueOk(const pb::CapabilityGrant& grant) {
    ASSERT_THAT(core_->IssueGrant(admin_, Issue(grant)), IsOk());
  }

  common::SimulatedClock clock_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<storage::SqliteGrantStore> store_;
  std::unique_ptr<GrantStoreCore> core_;
  int ids_ = 0;
  static Caller Principal(const std::string& name, const std::string& address,
                          common::server::Role role, std::vector<std::string> namespaces) {
    Caller caller;
    caller.name = name;
    caller.address = address;
    caller.role = role;
    caller.scope.namespaces = std::move(namespaces);
    return caller;
  }
  const Caller admin_ = InProcessOperator("ops");
  const Caller service_ =
      Principal("authorizer", "service:authorizer", common::server::Role::kService, {});
  // The reviewer the test escalations are addressed to.
  const Caller alice_ =
      Principal("alice-cred", "human:alice", common::server::Role::kReviewer, {"world"});
};

// --- IssueGrant ---

TEST_F(GrantStoreCoreTest, IssueGrantCommitsAtTheNextRevisionAndAuditsIt) {
  auto response = core_->IssueGrant(admin_, Issue(Grant("g1")));
  ASSERT_THAT(response, IsOk());
  v1::IssueGrantResponse expected;
  *expected.mutable_grant() = BaseGrant("g1");
  expected.set_revision(1);
  EXPECT_THAT(*response, EqualsProto(expected));
  EXPECT_EQ(Revision(), 1);
  EXPECT_THAT(LastEvent(), EqualsProto(Parse<audit::v1::ControlPlaneEvent>(R"pb(
                type: CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED
                outcome: AUDIT_OUTCOME_SUCCEEDED
                at { seconds: 1700000500 }
                trace_id: "grantstore-r1"
                namespace_id: "world"
                actor { service_id: "ops" }
                authority { human_user_id: "alice" }
                owner { human_user_id: "alice" }
                purpose: "sharedos.control-plane"
                grant_id: "g1"
                metadata {
                  fields {
                    key: "revision"
                    value { number_value: 1 }
                  }
                  fields {
                    key: "subject"
                    value { string_value: "agent:assistant" }
                  }
                }
              )pb")));
  // A control-plane record (RecordControlPlane: pre-effect), never a protocol "1" event.
  EXPECT_THAT(audit_.control_plane_events(), SizeIs(1));
  EXPECT_THAT(audit_.recorded(), IsEmpty());
}

TEST_F(GrantStoreCoreTest, IssueGrantTrimsIdentifiersAndNamesTheOwnerOfTheResource) {
  pb::CapabilityGrant grant = Grant("  g1  ");
  *grant.mutable_capabilities(0)->mutable_resource()->mutable_owner() =
      Parse<pb::Address>(R"pb(group_conversation_id: "team")pb");
  auto response = core_->IssueGrant(admin_, Issue(grant));
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->grant().id(), "g1");
  EXPECT_THAT(LastEvent().owner(),
              EqualsProto(Parse<pb::Address>(R"pb(group_conversation_id: "team")pb")));
}

TEST_F(GrantStoreCoreTest, AuditEventsNeverCarryGrantMetadata) {
  pb::CapabilityGrant grant = Grant("g1", R"pb(metadata {
                                                 fields {
                                                   key: "note"
                                                   value { string_value: "x" }
                                                 }
                                               })pb");
  IssueOk(grant);
  const audit::v1::ControlPlaneEvent event = LastEvent();
  std::vector<std::string> keys;
  for (const auto& [key, value] : event.metadata().fields()) keys.push_back(key);
  EXPECT_THAT(keys, UnorderedElementsAre("revision", "subject"));
}

struct InvalidIssue {
  std::string name;
  std::function<void(v1::IssueGrantRequest&)> mutate;
  std::string message;
};

TEST_F(GrantStoreCoreTest, IssueGrantRejectsMalformedRequestsAndWritesNothing) {
  const std::vector<InvalidIssue> cases = {
      {"no grant", [](auto& r) { r.clear_grant(); }, "grant: required"},
      {"empty id", [](auto& r) { r.mutable_grant()->set_id("  "); }, "grant.id: empty"},
      {"empty namespace", [](auto& r) { r.mutable_grant()->clear_namespace_id(); },
       "grant.namespace_id: empty"},
      {"no subject", [](auto& r) { r.mutable_grant()->clear_subject(); },
       "grant.subject: required"},
      {"no capabilities", [](auto& r) { r.mutable_grant()->clear_capabilities(); },
       "grant.capabilities: empty"},
      {"unspecified scope",
       [](auto& r) {
         r.mutable_grant()->mutable_capabilities(0)->set_scope(pb::SCOPE_UNSPECIFIED);
       },
       "grant.capabilities[0].scope: unspecified"},
      {"dot-dot path",
       [](auto& r) {
         r.mutable_grant()->mutable_capabilities(0)->mutable_resource()->add_path("..");
       },
       "grant.capabilities[0].resource.path[1]"},
      {"window inverted",
       [](auto& r) {
         auto* c = r.mutable_grant()->mutable_constraints();
         c->mutable_not_before()->set_seconds(kT0 + 10);
         c->mutable_expires_at()->set_seconds(kT0);
       },
       "grant.constraints"},
      {"revoked_at", [](auto& r) { r.mutable_grant()->mutable_revoked_at()->set_seconds(kT0); },
       "grant.revoked_at: must be absent"},
      {"parent", [](auto& r) { r.mutable_grant()->set_parent_grant_id("p"); },
       "grant.parent_grant_id: must be absent"},
      {"parent equals id", [](auto& r) { r.mutable_grant()->set_parent_grant_id("g1"); },
       "grant.parent_grant_id"},
      {"unknown field deep",
       [](auto& r) {
         r.mutable_grant()
             ->mutable_capabilities(0)
             ->GetReflection()
             ->MutableUnknownFields(r.mutable_grant()->mutable_capabilities(0))
             ->AddVarint(99, 1);
       },
       "grant.capabilities[0]: unknown field 99"},
      {"unknown field top",
       [](auto& r) { r.GetReflection()->MutableUnknownFields(&r)->AddVarint(42, 1); },
       "request: unknown field 42"},
      {"blank key", [](auto& r) { r.set_idempotency_key("   "); }, "idempotency_key: empty"},
  };
  for (const InvalidIssue& c : cases) {
    v1::IssueGrantRequest request = Issue(Grant("g1"));
    c.mutate(request);
    EXPECT_THAT(core_->IssueGrant(admin_, request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.name;
  }
  EXPECT_EQ(Revision(), 0);
  EXPECT_THAT(audit_.control_plane_events(), IsEmpty());
}

TEST_F(GrantStoreCoreTest, IdempotencyKeyAnswersTheFirstResultAndRefusesAnotherGrant) {
  auto first = core_->IssueGrant(admin_, Issue(Grant("g1"), "key-1"));
  ASSERT_THAT(first, IsOk());
  IssueOk(Grant("g2"));
  auto retry = core_->IssueGrant(admin_, Issue(Grant("g1"), "key-1"));
  ASSERT_THAT(retry, IsOk());
  EXPECT_THAT(*retry, EqualsProto(*first));
  EXPECT_EQ(retry->revision(), 1);
  EXPECT_THAT(core_->IssueGrant(admin_, Issue(Grant("g3"), "key-1")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("idempotency_key")));
  pb::CapabilityGrant changed = Grant("g1");
  changed.mutable_capabilities(0)->add_actions("delete");
  EXPECT_THAT(core_->IssueGrant(admin_, Issue(changed, "key-1")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("idempotency_key")));
  EXPECT_EQ(Revision(), 2);
  EXPECT_THAT(audit_.control_plane_events(), SizeIs(2));
  // Still the first result after the grant was revoked.
  ASSERT_THAT(core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                            grant_id: "g1")pb")),
              IsOk());
  auto after_revoke = core_->IssueGrant(admin_, Issue(Grant("g1"), "key-1"));
  ASSERT_THAT(after_revoke, IsOk());
  EXPECT_THAT(*after_revoke, EqualsProto(*first));
}

TEST_F(GrantStoreCoreTest, GrantIdsAreUniqueAndNeverReused) {
  IssueOk(Grant("g1"));
  // The identical grant again is a retry: answered, not written.
  auto retry = core_->IssueGrant(admin_, Issue(Grant("g1")));
  ASSERT_THAT(retry, IsOk());
  EXPECT_EQ(retry->revision(), 1);
  EXPECT_THAT(core_->IssueGrant(admin_, Issue(Grant("g1", R"pb(metadata {})pb"))),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("grant id \"g1\" is already used in namespace \"world\"")));
  ASSERT_THAT(core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                            grant_id: "g1")pb")),
              IsOk());
  EXPECT_THAT(core_->IssueGrant(admin_, Issue(Grant("g1"))),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("never reused")));
  EXPECT_EQ(Revision(), 2);
}

TEST_F(GrantStoreCoreTest, AuditFailureRollsBackIssueAndAnswersUnavailable) {
  audit_.FailPreEffect(true);
  EXPECT_THAT(core_->IssueGrant(admin_, Issue(Grant("g1"), "key-1")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
  EXPECT_EQ(Revision(), 0);
  EXPECT_THAT(
      core_->GetGrant(Parse<v1::GetGrantRequest>(R"pb(namespace_id: "world" grant_id: "g1")pb")),
      StatusIs(absl::StatusCode::kNotFound));
  audit_.FailPreEffect(false);
  // Neither the grant nor the key survived: the same call now issues at revision 1.
  auto response = core_->IssueGrant(admin_, Issue(Grant("g1"), "key-1"));
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->revision(), 1);
}

// Owner binding at issue (ADR 0014, T1): what is stored and answered names whose resources each
// capability reaches.
TEST_F(GrantStoreCoreTest, IssueGrantBindsEveryCapabilityToAnOwner) {
  pb::CapabilityGrant ownerless = BaseGrant("g-pinned");
  ownerless.mutable_capabilities(0)->mutable_resource()->clear_owner();
  auto pinned = core_->IssueGrant(admin_, Issue(ownerless));
  ASSERT_THAT(pinned, IsOk());
  EXPECT_EQ(pinned->grant().capabilities(0).resource().owner().human_user_id(), "alice");
  // A retry of the same request is the same grant, not a reuse of the id.
  EXPECT_THAT(core_->IssueGrant(admin_, Issue(ownerless)), IsOk());

  pb::CapabilityGrant by_agent = ownerless;
  by_agent.set_id("g-agent");
  by_agent.mutable_issuer()->set_agent_id("orchestrator");
  EXPECT_THAT(core_->IssueGrant(admin_, Issue(by_agent)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("grant.capabilities[0].resource.owner: required")));
  v1::IssueGrantRequest any = Issue(by_agent);
  any.set_any_owner(true);
  auto issued = core_->IssueGrant(admin_, any);
  ASSERT_THAT(issued, IsOk());
  EXPECT_FALSE(issued->grant().capabilities(0).resource().has_owner());
  EXPECT_TRUE(issued->grant().metadata().fields().at("anyOwner").bool_value());
}

// --- DeriveGrant ---

class DeriveGrantTest : public GrantStoreCoreTest {
 protected:
  void SetUp() override {
    GrantStoreCoreTest::SetUp();
    // The parent: delegable twice, for purpose "assist", until T0 + 1 day.
    IssueOk(Grant("parent", R"pb(constraints {
                                   purposes: "assist"
                                   expires_at { seconds: 1700086400 }
                                   delegation_depth: 2
                                 })pb"));
    audit_.Clear();
  }

  // `child_extra`, when set, is merged into the child (text format).
  v1::DeriveGrantRequest Derive(const std::string& child_extra = "") {
    auto request = Parse<v1::DeriveGrantRequest>(R"pb(
      namespace_id: "world"
      parent_grant_id: "parent"
      child {
        id: "child"
        subject { agent_id: "helper" }
        capabilities {
          resource { namespace: "files" path: "docs" path: "a" }
          actions: "read"
          scope: SCOPE_EXACT
        }
        issued_at { seconds: 1700000100 }
      }
    )pb");
    if (!google::protobuf::TextFormat::MergeFromString(child_extra, request.mutable_child())) {
      ADD_FAILURE() << "bad text proto: " << child_extra;
    }
    return request;
  }
};

// The child asked for no owner: it takes its parent's (alice's), so it acts on nobody else's data
// (ADR 0014, T1).
TEST_F(DeriveGrantTest, DerivesTheChildAndAuditsGrantDerived) {
  auto response = core_->DeriveGrant(admin_, Derive());
  ASSERT_THAT(response, IsOk());
  EXPECT_THAT(*response, EqualsProto(Parse<v1::DeriveGrantResponse>(R"pb(
    granted {
      grant {
        id: "child"
        namespace_id: "world"
        subject { agent_id: "helper" }
        issuer { agent_id: "assistant" }
        capabilities {
          resource {
            namespace: "files"
            path: "docs"
            path: "a"
            owner { human_user_id: "alice" }
          }
          actions: "read"
          scope: SCOPE_EXACT
        }
        constraints {
          purposes: "assist"
          expires_at { seconds: 1700086400 }
          delegation_depth: 1
        }
        issued_at { seconds: 1700000100 }
        parent_grant_id: "parent"
      }
      revision: 2
    }
  )pb")));
  EXPECT_EQ(Revision(), 2);
  const audit::v1::ControlPlaneEvent event = LastEvent();
  EXPECT_EQ(event.type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED);
  EXPECT_EQ(event.grant_id(), "child");
  EXPECT_THAT(event.authority(), EqualsProto(Parse<pb::Address>(R"pb(agent_id: "assistant")pb")));
  EXPECT_EQ(event.metadata().fields().at("parentGrantId").string_value(), "parent");
  // A retry answers the stored child.
  auto retry = core_->DeriveGrant(admin_, Derive());
  ASSERT_THAT(retry, IsOk());
  EXPECT_THAT(*retry, EqualsProto(*response));
  EXPECT_THAT(audit_.control_plane_events(), SizeIs(1));
}

TEST_F(DeriveGrantTest, RefusalsAreSuccessfulResponsesThatWriteNothing) {
  struct Case {
    std::string code;
    v1::DeriveGrantRequest request;
  };
  std::vector<Case> cases;
  {
    v1::DeriveGrantRequest r = Derive();
    r.mutable_child()->clear_capabilities();
    cases.push_back({"empty_capabilities", r});
  }
  {
    v1::DeriveGrantRequest r = Derive();
    r.mutable_child()->set_id("parent");
    cases.push_back({"id_collides_with_parent", r});
  }
  cases.push_back({"depth_exhausted", Derive("constraints { delegation_depth: 2 }")});
  {
    v1::DeriveGrantRequest r = Derive();
    r.mutable_child()->mutable_capabilities(0)->mutable_resource()->set_path(0, "other");
    cases.push_back({"capability_not_within_parent", r});
  }
  cases.push_back({"purpose_not_within_parent", Derive(R"pb(constraints { purposes: "x" })pb")});
  cases.push_back(
      {"window_not_within_parent", Derive("constraints { expires_at { seconds: 1800000000 } }")});
  {
    v1::DeriveGrantRequest r = Derive();
    r.mutable_child()->mutable_issued_at()->set_seconds(kT0 - 1);
    cases.push_back({"issued_before_parent", r});
  }
  for (const Case& c : cases) {
    auto response = core_->DeriveGrant(admin_, c.request);
    ASSERT_THAT(response, IsOk()) << c.code;
    EXPECT_THAT(*response, EqualsProto(Parse<v1::DeriveGrantResponse>(
                               absl::StrCat("refusal { code: \"", c.code, "\" }"))));
  }
  EXPECT_EQ(Revision(), 1);
  EXPECT_THAT(audit_.control_plane_events(), IsEmpty());
}

TEST_F(DeriveGrantTest, ParentsThatCannotDelegateAreRefused) {
  IssueOk(Grant("undelegable"));
  IssueOk(Grant("bounded", "constraints { max_uses: 3 delegation_depth: 1 }"));
  v1::DeriveGrantRequest request = Derive();
  request.set_parent_grant_id("undelegable");
  auto response = core_->DeriveGrant(admin_, request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->refusal().code(), "parent_not_delegable");
  request.set_parent_grant_id("bounded");
  response = core_->DeriveGrant(admin_, request);
  ASSERT_THAT(response, IsOk());
  EXPECT_EQ(response->refusal().code(), "bounded_parent_not_delegable");
}

TEST_F(DeriveGrantTest, ErrorsNameTheProblem) {
  v1::DeriveGrantRequest unknown_parent = Derive();
  unknown_parent.set_parent_grant_id("nope");
  EXPECT_THAT(core_->DeriveGrant(admin_, unknown_parent),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("parent_not_found")));
  v1::DeriveGrantRequest other_namespace = Derive();
  other_namespace.set_namespace_id("elsewhere");
  EXPECT_THAT(core_->DeriveGrant(admin_, other_namespace),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("parent_not_found")));
  v1::DeriveGrantRequest no_subject = Derive();
  no_subject.mutable_child()->clear_subject();
  EXPECT_THAT(core_->DeriveGrant(admin_, no_subject),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("child.subject: required")));
  v1::DeriveGrantRequest no_issued_at = Derive();
  no_issued_at.mutable_child()->clear_issued_at();
  EXPECT_THAT(core_->DeriveGrant(admin_, no_issued_at),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("child.issued_at: required")));
  IssueOk(Grant("taken"));
  v1::DeriveGrantRequest taken = Derive();
  taken.mutable_child()->set_id("taken");
  EXPECT_THAT(core_->DeriveGrant(admin_, taken),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("\"taken\"")));
  ASSERT_THAT(
      core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                    grant_id: "parent")pb")),
      IsOk());
  EXPECT_THAT(core_->DeriveGrant(admin_, Derive()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("revoked")));
}

TEST_F(DeriveGrantTest, AuditFailureRollsBackTheDerivation) {
  audit_.FailPreEffect(true);
  EXPECT_THAT(core_->DeriveGrant(admin_, Derive()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
  EXPECT_EQ(Revision(), 1);
  EXPECT_THAT(core_->GetGrant(Parse<v1::GetGrantRequest>(R"pb(namespace_id: "world"
                                                              grant_id: "child")pb")),
              StatusIs(absl::StatusCode::kNotFound));
}

// --- RevokeGrant, GetGrant, ListGrants ---

TEST_F(GrantStoreCoreTest, RevokeStampsTheClockOnceAndAuditsOnce) {
  IssueOk(Grant("g1"));
  const auto request = Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world" grant_id: "g1")pb");
  auto revoked = core_->RevokeGrant(admin_, request);
  ASSERT_THAT(revoked, IsOk());
  EXPECT_THAT(*revoked,
              EqualsProto(Parse<v1::RevokeGrantResponse>(R"pb(revoked_at { seconds: 1700000500 }
                                                              revision: 2)pb")));
  EXPECT_EQ(LastEvent().type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED);
  clock_.AdvanceTime(absl::Hours(1));
  auto again = core_->RevokeGrant(admin_, request);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT(*again, EqualsProto(*revoked));
  EXPECT_THAT(audit_.control_plane_events(), SizeIs(2));
  auto got =
      core_->GetGrant(Parse<v1::GetGrantRequest>(R"pb(namespace_id: "world" grant_id: "g1")pb"));
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->grant().revoked_at().seconds(), kT0 + 500);
  EXPECT_THAT(core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                            grant_id: "nope")pb")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"nope\"")));
  EXPECT_THAT(core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(grant_id: "g1")pb")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("namespace_id: empty")));
}

TEST_F(GrantStoreCoreTest, AuditFailureRollsBackRevocation) {
  IssueOk(Grant("g1"));
  audit_.FailPreEffect(true);
  EXPECT_THAT(core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                            grant_id: "g1")pb")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
  auto got =
      core_->GetGrant(Parse<v1::GetGrantRequest>(R"pb(namespace_id: "world" grant_id: "g1")pb"));
  ASSERT_THAT(got, IsOk());
  EXPECT_FALSE(got->grant().has_revoked_at());
  EXPECT_EQ(Revision(), 1);
}

TEST_F(GrantStoreCoreTest, ListGrantsPagesWithTokensBoundToTheFilter) {
  for (const char* id : {"e", "b", "d", "a", "c"}) IssueOk(Grant(id));
  auto request = Parse<v1::ListGrantsRequest>(R"pb(filter { namespace_id: "world" }
                                                   page_size: 2)pb");
  std::vector<std::string> ids;
  std::vector<std::string> tokens;
  for (int page = 0; page < 5; ++page) {
    auto response = core_->ListGrants(request);
    ASSERT_THAT(response, IsOk());
    for (const auto& grant : response->grants()) ids.push_back(grant.id());
    if (response->next_page_token().empty()) break;
    tokens.push_back(response->next_page_token());
    request.set_page_token(response->next_page_token());
  }
  EXPECT_THAT(ids, ElementsAre("a", "b", "c", "d", "e"));
  ASSERT_THAT(tokens, SizeIs(2));

  auto other_filter =
      Parse<v1::ListGrantsRequest>(R"pb(filter { namespace_id: "world" include_revoked: true })pb");
  other_filter.set_page_token(tokens[0]);
  EXPECT_THAT(core_->ListGrants(other_filter),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("page_token: not issued for this filter")));
  other_filter.set_page_token("!!!");
  EXPECT_THAT(core_->ListGrants(other_filter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_token: malformed")));
  EXPECT_THAT(core_->ListGrants(Parse<v1::ListGrantsRequest>(R"pb(filter { namespace_id: "world" }
                                                                  page_size: 1001)pb")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_size")));
  EXPECT_THAT(core_->ListGrants(v1::ListGrantsRequest()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("filter: required")));
}

// --- Host policy ---

v1::PutHostPolicyRequest Policy(const std::string& version, const std::string& rule_id = "r1") {
  auto request = Parse<v1::PutHostPolicyRequest>(R"pb(
    policy {
      namespace_id: "world"
      rules {
        resource_namespace: "files"
        path: "secrets"
        scope: SCOPE_DESCENDANTS
        actions: "read"
        actors { agent_id: "assistant" }
        purposes: "assist"
      }
    }
  )pb");
  request.mutable_policy()->set_version(version);
  request.mutable_policy()->mutable_rules(0)->set_id(rule_id);
  return request;
}

TEST_F(GrantStoreCoreTest, HostPolicyVersionsOnlyMoveForward) {
  auto get = Parse<v1::GetHostPolicyRequest>(R"pb(namespace_id: "world")pb");
  auto absent = core_->GetHostPolicy(get);
  ASSERT_THAT(absent, IsOk());
  EXPECT_TRUE(absent->has_absent());

  auto put = core_->PutHostPolicy(admin_, Policy("v1"));
  ASSERT_THAT(put, IsOk());
  EXPECT_EQ(put->revision(), 1);
  EXPECT_THAT(put->policy(), EqualsProto(Policy("v1").policy()));
  EXPECT_THAT(LastEvent(), EqualsProto(Parse<audit::v1::ControlPlaneEvent>(R"pb(
                type: CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED
                outcome: AUDIT_OUTCOME_SUCCEEDED
                at { seconds: 1700000500 }
                trace_id: "grantstore-r1"
                namespace_id: "world"
                actor { service_id: "ops" }
                authority { service_id: "ops" }
                owner { service_id: "ops" }
                purpose: "sharedos.control-plane"
                metadata {
                  fields {
                    key: "revision"
                    value { number_value: 1 }
                  }
                  fields {
                    key: "policyVersion"
                    value { string_value: "v1" }
                  }
                  fields {
                    key: "ruleCount"
                    value { number_value: 1 }
                  }
                }
              )pb")));
  // The same version and rules again: unchanged.
  auto same = core_->PutHostPolicy(admin_, Policy("v1"));
  ASSERT_THAT(same, IsOk());
  EXPECT_EQ(same->revision(), 1);
  EXPECT_THAT(core_->PutHostPolicy(admin_, Policy("v1", "r2")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("\"v1\"")));
  ASSERT_THAT(core_->PutHostPolicy(admin_, Policy("v2", "r2")), IsOk());
  EXPECT_THAT(core_->PutHostPolicy(admin_, Policy("v1")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already used")));
  auto current = core_->GetHostPolicy(get);
  ASSERT_THAT(current, IsOk());
  EXPECT_THAT(current->policy(), EqualsProto(Policy("v2", "r2").policy()));
  EXPECT_EQ(Revision(), 2);
  EXPECT_THAT(audit_.control_plane_events(), SizeIs(2));
}

TEST_F(GrantStoreCoreTest, MalformedHostPoliciesAreRejected) {
  struct Case {
    std::function<void(v1::PutHostPolicyRequest&)> mutate;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& r) { r.mutable_policy()->set_version(""); }, "policy.version: empty"},
      {[](auto& r) { *r.mutable_policy()->add_rules() = r.policy().rules(0); },
       "policy.rules[1].id: duplicate \"r1\""},
      {[](auto& r) { r.mutable_policy()->mutable_rules(0)->set_scope(pb::SCOPE_UNSPECIFIED); },
       "policy.rules[0].scope: unspecified"},
      {[](auto& r) { r.mutable_policy()->mutable_rules(0)->add_path(".."); },
       "policy.rules[0].path[1]"},
      {[](auto& r) { r.mutable_policy()->mutable_rules(0)->add_actions(" "); },
       "policy.rules[0].actions[1]: empty"},
      {[](auto& r) { r.mutable_policy()->mutable_rules(0)->add_actors(); },
       "policy.rules[0].actors[1]"},
      {[](auto& r) { r.mutable_policy()->mutable_rules(0)->set_resource_namespace(""); },
       "policy.rules[0].resource_namespace: empty"},
      {[](auto& r) { r.mutable_policy()->clear_namespace_id(); }, "policy.namespace_id: empty"},
  };
  for (const Case& c : cases) {
    v1::PutHostPolicyRequest request = Policy("v1");
    c.mutate(request);
    EXPECT_THAT(core_->PutHostPolicy(admin_, request),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
  }
  EXPECT_EQ(Revision(), 0);
  EXPECT_THAT(audit_.control_plane_events(), IsEmpty());
}

// --- Data plane ---

v1::LoadAuthorityRequest Load(std::optional<int64_t> at_revision = std::nullopt) {
  auto request = Parse<v1::LoadAuthorityRequest>(R"pb(
    namespace_id: "world"
    actor { agent_id: "assistant" }
    authority { human_user_id: "alice" }
  )pb");
  if (at_revision.has_value()) request.set_at_revision(*at_revision);
  return request;
}

TEST_F(GrantStoreCoreTest, LoadAuthorityIsReproducibleAtARevision) {
  IssueOk(Grant("g1"));
  IssueOk(Grant("g2", R"pb(subject { agent_id: "someone-else" })pb"));
  ASSERT_THAT(core_->PutHostPolicy(admin_, Policy("v1")), IsOk());
  auto at_r = core_->LoadAuthority(Load());
  ASSERT_THAT(at_r, IsOk());
  EXPECT_EQ(at_r->revision(), 3);
  ASSERT_THAT(at_r->grants(), SizeIs(1));
  EXPECT_THAT(at_r->grants(0), EqualsProto(Grant("g1")));
  EXPECT_THAT(at_r->host_policy().loaded(), EqualsProto(Policy("v1").policy()));

  IssueOk(Grant("g3"));
  ASSERT_THAT(core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                            grant_id: "g1")pb")),
              IsOk());
  ASSERT_THAT(core_->PutHostPolicy(admin_, Policy("v2")), IsOk());

  auto again = core_->LoadAuthority(Load(3));
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(common::DeterministicBytes(*again), common::DeterministicBytes(*at_r));

  auto latest = core_->LoadAuthority(Load());
  ASSERT_THAT(latest, IsOk());
  EXPECT_EQ(latest->revision(), 6);
  ASSERT_THAT(latest->grants(), SizeIs(1));
  EXPECT_EQ(latest->grants(0).id(), "g3");
  EXPECT_EQ(latest->host_policy().loaded().version(), "v2");

  auto before_policy = core_->LoadAuthority(Load(1));
  ASSERT_THAT(before_policy, IsOk());
  EXPECT_TRUE(before_policy->host_policy().has_absent());

  EXPECT_THAT(core_->LoadAuthority(Load(7)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("at_revision 7")));
  EXPECT_THAT(core_->LoadAuthority(Load(-1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at_revision")));
  auto no_actor = Load();
  no_actor.clear_actor();
  EXPECT_THAT(core_->LoadAuthority(no_actor),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("actor: required")));
}

TEST_F(GrantStoreCoreTest, LoadAuthorityRefusesMoreThanTheGrantLimit) {
  GrantStoreCore::Options options;
  options.max_resolved_grants = 3;
  GrantStoreCore small(*store_, audit_, clock_, options);
  for (int i = 0; i < 3; ++i) IssueOk(Grant(absl::StrCat("g", i)));
  auto exactly = small.LoadAuthority(Load());
  ASSERT_THAT(exactly, IsOk());
  EXPECT_THAT(exactly->grants(), SizeIs(3));
  IssueOk(Grant("g3"));
  EXPECT_THAT(small.LoadAuthority(Load()),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("grant_limit_exceeded")));
  // The bound is MAX_RESOLVED_GRANTS (256) by default.
  EXPECT_EQ(GrantStoreCore::Options().max_resolved_grants, 256);
}

TEST_F(GrantStoreCoreTest, ResolveGrantReadsAncestorsAtARevision) {
  IssueOk(Grant("g1"));
  ASSERT_THAT(core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                            grant_id: "g1")pb")),
              IsOk());
  auto at1 = core_->ResolveGrant(Parse<v1::ResolveGrantRequest>(R"pb(namespace_id: "world"
                                                                     grant_id: "g1"
                                                                     at_revision: 1)pb"));
  ASSERT_THAT(at1, IsOk());
  EXPECT_THAT(at1->grant(), EqualsProto(Grant("g1")));
  auto latest = core_->ResolveGrant(Parse<v1::ResolveGrantRequest>(R"pb(namespace_id: "world"
                                                                        grant_id: "g1")pb"));
  ASSERT_THAT(latest, IsOk());
  EXPECT_EQ(latest->grant().revoked_at().seconds(), kT0 + 500);
  EXPECT_THAT(core_->ResolveGrant(Parse<v1::ResolveGrantRequest>(R"pb(namespace_id: "world"
                                                                      grant_id: "g1"
                                                                      at_revision: 0)pb")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"g1\"")));
  EXPECT_THAT(core_->ResolveGrant(Parse<v1::ResolveGrantRequest>(R"pb(namespace_id: "world"
                                                                      grant_id: "g1"
                                                                      at_revision: 9)pb")),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(GrantStoreCoreTest, UsageAndRevocationRequestsAreValidated) {
  IssueOk(Grant("g1", "constraints { max_uses: 1 }"));
  auto consume =
      Parse<v1::TryConsumeRequest>(R"pb(namespace_id: "world" grant_id: "g1" max_uses: 1)pb");
  auto first = core_->TryConsume(consume);
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(*first, EqualsProto(Parse<v1::TryConsumeResponse>("consumed: true uses: 1")));
  auto second = core_->TryConsume(consume);
  ASSERT_THAT(second, IsOk());
  EXPECT_THAT(*second, EqualsProto(Parse<v1::TryConsumeResponse>("consumed: false uses: 1")));
  consume.set_max_uses(0);
  EXPECT_THAT(core_->TryConsume(consume), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("max_uses: must be positive")));
  EXPECT_THAT(
      core_->GetUsage(Parse<v1::GetUsageRequest>(R"pb(namespace_id: "world" grant_id: "nope")pb")),
      StatusIs(absl::StatusCode::kNotFound));

  auto check = Parse<v1::CheckRevocationsRequest>(R"pb(namespace_id: "world"
                                                       grant_ids: "g1"
                                                       grant_ids: "ghost")pb");
  auto checked = core_->CheckRevocations(check);
  ASSERT_THAT(checked, IsOk());
  EXPECT_THAT(*checked, EqualsProto(Parse<v1::CheckRevocationsResponse>(
                            R"pb(revision: 1 revoked_grant_ids: "ghost")pb")));
  check.clear_grant_ids();
  EXPECT_THAT(core_->CheckRevocations(check),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grant_ids: empty")));
  for (int i = 0; i < 257; ++i) check.add_grant_ids(absl::StrCat("g", i));
  EXPECT_THAT(core_->CheckRevocations(check),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grant_ids: more than 256")));
}

// --- Escalations ---

TEST_F(GrantStoreCoreTest, RecordEscalationStoresItPendingOnceAndAuditsIt) {
  auto recorded = core_->RecordEscalation(service_, EscalationRequest("esc-1"));
  ASSERT_THAT(recorded, IsOk());
  EXPECT_EQ(recorded->escalation_id(), "esc-1");
  EXPECT_THAT(LastEvent(), EqualsProto(Parse<audit::v1::ControlPlaneEvent>(R"pb(
                type: CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED
                outcome: AUDIT_OUTCOME_SUCCEEDED
                at { seconds: 1700000500 }
                trace_id: "grantstore-r1"
                namespace_id: "world"
                actor { service_id: "authorizer" }
                authority { human_user_id: "alice" }
                owner { human_user_id: "alice" }
                purpose: "sharedos.control-plane"
                operation_id: "exec-1"
                metadata {
                  fields {
                    key: "revision"
                    value { number_value: 1 }
                  }
                  fields {
                    key: "escalationId"
                    value { string_value: "esc-1" }
                  }
                  fields {
                    key: "requester"
                    value { string_value: "agent:assistant" }
                  }
                }
              )pb")));
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  v1::EscalationRecord expected;
  expected.set_escalation_id("esc-1");
  expected.set_namespace_id("world");
  expected.set_execution_id("exec-1");
  *expected.mutable_escalation() = EscalationRequest("esc-1").escalation();
  expected.set_status(v1::ESCALATION_RECORD_STATUS_PENDING);
  expected.set_recorded_revision(1);
  EXPECT_THAT(stored->escalation(), EqualsProto(expected));

  // Idempotent on the id; different content under it is refused.
  auto retry = core_->RecordEscalation(service_, EscalationRequest("esc-1"));
  ASSERT_THAT(retry, IsOk());
  EXPECT_EQ(retry->escalation_id(), "esc-1");
  v1::RecordEscalationRequest changed = EscalationRequest("esc-1");
  changed.mutable_escalation()->set_reason("something else");
  EXPECT_THAT(core_->RecordEscalation(service_, changed),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("esc-1")));
  // Without an id the store mints one.
  auto minted = core_->RecordEscalation(service_, EscalationRequest(""));
  ASSERT_THAT(minted, IsOk());
  EXPECT_EQ(minted->escalation_id(), "esc-id-1");
  EXPECT_EQ(Revision(), 2);
  EXPECT_THAT(audit_.control_plane_events(), SizeIs(2));
}

TEST_F(GrantStoreCoreTest, RecordEscalationRejectsInconsistentRequests) {
  v1::RecordEscalationRequest other_namespace = EscalationRequest("esc-1");
  other_namespace.set_namespace_id("elsewhere");
  EXPECT_THAT(core_->RecordEscalation(service_, other_namespace),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("escalation.requested_authority.namespace_id")));
  v1::RecordEscalationRequest other_reviewer = EscalationRequest("esc-1");
  other_reviewer.mutable_escalation()->mutable_reviewer()->set_human_user_id("mallory");
  EXPECT_THAT(core_->RecordEscalation(service_, other_reviewer),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("escalation.reviewer")));
  v1::RecordEscalationRequest no_status = EscalationRequest("esc-1");
  no_status.mutable_escalation()->clear_status();
  EXPECT_THAT(core_->RecordEscalation(service_, no_status),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("escalation.status")));
  v1::RecordEscalationRequest no_execution = EscalationRequest("esc-1");
  no_execution.clear_execution_id();
  EXPECT_THAT(core_->RecordEscalation(service_, no_execution),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("execution_id: empty")));
  v1::RecordEscalationRequest long_reason = EscalationRequest("esc-1");
  long_reason.mutable_escalation()->set_reason(std::string(513, 'x'));
  EXPECT_THAT(core_->RecordEscalation(service_, long_reason),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("escalation.reason")));
  audit_.FailPreEffect(true);
  EXPECT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
  EXPECT_THAT(
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb")),
      StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(Revision(), 0);
}

// `extra` is merged into the request (text format).
v1::ResolveEscalationRequest Resolve(const std::string& decision, const std::string& extra = "") {
  auto request = Parse<v1::ResolveEscalationRequest>(R"pb(escalation_id: "esc-1"
                                                          reviewer { human_user_id: "alice" })pb");
  v1::EscalationDecision value = v1::ESCALATION_DECISION_UNSPECIFIED;
  if (!v1::EscalationDecision_Parse(decision, &value)) ADD_FAILURE() << decision;
  request.set_decision(value);
  if (!google::protobuf::TextFormat::MergeFromString(extra, &request)) {
    ADD_FAILURE() << "bad text proto: " << extra;
  }
  return request;
}

TEST_F(GrantStoreCoreTest, ApproveIssuesTheRequestedGrantInTheSameRevision) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  audit_.Clear();
  auto resolved = core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE"));
  ASSERT_THAT(resolved, IsOk());
  const pb::CapabilityGrant expected_grant = Parse<pb::CapabilityGrant>(R"pb(
    id: "grant-id-1"
    namespace_id: "world"
    subject { agent_id: "assistant" }
    issuer { human_user_id: "alice" }
    capabilities {
      resource {
        namespace: "files"
        path: "reports"
        owner { human_user_id: "alice" }
      }
      actions: "write"
      scope: SCOPE_EXACT
    }
    constraints { expires_at { seconds: 1700086900 } }
    issued_at { seconds: 1700000500 }
    metadata {
      fields {
        key: "escalationId"
        value { string_value: "esc-1" }
      }
      fields {
        key: "capabilityRequestId"
        value { string_value: "capreq-0123" }
      }
      fields {
        key: "approvedBy"
        value { string_value: "human:alice" }
      }
      fields {
        key: "approvedWithCredential"
        value { string_value: "alice-cred" }
      }
      fields {
        key: "credentialHeldByDeciderAlone"
        value { bool_value: false }
      }
    }
  )pb");
  // The reviewer named as every capability's owner, and an end 24 h after the approval when
  // nothing set one (ADR 0014, T1).
  EXPECT_THAT(resolved->grant(), EqualsProto(expected_grant));
  // T3: the credential decided with.
  EXPECT_EQ(resolved->escalation().decided_with().credential_id(), "alice-cred");
  EXPECT_THAT(resolved->escalation().decided_by(),
              EqualsProto(Parse<pb::Address>(R"pb(human_user_id: "alice")pb")));
  EXPECT_FALSE(resolved->escalation().on_behalf_of_reviewer());
  EXPECT_EQ(resolved->escalation().status(), v1::ESCALATION_RECORD_STATUS_APPROVED);
  EXPECT_EQ(resolved->escalation().grant_id(), "grant-id-1");
  EXPECT_EQ(resolved->escalation().resolved_at().seconds(), kT0 + 500);
  EXPECT_THAT(resolved->escalation().reviewer(),
              EqualsProto(Parse<pb::Address>(R"pb(human_user_id: "alice")pb")));
  // One mutation, one revision: the grant and the resolution.
  EXPECT_EQ(Revision(), 2);
  EXPECT_THAT(EventTypes(), ElementsAre(audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED));
  const std::vector<audit::v1::ControlPlaneEvent> events = audit_.control_plane_events();
  EXPECT_EQ(events[0].grant_id(), "grant-id-1");
  EXPECT_EQ(events[0].metadata().fields().at("escalationId").string_value(), "esc-1");
  EXPECT_EQ(events[1].grant_id(), "grant-id-1");
  EXPECT_EQ(events[1].metadata().fields().at("decision").string_value(), "approved");
  EXPECT_FALSE(events[1].metadata().fields().contains("hint"));
  // The next turn of the requester under the reviewer's authority loads it.
  auto loaded = core_->LoadAuthority(Load());
  ASSERT_THAT(loaded, IsOk());
  ASSERT_THAT(loaded->grants(), SizeIs(1));
  EXPECT_THAT(loaded->grants(0), EqualsProto(expected_grant));
  // The stored record agrees.
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  EXPECT_THAT(stored->escalation(), EqualsProto(resolved->escalation()));
}

TEST_F(GrantStoreCoreTest, DenyMarksTheEscalationDeniedAndIssuesNothing) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  auto resolved = core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_DENY"));
  ASSERT_THAT(resolved, IsOk());
  EXPECT_FALSE(resolved->has_grant());
  EXPECT_EQ(resolved->escalation().status(), v1::ESCALATION_RECORD_STATUS_DENIED);
  EXPECT_EQ(resolved->escalation().grant_id(), "");
  EXPECT_EQ(LastEvent().metadata().fields().at("decision").string_value(), "denied");
  EXPECT_EQ(LastEvent().type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
  auto loaded = core_->LoadAuthority(Load());
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(loaded->grants(), IsEmpty());
}

// The note is kept on the record (returned and stored) and the audit record says only its
// length, never its text; a retry with another note is a second resolution.
TEST_F(GrantStoreCoreTest, ADenialNoteIsKeptOnTheRecordButNeverAudited) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  auto deny = Resolve("ESCALATION_DECISION_DENY", R"pb(note: "  secret-ish: ask Bob\nfirst ")pb");
  auto resolved = core_->ResolveEscalation(alice_, deny);
  ASSERT_THAT(resolved, IsOk());
  EXPECT_EQ(resolved->escalation().note(), "secret-ish: ask Bob\nfirst");
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  EXPECT_EQ(stored->escalation().note(), "secret-ish: ask Bob\nfirst");
  const audit::v1::ControlPlaneEvent event = LastEvent();
  EXPECT_EQ(event.type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
  EXPECT_EQ(event.metadata().fields().at("noteBytes").number_value(), 25);
  EXPECT_THAT(event.DebugString(), Not(HasSubstr("ask Bob")));
  // The same request again is a retry; another note is not.
  EXPECT_THAT(core_->ResolveEscalation(alice_, deny), IsOk());
  EXPECT_THAT(core_->ResolveEscalation(
                  alice_, Resolve("ESCALATION_DECISION_DENY", R"pb(note: "another")pb")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already resolved")));
}

TEST_F(GrantStoreCoreTest, AnApprovalMayCarryANoteAndNoNoteIsNotAudited) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  auto approved = core_->ResolveEscalation(
      alice_, Resolve("ESCALATION_DECISION_APPROVE", R"pb(note: "once only")pb"));
  ASSERT_THAT(approved, IsOk());
  EXPECT_EQ(approved->escalation().note(), "once only");
  EXPECT_EQ(LastEvent().metadata().fields().at("noteBytes").number_value(), 9);
  // The grant does not carry it either.
  EXPECT_THAT(approved->grant().DebugString(), Not(HasSubstr("once only")));

  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-2")), IsOk());
  auto plain = Resolve("ESCALATION_DECISION_DENY");
  plain.set_escalation_id("esc-2");
  auto denied = core_->ResolveEscalation(alice_, plain);
  ASSERT_THAT(denied, IsOk());
  EXPECT_EQ(denied->escalation().note(), "");
  EXPECT_FALSE(LastEvent().metadata().fields().contains("noteBytes"));
  // Over the bound: refused naming the field, nothing resolved.
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-3")), IsOk());
  auto too_long = Resolve("ESCALATION_DECISION_DENY");
  too_long.set_escalation_id("esc-3");
  too_long.set_note(std::string(kMaxResolutionNoteLength + 1, 'x'));
  EXPECT_THAT(core_->ResolveEscalation(alice_, too_long),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("note: longer than 1000")));
  auto pending =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-3")pb"));
  ASSERT_THAT(pending, IsOk());
  EXPECT_EQ(pending->escalation().status(), v1::ESCALATION_RECORD_STATUS_PENDING);
}

// sharedos_escalations_resolved_total counts each committed resolution once, by its outcome; a
// retry answering the first resolution is not a second one.
TEST_F(GrantStoreCoreTest, ResolutionsAreCountedOnceByOutcome) {
  common::metrics::Metrics metrics;
  GrantStoreCore::Options options;
  options.new_id = [this] { return absl::StrCat("id-", ++ids_); };
  options.metrics = &metrics;
  GrantStoreCore core(*store_, audit_, clock_, options);
  ASSERT_THAT(core.RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  ASSERT_THAT(core.ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE")), IsOk());
  ASSERT_THAT(core.ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE")), IsOk());
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("sharedos_escalations_resolved_total{resolution=\"approved\"} 1"));
  EXPECT_THAT(text, HasSubstr("sharedos_escalations_resolved_total{resolution=\"denied\"} 0"));
}

TEST_F(GrantStoreCoreTest, AnEscalationIsResolvedOnlyOnce) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  auto approved = core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE"));
  ASSERT_THAT(approved, IsOk());
  const int64_t revision = Revision();
  const size_t events = audit_.control_plane_events().size();
  EXPECT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_DENY")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("escalation \"esc-1\" is already resolved (approved)")));
  auto other_reviewer = Resolve("ESCALATION_DECISION_APPROVE");
  other_reviewer.mutable_reviewer()->set_human_user_id("bob");
  EXPECT_THAT(core_->ResolveEscalation(alice_, other_reviewer),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("reviewer:")));
  EXPECT_THAT(core_->ResolveEscalation(
                  alice_, Resolve("ESCALATION_DECISION_APPROVE", "narrowing { max_uses: 1 }")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already resolved")));
  // The identical resolution retried answers what it produced, writing nothing.
  auto retry = core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE"));
  ASSERT_THAT(retry, IsOk());
  EXPECT_THAT(*retry, EqualsProto(*approved));
  EXPECT_EQ(Revision(), revision);
  EXPECT_THAT(audit_.control_plane_events(), SizeIs(events));
}

// A delegated turn (authority ≠ owner) escalates: the owner approves, and the grant is issued
// under the turn's authority, so the next turn with the same context loads it.
TEST_F(GrantStoreCoreTest, ApprovalIssuesUnderTheEscalatedTurnsAuthority) {
  v1::RecordEscalationRequest recorded = EscalationRequest("esc-1");
  recorded.mutable_authority()->set_agent_id("orchestrator");
  ASSERT_THAT(core_->RecordEscalation(service_, recorded), IsOk());
  // A retry must say the same authority.
  v1::RecordEscalationRequest other = recorded;
  other.mutable_authority()->set_agent_id("someone-else");
  EXPECT_THAT(core_->RecordEscalation(service_, other),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  auto resolved = core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE"));
  ASSERT_THAT(resolved, IsOk());
  EXPECT_THAT(resolved->grant().issuer(),
              EqualsProto(Parse<pb::Address>(R"pb(agent_id: "orchestrator")pb")));
  EXPECT_THAT(resolved->escalation().reviewer(),
              EqualsProto(Parse<pb::Address>(R"pb(human_user_id: "alice")pb")));
  EXPECT_THAT(resolved->escalation().authority(),
              EqualsProto(Parse<pb::Address>(R"pb(agent_id: "orchestrator")pb")));
  v1::LoadAuthorityRequest delegated = Load();
  delegated.mutable_authority()->Clear();
  delegated.mutable_authority()->set_agent_id("orchestrator");
  auto loaded = core_->LoadAuthority(delegated);
  ASSERT_THAT(loaded, IsOk());
  ASSERT_THAT(loaded->grants(), SizeIs(1));
  EXPECT_EQ(loaded->grants(0).id(), resolved->grant().id());
  // Under the owner's own authority it is not there.
  auto owners = core_->LoadAuthority(Load());
  ASSERT_THAT(owners, IsOk());
  EXPECT_THAT(owners->grants(), SizeIs(0));
}

TEST_F(GrantStoreCoreTest, AnEscalationWithoutRequestedAuthorityCannotBeApproved) {
  v1::RecordEscalationRequest bare = EscalationRequest("esc-1");
  bare.mutable_escalation()->clear_requested_authority();
  ASSERT_THAT(core_->RecordEscalation(service_, bare), IsOk());
  EXPECT_THAT(
      core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE")),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("carries no requested_authority")));
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  EXPECT_EQ(stored->escalation().status(), v1::ESCALATION_RECORD_STATUS_PENDING);
  // It can still be denied.
  EXPECT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_DENY")), IsOk());
}

TEST_F(GrantStoreCoreTest, NarrowingOnlyNarrows) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1", R"pb(
                                        purposes: "assist"
                                        purposes: "report"
                                        not_before { seconds: 1700000000 }
                                        expires_at { seconds: 1700090000 }
                                        max_uses: 5
                                      )pb")),
              IsOk());
  struct Case {
    std::string narrowing;
    std::string message;
  };
  const std::vector<Case> widening = {
      {"narrowing { expires_at { seconds: 1700090001 } }", "narrowing.expires_at: later"},
      {"narrowing { expires_at { seconds: 1699999999 } }", "narrowing.expires_at: before"},
      {"narrowing { max_uses: 6 }", "narrowing.max_uses: above"},
      {"narrowing { max_uses: 0 }", "narrowing.max_uses: must be positive"},
      {R"pb(narrowing { purposes: "assist" purposes: "other" })pb",
       "narrowing.purposes[1]: not among the requested purposes"},
      {R"pb(narrowing { purposes: "assist" purposes: "assist" })pb",
       "narrowing.purposes[1]: duplicate"},
  };
  for (const Case& c : widening) {
    EXPECT_THAT(
        core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE", c.narrowing)),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.narrowing;
  }
  EXPECT_THAT(core_->ResolveEscalation(
                  alice_, Resolve("ESCALATION_DECISION_DENY", "narrowing { max_uses: 1 }")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("narrowing: only allowed with APPROVE")));
  EXPECT_EQ(Revision(), 1);

  auto resolved = core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE", R"pb(
                                             narrowing {
                                               expires_at { seconds: 1700003600 }
                                               max_uses: 1
                                               purposes: "report"
                                             }
                                             grant_id: "approved-1"
                                           )pb"));
  ASSERT_THAT(resolved, IsOk());
  EXPECT_EQ(resolved->grant().id(), "approved-1");
  EXPECT_THAT(resolved->grant().constraints(), EqualsProto(Parse<pb::CapabilityConstraints>(R"pb(
                purposes: "report"
                not_before { seconds: 1700000000 }
                expires_at { seconds: 1700003600 }
                max_uses: 1
              )pb")));
}

TEST_F(GrantStoreCoreTest, NarrowingAnUnconstrainedRequestSetsTheConstraints) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  auto resolved = core_->ResolveEscalation(
      alice_, Resolve("ESCALATION_DECISION_APPROVE",
                      R"pb(narrowing { max_uses: 1 purposes: "assist" })pb"));
  ASSERT_THAT(resolved, IsOk());
  // Nothing asked or narrowed an expiry: the approval ends 24 h after it was given.
  EXPECT_THAT(
      resolved->grant().constraints(),
      EqualsProto(Parse<pb::CapabilityConstraints>(R"pb(purposes: "assist"
                                                        max_uses: 1
                                                        expires_at { seconds: 1700086900 })pb")));
}

TEST_F(GrantStoreCoreTest, ApprovalErrors) {
  EXPECT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("esc-1")));
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  EXPECT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_UNSPECIFIED")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decision: unspecified")));
  IssueOk(Grant("taken"));
  EXPECT_THAT(core_->ResolveEscalation(
                  alice_, Resolve("ESCALATION_DECISION_APPROVE", R"pb(grant_id: "taken")pb")),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("\"taken\"")));
  EXPECT_THAT(
      core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_DENY", R"pb(grant_id: "x")pb")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("grant_id")));
}

TEST_F(GrantStoreCoreTest, OnlyTheReviewerOrAnAdminOnItsBehalfDecides) {
  using common::server::Role;
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  audit_.Clear();
  v1::ResolveEscalationRequest approve = Resolve("ESCALATION_DECISION_APPROVE");
  approve.clear_reviewer();
  v1::ResolveEscalationRequest on_behalf = approve;
  on_behalf.set_on_behalf_of_reviewer(true);
  const Caller bob = Principal("bob-cred", "human:bob", Role::kReviewer, {"world"});
  const Caller alice_elsewhere =
      Principal("alice-2", "human:alice", Role::kReviewer, {"other-world"});
  const Caller host = Principal("host-a", "service:host-a", Role::kHost, {"world"});
  const Caller other_admin = Principal("ops-2", "human:op-2", Role::kAdmin, {"other-world"});
  struct Case {
    const char* name;
    const Caller& caller;
    const v1::ResolveEscalationRequest& request;
    const char* message;
  } cases[] = {
      {"another reviewer", bob, approve, "not the escalation's reviewer"},
      {"the reviewer outside its scope", alice_elsewhere, approve, "outside the reviewer"},
      {"a host", host, approve, "a host credential resolves no escalation"},
      {"a service", service_, approve, "a service credential"},
      {"an admin not saying on whose behalf", admin_, approve, "on_behalf_of_reviewer"},
      {"an admin of another namespace", other_admin, on_behalf, "not administered"},
      {"a reviewer claiming on-behalf", alice_, on_behalf, "a reviewer decides as itself"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(core_->ResolveEscalation(c.caller, c.request),
                StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(c.message)))
        << c.name;
  }
  // The request's reviewer field naming someone else than the caller is refused too.
  v1::ResolveEscalationRequest named_bob = approve;
  named_bob.mutable_reviewer()->set_human_user_id("bob");
  EXPECT_THAT(core_->ResolveEscalation(alice_, named_bob),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("reviewer:")));
  // Nothing moved: still pending, nothing issued, nothing audited.
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  EXPECT_EQ(stored->escalation().status(), v1::ESCALATION_RECORD_STATUS_PENDING);
  EXPECT_EQ(Revision(), 1);
  EXPECT_THAT(audit_.control_plane_events(), IsEmpty());

  // An admin of the namespace, explicitly on the reviewer's behalf: allowed and recorded.
  auto resolved = core_->ResolveEscalation(admin_, on_behalf);
  ASSERT_THAT(resolved, IsOk());
  EXPECT_THAT(resolved->escalation().decided_by(),
              EqualsProto(Parse<pb::Address>(R"pb(service_id: "ops")pb")));
  EXPECT_TRUE(resolved->escalation().on_behalf_of_reviewer());
  EXPECT_THAT(resolved->escalation().reviewer(),
              EqualsProto(Parse<pb::Address>(R"pb(human_user_id: "alice")pb")));
  EXPECT_EQ(resolved->grant().metadata().fields().at("approvedBy").string_value(), "service:ops");
  const audit::v1::ControlPlaneEvent event = LastEvent();
  EXPECT_EQ(event.type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
  EXPECT_THAT(event.actor(), EqualsProto(Parse<pb::Address>(R"pb(service_id: "ops")pb")));
  EXPECT_TRUE(event.metadata().fields().at("onBehalfOfReviewer").bool_value());
  EXPECT_EQ(event.metadata().fields().at("decidedBy").string_value(), "service:ops");
}

TEST_F(GrantStoreCoreTest, AnApprovalBeyondTheReviewersOwnResourcesIssuesNothing) {
  v1::RecordEscalationRequest request = EscalationRequest("esc-1");
  pb::CapabilityRequest* asked = request.mutable_escalation()->mutable_requested_authority();
  *asked->add_capabilities() = asked->capabilities(0);
  asked->mutable_capabilities(1)->mutable_resource()->mutable_owner()->set_human_user_id("bob");
  ASSERT_THAT(core_->RecordEscalation(service_, request), IsOk());
  EXPECT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("requested_authority.capabilities[1].resource.owner")));
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  EXPECT_EQ(stored->escalation().status(), v1::ESCALATION_RECORD_STATUS_PENDING);
  auto loaded = core_->LoadAuthority(Load());
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(loaded->grants(), IsEmpty());
  // Denying is still the reviewer's to do.
  EXPECT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_DENY")), IsOk());
}

TEST_F(GrantStoreCoreTest, CredentialsAreIssuedOnceListedRotatedAndRevoked) {
  using common::server::Role;
  auto issue = Parse<v1::IssueCredentialRequest>(R"pb(
    credential_id: "alice-reviewer"
    principal { human_user_id: "alice" }
    role: CREDENTIAL_ROLE_REVIEWER
    scope { namespaces: "world" }
  )pb");
  auto issued = core_->IssueCredential(admin_, issue);
  ASSERT_THAT(issued, IsOk());
  const std::string secret = issued->secret();
  EXPECT_THAT(secret, ::testing::StartsWith("sos_"));
  EXPECT_EQ(secret.size(), 4u + 64u);
  EXPECT_THAT(issued->credential().issued_by(),
              EqualsProto(Parse<pb::Address>(R"pb(service_id: "ops")pb")));
  EXPECT_THAT(core_->IssueCredential(admin_, issue),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("alice-reviewer")));
  // The secret never reaches audit; the change does, naming the acting principal.
  const audit::v1::ControlPlaneEvent event = LastEvent();
  EXPECT_EQ(event.type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED);
  EXPECT_EQ(event.metadata().fields().at("change").string_value(), "issued");
  EXPECT_THAT(event.actor(), EqualsProto(Parse<pb::Address>(R"pb(service_id: "ops")pb")));
  EXPECT_THAT(event.DebugString(), ::testing::Not(HasSubstr(secret.substr(4))));
  EXPECT_THAT(event.DebugString(),
              ::testing::Not(HasSubstr(common::server::TokenDigestHex(secret))));

  // It authenticates by digest, as the reviewer it names.
  v1::AuthenticateCredentialRequest by_digest;
  by_digest.set_token_sha256(common::server::TokenDigestHex(secret));
  auto found = core_->AuthenticateCredential(by_digest);
  ASSERT_THAT(found, IsOk());
  EXPECT_EQ(found->credential().credential_id(), "alice-reviewer");

  // An admin of another namespace neither sees nor manages it, nor issues into "world".
  const Caller other_admin = Principal("ops-2", "human:op-2", Role::kAdmin, {"other-world"});
  auto listed = core_->ListCredentials(other_admin, v1::ListCredentialsRequest());
  ASSERT_THAT(listed, IsOk());
  EXPECT_THAT(listed->credentials(), IsEmpty());
  v1::RevokeCredentialRequest revoke;
  revoke.set_credential_id("alice-reviewer");
  EXPECT_THAT(core_->RevokeCredential(other_admin, revoke), StatusIs(absl::StatusCode::kNotFound));
  v1::IssueCredentialRequest into_world = issue;
  into_world.set_credential_id("sneaky");
  EXPECT_THAT(core_->IssueCredential(other_admin, into_world),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("\"world\"")));
  v1::IssueCredentialRequest admin_all = issue;
  admin_all.set_credential_id("root-2");
  admin_all.set_role(v1::CREDENTIAL_ROLE_ADMIN);
  admin_all.mutable_scope()->set_namespaces(0, "*");
  EXPECT_THAT(core_->IssueCredential(other_admin, admin_all),
              StatusIs(absl::StatusCode::kPermissionDenied));
  listed = core_->ListCredentials(admin_, v1::ListCredentialsRequest());
  ASSERT_THAT(listed, IsOk());
  ASSERT_THAT(listed->credentials(), SizeIs(1));

  // Rotation: a human's secret is the human's — the operator may not set it in place (T3) — and
  // alice rotating her own sets a secret only she knows; the old one no longer authenticates.
  v1::RotateCredentialRequest rotate;
  rotate.set_credential_id("alice-reviewer");
  EXPECT_THAT(core_->RotateCredential(admin_, rotate),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("revoke it and issue a new one instead")));
  const Caller alice = Principal("alice-reviewer", "human:alice", Role::kReviewer, {"world"});
  auto rotated = core_->RotateCredential(alice, rotate);
  ASSERT_THAT(rotated, IsOk());
  EXPECT_NE(rotated->secret(), secret);
  EXPECT_THAT(rotated->credential().secret_set_by(),
              EqualsProto(Parse<pb::Address>(R"pb(human_user_id: "alice")pb")));
  EXPECT_THAT(rotated->credential().issued_by(),
              EqualsProto(Parse<pb::Address>(R"pb(service_id: "ops")pb")));
  // Someone else's credential is not its to rotate (as unknown, so nothing leaks).
  const Caller bob = Principal("bob-reviewer", "human:bob", Role::kReviewer, {"world"});
  EXPECT_THAT(core_->RotateCredential(bob, rotate), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(core_->AuthenticateCredential(by_digest), StatusIs(absl::StatusCode::kNotFound));
  by_digest.set_token_sha256(common::server::TokenDigestHex(rotated->secret()));
  EXPECT_THAT(core_->AuthenticateCredential(by_digest), IsOk());

  // Revocation: refused from the next lookup on; idempotent; no rotation afterwards.
  ASSERT_THAT(core_->RevokeCredential(admin_, revoke), IsOk());
  EXPECT_THAT(core_->AuthenticateCredential(by_digest), StatusIs(absl::StatusCode::kNotFound));
  const int64_t revision = Revision();
  auto again = core_->RevokeCredential(admin_, revoke);
  ASSERT_THAT(again, IsOk());
  EXPECT_TRUE(again->credential().has_revoked_at());
  EXPECT_EQ(Revision(), revision);
  EXPECT_THAT(core_->RotateCredential(alice, rotate),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(LastEvent().metadata().fields().at("change").string_value(), "revoked");
}

TEST_F(GrantStoreCoreTest, CredentialRequestsAreValidated) {
  struct Case {
    const char* request;
    const char* field;
  } cases[] = {
      {R"pb(credential_id: " "
            principal { human_user_id: "a" }
            role: CREDENTIAL_ROLE_HOST)pb",
       "credential_id"},
      {R"pb(credential_id: "c" role: CREDENTIAL_ROLE_HOST)pb", "principal"},
      {R"pb(credential_id: "c"
            principal { human_user_id: "a" })pb",
       "role"},
      {R"pb(credential_id: "c"
            principal { service_id: "a" }
            role: CREDENTIAL_ROLE_SERVICE
            scope { namespaces: "w" })pb",
       "scope"},
      {R"pb(credential_id: "c"
            principal { service_id: "a" }
            role: CREDENTIAL_ROLE_HOST
            scope { owners: "alice" })pb",
       "scope.owners[0]"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(core_->IssueCredential(admin_, Parse<v1::IssueCredentialRequest>(c.request)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.field)))
        << c.request;
  }
  v1::AuthenticateCredentialRequest bad;
  bad.set_token_sha256("ABC");
  EXPECT_THAT(core_->AuthenticateCredential(bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("token_sha256")));
}

TEST_F(GrantStoreCoreTest, AuditFailureRollsBackTheWholeResolution) {
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  audit_.FailPreEffect(true);
  EXPECT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
  audit_.FailPreEffect(false);
  EXPECT_EQ(Revision(), 1);
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  EXPECT_EQ(stored->escalation().status(), v1::ESCALATION_RECORD_STATUS_PENDING);
  EXPECT_THAT(core_->GetGrant(Parse<v1::GetGrantRequest>(R"pb(namespace_id: "world"
                                                              grant_id: "grant-id-1")pb")),
              StatusIs(absl::StatusCode::kNotFound));
  auto loaded = core_->LoadAuthority(Load());
  ASSERT_THAT(loaded, IsOk());
  EXPECT_THAT(loaded->grants(), IsEmpty());
}

TEST_F(GrantStoreCoreTest, ListEscalationsFiltersAndPagesOldestFirst) {
  for (const char* id : {"esc-c", "esc-a", "esc-b"}) {
    ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest(id)), IsOk());
  }
  auto deny = Resolve("ESCALATION_DECISION_DENY");
  deny.set_escalation_id("esc-a");
  ASSERT_THAT(core_->ResolveEscalation(alice_, deny), IsOk());

  auto request = Parse<v1::ListEscalationsRequest>(R"pb(namespace_id: "world" page_size: 2)pb");
  auto page1 = core_->ListEscalations(request);
  ASSERT_THAT(page1, IsOk());
  ASSERT_THAT(page1->escalations(), SizeIs(2));
  EXPECT_EQ(page1->escalations(0).escalation_id(), "esc-c");
  EXPECT_EQ(page1->escalations(1).escalation_id(), "esc-a");
  ASSERT_FALSE(page1->next_page_token().empty());
  // A record arriving between pages lands at the end, never shifting a page.
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-d")), IsOk());
  request.set_page_token(page1->next_page_token());
  auto page2 = core_->ListEscalations(request);
  ASSERT_THAT(page2, IsOk());
  ASSERT_THAT(page2->escalations(), SizeIs(2));
  EXPECT_EQ(page2->escalations(0).escalation_id(), "esc-b");
  EXPECT_EQ(page2->escalations(1).escalation_id(), "esc-d");
  EXPECT_EQ(page2->next_page_token(), "");

  auto pending =
      Parse<v1::ListEscalationsRequest>(R"pb(namespace_id: "world"
                                             status: ESCALATION_RECORD_STATUS_PENDING)pb");
  auto pending_page = core_->ListEscalations(pending);
  ASSERT_THAT(pending_page, IsOk());
  std::vector<std::string> ids;
  for (const auto& record : pending_page->escalations()) ids.push_back(record.escalation_id());
  EXPECT_THAT(ids, ElementsAre("esc-c", "esc-b", "esc-d"));
  pending.set_page_token(page1->next_page_token());
  EXPECT_THAT(core_->ListEscalations(pending),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_token")));
  EXPECT_THAT(core_->ListEscalations(Parse<v1::ListEscalationsRequest>(
                  R"pb(namespace_id: "world" status: ESCALATION_RECORD_STATUS_UNSPECIFIED)pb")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("status: unspecified")));
}

TEST_F(GrantStoreCoreTest, EveryControlPlaneEventIsAValidProtocolEvent) {
  IssueOk(Grant("parent", "constraints { delegation_depth: 1 }"));
  ASSERT_THAT(core_->DeriveGrant(admin_, Parse<v1::DeriveGrantRequest>(R"pb(
                                   namespace_id: "world"
                                   parent_grant_id: "parent"
                                   child {
                                     id: "child"
                                     subject { agent_id: "helper" }
                                     capabilities {
                                       resource { namespace: "files" path: "docs" }
                                       actions: "read"
                                       scope: SCOPE_EXACT
                                     }
                                     issued_at { seconds: 1700000100 }
                                   }
                                 )pb")),
              IsOk());
  ASSERT_THAT(
      core_->RevokeGrant(admin_, Parse<v1::RevokeGrantRequest>(R"pb(namespace_id: "world"
                                                                    grant_id: "child")pb")),
      IsOk());
  ASSERT_THAT(core_->PutHostPolicy(admin_, Policy("v1")), IsOk());
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  ASSERT_THAT(core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE")), IsOk());
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-2")), IsOk());
  auto deny = Resolve("ESCALATION_DECISION_DENY");
  deny.set_escalation_id("esc-2");
  ASSERT_THAT(core_->ResolveEscalation(alice_, deny), IsOk());
  EXPECT_THAT(EventTypes(), ElementsAre(audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED,
                                        audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED));
  for (audit::v1::ControlPlaneEvent event : audit_.control_plane_events()) {
    EXPECT_THAT(audit::core::ValidateControlPlaneEvent(&event), IsOk()) << event.DebugString();
    EXPECT_EQ(event.purpose(), "sharedos.control-plane");
    EXPECT_TRUE(event.metadata().fields().contains("revision"));
  }
}

// --- With the identity provider configured (ADR 0020) ---

class IdentityProviderTest : public GrantStoreCoreTest {
 protected:
  void UseIdentityProvider(bool break_glass) {
    GrantStoreCore::Options options;
    options.new_id = [this] { return absl::StrCat("id-", ++ids_); };
    options.identity_provider_configured = true;
    options.allow_reviewer_credentials_with_idp = break_glass;
    core_ = std::make_unique<GrantStoreCore>(*store_, audit_, clock_, options);
  }
  v1::IssueCredentialRequest HumanReviewer() {
    return Parse<v1::IssueCredentialRequest>(R"pb(
      credential_id: "alice-reviewer"
      principal { human_user_id: "alice" }
      role: CREDENTIAL_ROLE_REVIEWER
      scope { namespaces: "world" }
    )pb");
  }
};

TEST_F(IdentityProviderTest, AHumansReviewerCredentialIsNeitherIssuedNorRotated) {
  // Issued before the provider was configured, then the provider is.
  auto issued = core_->IssueCredential(admin_, HumanReviewer());
  ASSERT_THAT(issued, IsOk());
  UseIdentityProvider(/*break_glass=*/false);
  v1::IssueCredentialRequest again = HumanReviewer();
  again.set_credential_id("alice-reviewer-2");
  EXPECT_THAT(core_->IssueCredential(admin_, again),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       ::testing::AllOf(HasSubstr("human:alice"), HasSubstr("identity provider"),
                                        HasSubstr("--allow_reviewer_credentials_with_idp"))));
  v1::RotateCredentialRequest rotate;
  rotate.set_credential_id("alice-reviewer");
  const Caller alice =
      Principal("alice-reviewer", "human:alice", common::server::Role::kReviewer, {"world"});
  EXPECT_THAT(core_->RotateCredential(alice, rotate),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // Other roles and non-human reviewers are not the provider's.
  auto host = Parse<v1::IssueCredentialRequest>(R"pb(
    credential_id: "host-b"
    principal { service_id: "host-b" }
    role: CREDENTIAL_ROLE_HOST
    scope { namespaces: "world" }
  )pb");
  EXPECT_THAT(core_->IssueCredential(admin_, host), IsOk());
  auto admin = Parse<v1::IssueCredentialRequest>(R"pb(
    credential_id: "ops-world"
    principal { human_user_id: "op-2" }
    role: CREDENTIAL_ROLE_ADMIN
    scope { namespaces: "world" }
  )pb");
  EXPECT_THAT(core_->IssueCredential(admin_, admin), IsOk());
}

TEST_F(IdentityProviderTest, BreakGlassIssuesAndItsApprovalIsRecordedAsSuch) {
  UseIdentityProvider(/*break_glass=*/true);
  ASSERT_THAT(core_->IssueCredential(admin_, HumanReviewer()), IsOk());
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  auto resolved = core_->ResolveEscalation(alice_, Resolve("ESCALATION_DECISION_APPROVE"));
  ASSERT_THAT(resolved, IsOk());
  EXPECT_TRUE(resolved->escalation().decided_with().break_glass());
  EXPECT_TRUE(resolved->escalation().decided_with().idp_issuer().empty());
  const audit::v1::ControlPlaneEvent event = LastEvent();
  ASSERT_EQ(event.type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
  EXPECT_TRUE(event.metadata().fields().at("breakGlass").bool_value());
}

TEST_F(IdentityProviderTest, AnApprovalWithTheProvidersTokenNamesItsIssuerAndSubject) {
  UseIdentityProvider(/*break_glass=*/false);
  ASSERT_THAT(core_->RecordEscalation(service_, EscalationRequest("esc-1")), IsOk());
  Caller alice = alice_;
  alice.name = "idp:alice";
  alice.idp_issuer = "https://idp.example.test";
  alice.idp_subject = "0f3a-alice";
  auto resolved = core_->ResolveEscalation(alice, Resolve("ESCALATION_DECISION_APPROVE"));
  ASSERT_THAT(resolved, IsOk());
  const v1::DecisionCredential& with = resolved->escalation().decided_with();
  EXPECT_EQ(with.idp_issuer(), "https://idp.example.test");
  EXPECT_EQ(with.idp_subject(), "0f3a-alice");
  EXPECT_FALSE(with.break_glass());
  auto stored =
      core_->GetEscalation(Parse<v1::GetEscalationRequest>(R"pb(escalation_id: "esc-1")pb"));
  ASSERT_THAT(stored, IsOk());
  EXPECT_EQ(stored->escalation().decided_with().idp_subject(), "0f3a-alice");
  const audit::v1::ControlPlaneEvent event = LastEvent();
  EXPECT_EQ(event.metadata().fields().at("idpIssuer").string_value(), "https://idp.example.test");
  EXPECT_EQ(event.metadata().fields().at("idpSubject").string_value(), "0f3a-alice");
  EXPECT_EQ(event.metadata().fields().count("breakGlass"), 0u);
}

}  // namespace
}  // namespace sharedos::grantstore::core
