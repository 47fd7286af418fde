// The one conformance suite of GrantStore (house style 11): every implementation runs it.
// A backend test defines fixtures deriving from GrantStoreTestBase that implement Create(),
// then instantiates the typed suite:
//
//   class SqliteFileStore : public GrantStoreTestBase { ...Create() override... };
//   using Backends = ::testing::Types<SqliteFileStore, SqliteMemoryStore>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, GrantStoreConformanceTest, Backends);

#ifndef SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_STORE_CONFORMANCE_H_
#define SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_STORE_CONFORMANCE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/proto/deterministic.h"
#include "common/status/proto_matchers.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grantstore_svc/storage/grant_store.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::storage::testing {

// What every backend fixture provides: a fresh, empty store per test.
class GrantStoreTestBase : public ::testing::Test {
 protected:
  virtual absl::StatusOr<std::unique_ptr<GrantStore>> Create() = 0;

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<GrantStore>> store = Create();
    ASSERT_THAT(store, common::IsOk());
    store_ = *std::move(store);
  }

  std::unique_ptr<GrantStore> store_;
};

inline protocol::v1::Address Agent(const std::string& id) {
  protocol::v1::Address address;
  address.set_agent_id(id);
  return address;
}

inline protocol::v1::Address Human(const std::string& id) {
  protocol::v1::Address address;
  address.set_human_user_id(id);
  return address;
}

// A valid root grant: subject agent:<subject>, issuer human:<issuer>, files/<id> read.
inline protocol::v1::CapabilityGrant TestGrant(const std::string& namespace_id,
                                               const std::string& id,
                                               const std::string& subject = "assistant",
                                               const std::string& issuer = "alice") {
  protocol::v1::CapabilityGrant grant;
  grant.set_id(id);
  grant.set_namespace_id(namespace_id);
  *grant.mutable_subject() = Agent(subject);
  *grant.mutable_issuer() = Human(issuer);
  protocol::v1::Capability* capability = grant.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path(id);
  capability->add_actions("read");
  capability->set_scope(protocol::v1::SCOPE_EXACT);
  grant.mutable_constraints();
  grant.mutable_issued_at()->set_seconds(1700000000);
  return grant;
}

// An empty std::optional.
MATCHER(NoValue, "") { return !arg.has_value(); }

inline std::vector<std::string> Ids(const std::vector<protocol::v1::CapabilityGrant>& grants) {
  std::vector<std::string> ids;
  for (const auto& grant : grants) ids.push_back(grant.id());
  return ids;
}

// Commits one transaction inserting `grants`; returns its revision.
inline absl::StatusOr<int64_t> Insert(GrantStore& store,
                                      const std::vector<protocol::v1::CapabilityGrant>& grants) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  if (!txn.ok()) return txn.status();
  for (const auto& grant : grants) {
    absl::Status status = (*txn)->InsertGrant(grant);
    if (!status.ok()) return status;
  }
  const int64_t revision = (*txn)->revision();
  absl::Status status = (*txn)->Commit();
  if (!status.ok()) return status;
  return revision;
}

inline absl::StatusOr<int64_t> Revoke(GrantStore& store, const std::string& namespace_id,
                                      const std::string& id, absl::Time at) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  if (!txn.ok()) return txn.status();
  absl::Status status = (*txn)->RevokeGrant(namespace_id, id, at);
  if (!status.ok()) return status;
  const int64_t revision = (*txn)->revision();
  status = (*txn)->Commit();
  if (!status.ok()) return status;
  return revision;
}

inline grantstore::v1::HostPolicy TestPolicy(const std::string& namespace_id,
                                             const std::string& version,
                                             const std::string& rule_id = "no-secrets") {
  grantstore::v1::HostPolicy policy;
  policy.set_namespace_id(namespace_id);
  policy.set_version(version);
  grantstore::v1::HostPolicyRule* rule = policy.add_rules();
  rule->set_id(rule_id);
  rule->set_resource_namespace("files");
  rule->add_path("secrets");
  rule->set_scope(protocol::v1::SCOPE_DESCENDANTS);
  return policy;
}

inline absl::StatusOr<int64_t> PutPolicy(GrantStore& store,
                                         const grantstore::v1::HostPolicy& policy) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  if (!txn.ok()) return txn.status();
  absl::Status status = (*txn)->PutHostPolicy(policy);
  if (!status.ok()) return status;
  const int64_t revision = (*txn)->revision();
  status = (*txn)->Commit();
  if (!status.ok()) return status;
  return revision;
}

inline grantstore::v1::EscalationRecord TestEscalation(const std::string& namespace_id,
                                                       const std::string& id) {
  grantstore::v1::EscalationRecord record;
  record.set_escalation_id(id);
  record.set_namespace_id(namespace_id);
  record.set_execution_id(absl::StrCat("exec-", id));
  record.mutable_escalation()->set_reason("needs write access");
  *record.mutable_escalation()->mutable_reviewer() = Human("alice");
  record.mutable_escalation()->mutable_requested_at()->set_seconds(1700000000);
  record.mutable_escalation()->set_status(protocol::v1::ESCALATION_STATUS_PENDING);
  record.set_status(grantstore::v1::ESCALATION_RECORD_STATUS_PENDING);
  return record;
}

inline absl::StatusOr<int64_t> RecordEscalation(GrantStore& store,
                                                const grantstore::v1::EscalationRecord& record) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  if (!txn.ok()) return txn.status();
  absl::Status status = (*txn)->InsertEscalation(record);
  if (!status.ok()) return status;
  const int64_t revision = (*txn)->revision();
  status = (*txn)->Commit();
  if (!status.ok()) return status;
  return revision;
}

template <typename Fixture>
class GrantStoreConformanceTest : public Fixture {};

TYPED_TEST_SUITE_P(GrantStoreConformanceTest);

using ::sharedos::common::EqualsProto;
using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

TYPED_TEST_P(GrantStoreConformanceTest, EmptyStoreIsAtRevisionZero) {
  GrantStore& store = *this->store_;
  EXPECT_THAT(store.CurrentRevision(), IsOkAndHolds(0));
  absl::StatusOr<AuthoritySnapshot> snapshot =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 10);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_EQ(snapshot->revision, 0);
  EXPECT_THAT(snapshot->grants, IsEmpty());
  EXPECT_FALSE(snapshot->host_policy.has_value());
  EXPECT_THAT(store.GetGrant("ns", "g1", std::nullopt), IsOkAndHolds(NoValue()));
  EXPECT_THAT(store.GetHostPolicy("ns"), IsOkAndHolds(NoValue()));
}

TYPED_TEST_P(GrantStoreConformanceTest, EachCommitTakesTheNextRevision) {
  GrantStore& store = *this->store_;
  EXPECT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  EXPECT_THAT(Insert(store, {TestGrant("ns", "g2")}), IsOkAndHolds(2));
  EXPECT_THAT(PutPolicy(store, TestPolicy("ns", "v1")), IsOkAndHolds(3));
  EXPECT_THAT(RecordEscalation(store, TestEscalation("ns", "e1")), IsOkAndHolds(4));
  EXPECT_THAT(Revoke(store, "ns", "g1", absl::FromUnixSeconds(1700000100)), IsOkAndHolds(5));
  EXPECT_THAT(store.CurrentRevision(), IsOkAndHolds(5));

  absl::StatusOr<std::optional<StoredGrant>> stored = store.GetGrant("ns", "g2", std::nullopt);
  ASSERT_THAT(stored, IsOk());
  ASSERT_TRUE(stored->has_value());
  EXPECT_THAT((*stored)->grant, EqualsProto(TestGrant("ns", "g2")));
  EXPECT_EQ((*stored)->issued_revision, 2);
  EXPECT_FALSE((*stored)->revoked_revision.has_value());
}

TYPED_TEST_P(GrantStoreConformanceTest, UncommittedTransactionLeavesNoTrace) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
    ASSERT_THAT(txn, IsOk());
    EXPECT_EQ((*txn)->revision(), 2);
    ASSERT_THAT((*txn)->InsertGrant(TestGrant("ns", "g2")), IsOk());
    ASSERT_THAT((*txn)->RevokeGrant("ns", "g1", absl::FromUnixSeconds(1700000100)), IsOk());
    ASSERT_THAT((*txn)->PutHostPolicy(TestPolicy("ns", "v1")), IsOk());
    ASSERT_THAT((*txn)->InsertEscalation(TestEscalation("ns", "e1")), IsOk());
    ASSERT_THAT((*txn)->PutIdempotencyKey("key-1", {"ns", "g2"}), IsOk());
    // Reads inside the transaction see its own writes.
    absl::StatusOr<std::optional<StoredGrant>> inside = (*txn)->GetGrant("ns", "g2");
    ASSERT_THAT(inside, IsOk());
    EXPECT_TRUE(inside->has_value());
  }  // Destroyed without Commit: rolled back.
  EXPECT_THAT(store.CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT(store.GetGrant("ns", "g2", std::nullopt), IsOkAndHolds(NoValue()));
  absl::StatusOr<std::optional<StoredGrant>> g1 = store.GetGrant("ns", "g1", std::nullopt);
  ASSERT_THAT(g1, IsOk());
  ASSERT_TRUE(g1->has_value());
  EXPECT_FALSE((*g1)->grant.has_revoked_at());
  EXPECT_THAT(store.GetHostPolicy("ns"), IsOkAndHolds(NoValue()));
  EXPECT_THAT(store.GetEscalation("e1"), IsOkAndHolds(NoValue()));
  // The next transaction reuses the revision the abandoned one would have taken.
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  ASSERT_THAT(txn, IsOk());
  EXPECT_EQ((*txn)->revision(), 2);
  EXPECT_THAT((*txn)->GetIdempotencyKey("key-1"), IsOkAndHolds(NoValue()));
}

// docs/adr/0021: a write transaction announces its revision durably before it returns from
// BeginWrite (so before any control-plane record of it is written), and the announcement outlives
// a transaction that never commits: a revision the audit log holds but the store never committed
// is told apart from a restore. After commits, the announcement is the store's revision.
TYPED_TEST_P(GrantStoreConformanceTest, AnAbandonedWriteLeavesItsRevisionAnnounced) {
  GrantStore& store = *this->store_;
  EXPECT_THAT(store.AnnouncedRevision(), IsOkAndHolds(0));
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  EXPECT_THAT(store.AnnouncedRevision(), IsOkAndHolds(1));
  {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
    ASSERT_THAT(txn, IsOk());
    EXPECT_EQ((*txn)->revision(), 2);
    ASSERT_THAT((*txn)->InsertGrant(TestGrant("ns", "g2")), IsOk());
  }  // Destroyed without Commit: rolled back, as a process killed before its commit.
  EXPECT_THAT(store.CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT(store.AnnouncedRevision(), IsOkAndHolds(2));
  // The next change takes revision 2 again; once committed, nothing is announced beyond it.
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g3")}), IsOkAndHolds(2));
  EXPECT_THAT(store.AnnouncedRevision(), IsOkAndHolds(2));
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g4")}), IsOkAndHolds(3));
  EXPECT_THAT(store.AnnouncedRevision(), IsOkAndHolds(3));
}

TYPED_TEST_P(GrantStoreConformanceTest, GrantIdsAreNeverReusedEvenAfterRevocation) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOk());
  EXPECT_THAT(Insert(store, {TestGrant("ns", "g1", "other-agent")}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("g1")));
  ASSERT_THAT(Revoke(store, "ns", "g1", absl::FromUnixSeconds(1700000100)), IsOk());
  EXPECT_THAT(Insert(store, {TestGrant("ns", "g1")}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("g1")));
  // Ids are per namespace.
  EXPECT_THAT(Insert(store, {TestGrant("other-ns", "g1")}), IsOkAndHolds(3));
  EXPECT_THAT(store.CurrentRevision(), IsOkAndHolds(3));
}

TYPED_TEST_P(GrantStoreConformanceTest, RevocationIsRecordedWithItsRevisionAndTime) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  const absl::Time revoked_at = absl::FromUnixSeconds(1700000100) + absl::Nanoseconds(250);
  ASSERT_THAT(Revoke(store, "ns", "g1", revoked_at), IsOkAndHolds(2));
  absl::StatusOr<std::optional<StoredGrant>> latest = store.GetGrant("ns", "g1", std::nullopt);
  ASSERT_THAT(latest, IsOk());
  ASSERT_TRUE(latest->has_value());
  EXPECT_EQ((*latest)->revoked_revision, std::optional<int64_t>(2));
  EXPECT_EQ((*latest)->grant.revoked_at().seconds(), 1700000100);
  EXPECT_EQ((*latest)->grant.revoked_at().nanos(), 250);
  // As of revision 1 the grant was live.
  absl::StatusOr<std::optional<StoredGrant>> before = store.GetGrant("ns", "g1", 1);
  ASSERT_THAT(before, IsOk());
  ASSERT_TRUE(before->has_value());
  EXPECT_THAT((*before)->grant, EqualsProto(TestGrant("ns", "g1")));
  EXPECT_FALSE((*before)->revoked_revision.has_value());
  // Not issued yet at revision 0.
  EXPECT_THAT(store.GetGrant("ns", "g1", 0), IsOkAndHolds(NoValue()));

  EXPECT_THAT(Revoke(store, "ns", "g1", revoked_at),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already revoked")));
  EXPECT_THAT(Revoke(store, "ns", "missing", revoked_at),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing")));
}

TYPED_TEST_P(GrantStoreConformanceTest,
             LoadAuthorityReturnsExactlyTheActorsGrantsFromTheAuthority) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "z-first"), TestGrant("ns", "other-subject", "bob"),
                             TestGrant("ns", "other-issuer", "assistant", "carol"),
                             TestGrant("other-ns", "other-namespace")}),
              IsOk());
  ASSERT_THAT(Insert(store, {TestGrant("ns", "a-second")}), IsOk());
  ASSERT_THAT(Insert(store, {TestGrant("ns", "m-revoked")}), IsOk());
  ASSERT_THAT(Revoke(store, "ns", "m-revoked", absl::FromUnixSeconds(1700000100)), IsOk());
  protocol::v1::Address same_id_other_kind;
  same_id_other_kind.set_service_id("assistant");
  ASSERT_THAT(Insert(store, {[&] {
                       auto grant = TestGrant("ns", "service-subject");
                       *grant.mutable_subject() = same_id_other_kind;
                       return grant;
                     }()}),
              IsOk());

  absl::StatusOr<AuthoritySnapshot> snapshot =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 10);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_EQ(snapshot->revision, 5);
  // Issue order, not id order; revoked grants are not part of the authority.
  EXPECT_THAT(Ids(snapshot->grants), ElementsAre("z-first", "a-second"));
  EXPECT_THAT(snapshot->grants[0], EqualsProto(TestGrant("ns", "z-first")));
}

TYPED_TEST_P(GrantStoreConformanceTest, LoadAuthorityAtARevisionIsTheSameSnapshotForever) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1"), TestGrant("ns", "g2")}), IsOk());
  ASSERT_THAT(PutPolicy(store, TestPolicy("ns", "v1")), IsOk());
  absl::StatusOr<AuthoritySnapshot> at_r =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 10);
  ASSERT_THAT(at_r, IsOk());
  const int64_t r = at_r->revision;
  ASSERT_EQ(r, 2);

  // Mutate everything the snapshot covers.
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g3")}), IsOk());
  ASSERT_THAT(Revoke(store, "ns", "g1", absl::FromUnixSeconds(1700000100)), IsOk());
  ASSERT_THAT(PutPolicy(store, TestPolicy("ns", "v2", "another-rule")), IsOk());

  absl::StatusOr<AuthoritySnapshot> again =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), r, 10);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->revision, r);
  ASSERT_EQ(again->grants.size(), at_r->grants.size());
  for (size_t i = 0; i < again->grants.size(); ++i) {
    EXPECT_EQ(common::DeterministicBytes(again->grants[i]),
              common::DeterministicBytes(at_r->grants[i]));
  }
  ASSERT_TRUE(again->host_policy.has_value());
  EXPECT_EQ(common::DeterministicBytes(*again->host_policy),
            common::DeterministicBytes(*at_r->host_policy));

  absl::StatusOr<AuthoritySnapshot> latest =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 10);
  ASSERT_THAT(latest, IsOk());
  EXPECT_EQ(latest->revision, 5);
  EXPECT_THAT(Ids(latest->grants), ElementsAre("g2", "g3"));
  ASSERT_TRUE(latest->host_policy.has_value());
  EXPECT_EQ(latest->host_policy->version(), "v2");
  // Before any policy: absent.
  absl::StatusOr<AuthoritySnapshot> first =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), 1, 10);
  ASSERT_THAT(first, IsOk());
  EXPECT_FALSE(first->host_policy.has_value());
  EXPECT_THAT(Ids(first->grants), ElementsAre("g1", "g2"));
}

TYPED_TEST_P(GrantStoreConformanceTest, EachRevisionSeesItsOwnAuthority) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g2")}), IsOkAndHolds(2));
  ASSERT_THAT(Revoke(store, "ns", "g1", absl::FromUnixSeconds(1700000100)), IsOkAndHolds(3));
  const std::vector<std::vector<std::string>> expected = {{}, {"g1"}, {"g1", "g2"}, {"g2"}};
  for (int64_t revision = 0; revision <= 3; ++revision) {
    absl::StatusOr<AuthoritySnapshot> snapshot =
        store.LoadAuthority("ns", Agent("assistant"), Human("alice"), revision, 10);
    ASSERT_THAT(snapshot, IsOk());
    EXPECT_EQ(snapshot->revision, revision);
    EXPECT_EQ(Ids(snapshot->grants), expected[revision]) << "at revision " << revision;
  }
}

TYPED_TEST_P(GrantStoreConformanceTest, RevisionsAheadOfTheStoreAreRefused) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOk());
  EXPECT_THAT(store.LoadAuthority("ns", Agent("assistant"), Human("alice"), 2, 10),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("at_revision 2")));
  EXPECT_THAT(store.LoadAuthority("ns", Agent("assistant"), Human("alice"), -1, 10),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("at_revision -1")));
  EXPECT_THAT(store.GetGrant("ns", "g1", 7),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("revision 1")));
}

TYPED_TEST_P(GrantStoreConformanceTest, LoadAuthorityReturnsAtMostTheLimit) {
  GrantStore& store = *this->store_;
  std::vector<protocol::v1::CapabilityGrant> grants;
  for (int i = 0; i < 5; ++i) grants.push_back(TestGrant("ns", absl::StrCat("g", i)));
  ASSERT_THAT(Insert(store, grants), IsOk());
  absl::StatusOr<AuthoritySnapshot> snapshot =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 3);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_THAT(Ids(snapshot->grants), ElementsAre("g0", "g1", "g2"));
}

// An actor's grants of one revision read back in the order they were inserted, not by id, both
// alone and between other actors' grants of the same revision (docs/adr/0025: the rows are
// clustered by actor, and issue order is kept within a revision).
TYPED_TEST_P(GrantStoreConformanceTest, OneRevisionsGrantsLoadInInsertionOrder) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "m"), TestGrant("ns", "other-1", "bob"),
                             TestGrant("ns", "z"), TestGrant("ns", "other-2", "bob"),
                             TestGrant("ns", "a"), TestGrant("ns", "other-3", "bob")}),
              IsOkAndHolds(1));
  ASSERT_THAT(Insert(store, {TestGrant("ns", "b"), TestGrant("ns", "0")}), IsOkAndHolds(2));
  absl::StatusOr<AuthoritySnapshot> snapshot =
      store.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 10);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_THAT(Ids(snapshot->grants), ElementsAre("m", "z", "a", "b", "0"));
  snapshot = store.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 2);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_THAT(Ids(snapshot->grants), ElementsAre("m", "z"));
  snapshot = store.LoadAuthority("ns", Agent("bob"), Human("alice"), 1, 10);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_THAT(Ids(snapshot->grants), ElementsAre("other-1", "other-2", "other-3"));
  // The id stays unique in its namespace whatever the actor.
  EXPECT_THAT(Insert(store, {TestGrant("ns", "z", "bob", "carol")}),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("\"z\"")));
}

TYPED_TEST_P(GrantStoreConformanceTest, ListGrantsFiltersAndPagesInIdOrder) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(
      Insert(store, {TestGrant("ns", "c"), TestGrant("ns", "a"), TestGrant("ns", "b", "bob"),
                     TestGrant("ns", "d", "assistant", "carol"), TestGrant("other", "e")}),
      IsOk());
  ASSERT_THAT(Revoke(store, "ns", "c", absl::FromUnixSeconds(1700000100)), IsOk());

  GrantQuery query;
  query.namespace_id = "ns";
  absl::StatusOr<std::vector<protocol::v1::CapabilityGrant>> live = store.ListGrants(query);
  ASSERT_THAT(live, IsOk());
  EXPECT_THAT(Ids(*live), ElementsAre("a", "b", "d"));

  query.include_revoked = true;
  absl::StatusOr<std::vector<protocol::v1::CapabilityGrant>> all = store.ListGrants(query);
  ASSERT_THAT(all, IsOk());
  EXPECT_THAT(Ids(*all), ElementsAre("a", "b", "c", "d"));
  EXPECT_TRUE((*all)[2].has_revoked_at());

  query.limit = 2;
  query.after_grant_id = "a";
  absl::StatusOr<std::vector<protocol::v1::CapabilityGrant>> page = store.ListGrants(query);
  ASSERT_THAT(page, IsOk());
  EXPECT_THAT(Ids(*page), ElementsAre("b", "c"));

  GrantQuery by_subject;
  by_subject.namespace_id = "ns";
  by_subject.subject = Agent("assistant");
  by_subject.issuer = Human("alice");
  absl::StatusOr<std::vector<protocol::v1::CapabilityGrant>> filtered =
      store.ListGrants(by_subject);
  ASSERT_THAT(filtered, IsOk());
  EXPECT_THAT(Ids(*filtered), ElementsAre("a"));
}

TYPED_TEST_P(GrantStoreConformanceTest, CheckRevocationsReportsRevokedAndUnknownIds) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "live"), TestGrant("ns", "gone")}), IsOk());
  ASSERT_THAT(Revoke(store, "ns", "gone", absl::FromUnixSeconds(1700000100)), IsOk());
  const std::vector<std::string> ids = {"unknown", "live", "gone", "gone"};
  absl::StatusOr<RevocationCheck> check = store.CheckRevocations("ns", ids);
  ASSERT_THAT(check, IsOk());
  EXPECT_EQ(check->revision, 2);
  EXPECT_THAT(check->revoked_grant_ids, ElementsAre("unknown", "gone"));
  // Namespaced: a live id in another namespace is unknown here.
  const std::vector<std::string> other = {"live"};
  absl::StatusOr<RevocationCheck> elsewhere = store.CheckRevocations("other", other);
  ASSERT_THAT(elsewhere, IsOk());
  EXPECT_THAT(elsewhere->revoked_grant_ids, ElementsAre("live"));
}

TYPED_TEST_P(GrantStoreConformanceTest, TryConsumeSpendsExactlyMaxUsesAndNeverRefunds) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOk());
  EXPECT_THAT(store.GetUsage("ns", "g1"), IsOkAndHolds(0));
  for (int i = 1; i <= 3; ++i) {
    absl::StatusOr<ConsumeResult> result = store.TryConsume("ns", "g1", 3);
    ASSERT_THAT(result, IsOk());
    EXPECT_TRUE(result->consumed);
    EXPECT_EQ(result->uses, i);
  }
  absl::StatusOr<ConsumeResult> spent = store.TryConsume("ns", "g1", 3);
  ASSERT_THAT(spent, IsOk());
  EXPECT_FALSE(spent->consumed);
  EXPECT_EQ(spent->uses, 3);
  // A smaller bound never gives uses back.
  absl::StatusOr<ConsumeResult> smaller = store.TryConsume("ns", "g1", 1);
  ASSERT_THAT(smaller, IsOk());
  EXPECT_FALSE(smaller->consumed);
  EXPECT_EQ(smaller->uses, 3);
  EXPECT_THAT(store.GetUsage("ns", "g1"), IsOkAndHolds(3));
  // Usage takes no revision.
  EXPECT_THAT(store.CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT(store.TryConsume("ns", "missing", 3),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing")));
  EXPECT_THAT(store.TryConsume("other-ns", "g1", 3), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store.GetUsage("ns", "missing"), StatusIs(absl::StatusCode::kNotFound));
}

TYPED_TEST_P(GrantStoreConformanceTest, ConcurrentTryConsumeSucceedsExactlyMaxUsesTimes) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(Insert(store, {TestGrant("ns", "g1")}), IsOk());
  constexpr int kThreads = 8;
  constexpr int kAttempts = 40;
  constexpr int kMaxUses = 100;
  std::atomic<int> consumed{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kAttempts; ++i) {
        absl::StatusOr<ConsumeResult> result = store.TryConsume("ns", "g1", kMaxUses);
        if (!result.ok()) {
          failures.fetch_add(1);
        } else if (result->consumed) {
          consumed.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(consumed.load(), kMaxUses);
  EXPECT_THAT(store.GetUsage("ns", "g1"), IsOkAndHolds(kMaxUses));
}

TYPED_TEST_P(GrantStoreConformanceTest, IdempotencyKeysAreUniqueAndTransactional) {
  GrantStore& store = *this->store_;
  {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
    ASSERT_THAT(txn, IsOk());
    EXPECT_THAT((*txn)->GetIdempotencyKey("key-1"), IsOkAndHolds(NoValue()));
    ASSERT_THAT((*txn)->InsertGrant(TestGrant("ns", "g1")), IsOk());
    ASSERT_THAT((*txn)->PutIdempotencyKey("key-1", {"ns", "g1"}), IsOk());
    ASSERT_THAT((*txn)->Commit(), IsOk());
  }
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  ASSERT_THAT(txn, IsOk());
  absl::StatusOr<std::optional<IdempotencyEntry>> entry = (*txn)->GetIdempotencyKey("key-1");
  ASSERT_THAT(entry, IsOk());
  ASSERT_TRUE(entry->has_value());
  EXPECT_EQ((*entry)->namespace_id, "ns");
  EXPECT_EQ((*entry)->grant_id, "g1");
  EXPECT_THAT((*txn)->PutIdempotencyKey("key-1", {"ns", "g2"}),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TYPED_TEST_P(GrantStoreConformanceTest, HostPoliciesAreVersionedByRevision) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(PutPolicy(store, TestPolicy("ns", "v1")), IsOkAndHolds(1));
  ASSERT_THAT(PutPolicy(store, TestPolicy("other", "v9")), IsOkAndHolds(2));
  ASSERT_THAT(PutPolicy(store, TestPolicy("ns", "v2", "rule-2")), IsOkAndHolds(3));
  absl::StatusOr<std::optional<StoredHostPolicy>> latest = store.GetHostPolicy("ns");
  ASSERT_THAT(latest, IsOk());
  ASSERT_TRUE(latest->has_value());
  EXPECT_THAT((*latest)->policy, EqualsProto(TestPolicy("ns", "v2", "rule-2")));
  EXPECT_EQ((*latest)->revision, 3);

  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  ASSERT_THAT(txn, IsOk());
  EXPECT_THAT((*txn)->HostPolicyVersionUsed("ns", "v1"), IsOkAndHolds(true));
  EXPECT_THAT((*txn)->HostPolicyVersionUsed("ns", "v9"), IsOkAndHolds(false));
  EXPECT_THAT((*txn)->HostPolicyVersionUsed("other", "v9"), IsOkAndHolds(true));
  absl::StatusOr<std::optional<StoredHostPolicy>> current = (*txn)->GetHostPolicy("ns");
  ASSERT_THAT(current, IsOk());
  ASSERT_TRUE(current->has_value());
  EXPECT_EQ((*current)->policy.version(), "v2");
}

TYPED_TEST_P(GrantStoreConformanceTest, EscalationsAreRecordedListedOldestFirstAndResolvedOnce) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(RecordEscalation(store, TestEscalation("ns", "e-b")), IsOkAndHolds(1));
  ASSERT_THAT(RecordEscalation(store, TestEscalation("other", "e-x")), IsOkAndHolds(2));
  ASSERT_THAT(RecordEscalation(store, TestEscalation("ns", "e-a")), IsOkAndHolds(3));
  ASSERT_THAT(RecordEscalation(store, TestEscalation("ns", "e-c")), IsOkAndHolds(4));
  EXPECT_THAT(RecordEscalation(store, TestEscalation("ns", "e-a")),
              StatusIs(absl::StatusCode::kAlreadyExists));

  absl::StatusOr<std::optional<StoredEscalation>> stored = store.GetEscalation("e-a");
  ASSERT_THAT(stored, IsOk());
  ASSERT_TRUE(stored->has_value());
  grantstore::v1::EscalationRecord expected = TestEscalation("ns", "e-a");
  expected.set_recorded_revision(3);
  EXPECT_THAT((*stored)->record, EqualsProto(expected));
  EXPECT_EQ((*stored)->resolution_fingerprint, "");

  // Resolve e-a (denied).
  {
    grantstore::v1::EscalationRecord resolved = expected;
    resolved.set_status(grantstore::v1::ESCALATION_RECORD_STATUS_DENIED);
    *resolved.mutable_reviewer() = Human("alice");
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
    ASSERT_THAT(txn, IsOk());
    ASSERT_THAT((*txn)->ResolveEscalation(resolved, "fingerprint-1"), IsOk());
    ASSERT_THAT((*txn)->Commit(), IsOk());
  }
  {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
    ASSERT_THAT(txn, IsOk());
    grantstore::v1::EscalationRecord again = expected;
    again.set_status(grantstore::v1::ESCALATION_RECORD_STATUS_APPROVED);
    EXPECT_THAT((*txn)->ResolveEscalation(again, "fingerprint-2"),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already resolved")));
    grantstore::v1::EscalationRecord missing = TestEscalation("ns", "missing");
    EXPECT_THAT((*txn)->ResolveEscalation(missing, "f"), StatusIs(absl::StatusCode::kNotFound));
  }
  stored = store.GetEscalation("e-a");
  ASSERT_THAT(stored, IsOk());
  ASSERT_TRUE(stored->has_value());
  EXPECT_EQ((*stored)->record.status(), grantstore::v1::ESCALATION_RECORD_STATUS_DENIED);
  EXPECT_EQ((*stored)->resolution_fingerprint, "fingerprint-1");

  EscalationQuery query;
  query.namespace_id = "ns";
  auto ids = [&](const EscalationQuery& q) {
    std::vector<std::string> out;
    absl::StatusOr<std::vector<grantstore::v1::EscalationRecord>> records =
        store.ListEscalations(q);
    EXPECT_THAT(records, IsOk());
    if (records.ok()) {
      for (const auto& record : *records) out.push_back(record.escalation_id());
    }
    return out;
  };
  EXPECT_THAT(ids(query), ElementsAre("e-b", "e-a", "e-c"));
  query.status = grantstore::v1::ESCALATION_RECORD_STATUS_PENDING;
  EXPECT_THAT(ids(query), ElementsAre("e-b", "e-c"));
  query.status.reset();
  query.after_recorded_revision = 1;
  query.limit = 1;
  EXPECT_THAT(ids(query), ElementsAre("e-a"));
}

inline StoredCredential TestCredential(const std::string& id, const std::string& digest) {
  StoredCredential stored;
  stored.credential.set_credential_id(id);
  stored.credential.mutable_principal()->set_human_user_id("user-" + id);
  stored.credential.set_role(grantstore::v1::CREDENTIAL_ROLE_REVIEWER);
  stored.credential.mutable_scope()->add_namespaces("ns");
  stored.token_sha256 = digest;
  return stored;
}

// Writes `credential` in one committed transaction (insert or update) and answers its revision.
inline absl::StatusOr<int64_t> WriteCredential(GrantStore& store, const StoredCredential& stored,
                                               bool update) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  if (!txn.ok()) return txn.status();
  const int64_t revision = (*txn)->revision();
  absl::Status written =
      update ? (*txn)->UpdateCredential(stored) : (*txn)->InsertCredential(stored);
  if (!written.ok()) return written;
  absl::Status committed = (*txn)->Commit();
  if (!committed.ok()) return committed;
  return revision;
}

TYPED_TEST_P(GrantStoreConformanceTest, CredentialsAreFoundByDigestRotatedAndRevoked) {
  GrantStore& store = *this->store_;
  const std::string d1(64, 'a'), d2(64, 'b'), d3(64, 'c');
  ASSERT_THAT(WriteCredential(store, TestCredential("cred-b", d1), false), IsOkAndHolds(1));
  ASSERT_THAT(WriteCredential(store, TestCredential("cred-a", d2), false), IsOkAndHolds(2));
  // An id or a digest is never taken twice.
  EXPECT_THAT(WriteCredential(store, TestCredential("cred-a", d3), false),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(WriteCredential(store, TestCredential("cred-c", d1), false),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(WriteCredential(store, TestCredential("cred-z", d3), true),
              StatusIs(absl::StatusCode::kNotFound));

  absl::StatusOr<std::optional<StoredCredential>> found = store.FindCredentialByDigest(d1);
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  grantstore::v1::Credential expected = TestCredential("cred-b", d1).credential;
  expected.set_revision(1);
  EXPECT_THAT((*found)->credential, EqualsProto(expected));
  EXPECT_EQ((*found)->token_sha256, d1);

  // Rotation: the old digest finds nothing from the next read on.
  ASSERT_THAT(WriteCredential(store, TestCredential("cred-b", d3), true), IsOkAndHolds(3));
  EXPECT_THAT(store.FindCredentialByDigest(d1), IsOkAndHolds(NoValue()));
  found = store.FindCredentialByDigest(d3);
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->credential.revision(), 3);
  // Rotating onto another credential's digest is refused.
  EXPECT_THAT(WriteCredential(store, TestCredential("cred-b", d2), true),
              StatusIs(absl::StatusCode::kAlreadyExists));

  // Revocation is stored on the credential; List leaves revoked ones out unless asked.
  StoredCredential revoked = TestCredential("cred-a", d2);
  revoked.credential.mutable_revoked_at()->set_seconds(1700000000);
  ASSERT_THAT(WriteCredential(store, revoked, true), IsOk());
  found = store.FindCredentialByDigest(d2);
  ASSERT_THAT(found, IsOk());
  ASSERT_TRUE(found->has_value());
  EXPECT_TRUE((*found)->credential.has_revoked_at());
  auto ids = [&](const CredentialQuery& q) {
    std::vector<std::string> out;
    absl::StatusOr<std::vector<grantstore::v1::Credential>> listed = store.ListCredentials(q);
    EXPECT_THAT(listed, IsOk());
    if (listed.ok()) {
      for (const auto& c : *listed) out.push_back(c.credential_id());
    }
    return out;
  };
  CredentialQuery query;
  EXPECT_THAT(ids(query), ElementsAre("cred-b"));
  query.include_revoked = true;
  EXPECT_THAT(ids(query), ElementsAre("cred-a", "cred-b"));
  query.after_credential_id = "cred-a";
  query.limit = 1;
  EXPECT_THAT(ids(query), ElementsAre("cred-b"));

  // An uncommitted write leaves no trace.
  {
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
    ASSERT_THAT(txn, IsOk());
    ASSERT_THAT((*txn)->InsertCredential(TestCredential("cred-x", std::string(64, 'd'))), IsOk());
  }
  EXPECT_THAT(store.FindCredentialByDigest(std::string(64, 'd')), IsOkAndHolds(NoValue()));
}

// A resolution's note is part of the record: read back exactly (newlines, non-ASCII text) by
// GetEscalation and ListEscalations, and a record resolved without one reads back without one.
TYPED_TEST_P(GrantStoreConformanceTest, AResolutionNoteIsStoredWithTheEscalation) {
  GrantStore& store = *this->store_;
  ASSERT_THAT(RecordEscalation(store, TestEscalation("ns", "e-noted")), IsOkAndHolds(1));
  ASSERT_THAT(RecordEscalation(store, TestEscalation("ns", "e-plain")), IsOkAndHolds(2));
  const std::string note = "Not this week.\nAsk J\xc3\xbcrgen \xe2\x80\x94 he owns reports.";
  for (const char* id : {"e-noted", "e-plain"}) {
    absl::StatusOr<std::optional<StoredEscalation>> pending = store.GetEscalation(id);
    ASSERT_THAT(pending, IsOk());
    ASSERT_TRUE(pending->has_value());
    grantstore::v1::EscalationRecord resolved = (*pending)->record;
    resolved.set_status(grantstore::v1::ESCALATION_RECORD_STATUS_DENIED);
    if (resolved.escalation_id() == "e-noted") resolved.set_note(note);
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
    ASSERT_THAT(txn, IsOk());
    ASSERT_THAT((*txn)->ResolveEscalation(resolved, "fingerprint"), IsOk());
    ASSERT_THAT((*txn)->Commit(), IsOk());
  }
  absl::StatusOr<std::optional<StoredEscalation>> stored = store.GetEscalation("e-noted");
  ASSERT_THAT(stored, IsOk());
  ASSERT_TRUE(stored->has_value());
  EXPECT_EQ((*stored)->record.note(), note);
  EXPECT_EQ((*stored)->record.status(), grantstore::v1::ESCALATION_RECORD_STATUS_DENIED);
  EscalationQuery query;
  query.namespace_id = "ns";
  absl::StatusOr<std::vector<grantstore::v1::EscalationRecord>> listed =
      store.ListEscalations(query);
  ASSERT_THAT(listed, IsOk());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].escalation_id(), "e-noted");
  EXPECT_EQ((*listed)[0].note(), note);
  EXPECT_EQ((*listed)[1].escalation_id(), "e-plain");
  EXPECT_EQ((*listed)[1].note(), "");
}

REGISTER_TYPED_TEST_SUITE_P(
    GrantStoreConformanceTest, EmptyStoreIsAtRevisionZero, EachCommitTakesTheNextRevision,
    UncommittedTransactionLeavesNoTrace, AnAbandonedWriteLeavesItsRevisionAnnounced,
    GrantIdsAreNeverReusedEvenAfterRevocation, RevocationIsRecordedWithItsRevisionAndTime,
    LoadAuthorityReturnsExactlyTheActorsGrantsFromTheAuthority,
    LoadAuthorityAtARevisionIsTheSameSnapshotForever, EachRevisionSeesItsOwnAuthority,
    RevisionsAheadOfTheStoreAreRefused, LoadAuthorityReturnsAtMostTheLimit,
    OneRevisionsGrantsLoadInInsertionOrder, ListGrantsFiltersAndPagesInIdOrder,
    CheckRevocationsReportsRevokedAndUnknownIds, TryConsumeSpendsExactlyMaxUsesAndNeverRefunds,
    ConcurrentTryConsumeSucceedsExactlyMaxUsesTimes, IdempotencyKeysAreUniqueAndTransactional,
    HostPoliciesAreVersionedByRevision, EscalationsAreRecordedListedOldestFirstAndResolvedOnce,
    AResolutionNoteIsStoredWithTheEscalation, CredentialsAreFoundByDigestRotatedAndRevoked);

}  // namespace sharedos::grantstore::storage::testing

#endif  // SHAREDOS_GRANTSTORE_SVC_STORAGE_GRANT_STORE_CONFORMANCE_H_
