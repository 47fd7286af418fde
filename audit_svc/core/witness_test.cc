#include "audit_svc/core/witness.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sharedos::audit::core {
namespace {

using ::google::protobuf::util::TimeUtil;
using ::sharedos::audit::v1::SignedCheckpoint;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TestPath(const std::string& suffix) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name(), suffix);
}

std::unique_ptr<CheckpointKey> NewSigner(const std::string& suffix) {
  const std::string path = TestPath(suffix);
  EXPECT_THAT(testing::WriteNewEd25519Key(path), IsOk());
  auto key = CheckpointKey::ReadPrivateKeyFile(path, "key");
  EXPECT_THAT(key, IsOk());
  return key.ok() ? *std::move(key) : nullptr;
}

std::unique_ptr<CheckpointKey> PublicHalf(const CheckpointKey& key) {
  auto pub = CheckpointKey::ParsePublicKeyPem(key.public_key_pem(), "pem");
  EXPECT_THAT(pub, IsOk());
  return pub.ok() ? *std::move(pub) : nullptr;
}

std::string Hash(char c) { return std::string(64, c); }

SignedCheckpoint Signed(const CheckpointKey& key, int64_t sequence, const std::string& hash) {
  SignedCheckpoint checkpoint;
  checkpoint.set_sequence(sequence);
  checkpoint.set_head_hash(hash);
  *checkpoint.mutable_at() = TimeUtil::SecondsToTimestamp(1786438800 + sequence);
  EXPECT_THAT(key.Sign(checkpoint), IsOk());
  return checkpoint;
}

class WitnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = TestPath(".db");
    std::remove(db_path_.c_str());
    signer_ = NewSigner(".signer.key");
    other_ = NewSigner(".other.key");
    Open();
  }

  void Open() {
    witness_.reset();
    log_.reset();
    auto store = storage::SqliteAuditStore::Open(db_path_, {});
    ASSERT_THAT(store, IsOk());
    log_ = std::make_unique<AuditLog>(*std::move(store), clock_, AuditLog::Options{});
    std::vector<std::unique_ptr<CheckpointKey>> keys;
    keys.push_back(PublicHalf(*signer_));
    auto witness = Witness::Create(*log_, std::move(keys), clock_);
    ASSERT_THAT(witness, IsOk());
    witness_ = *std::move(witness);
  }

  absl::StatusOr<Witness::Receipt> Post(const SignedCheckpoint& checkpoint) {
    return witness_->Receive(CheckpointJson(checkpoint));
  }

  // The checkpoints the witness's log holds, in order.
  std::vector<int64_t> HeldSequences() {
    std::vector<int64_t> sequences;
    auto records = log_->ReadAfter({}, 0, 1000);
    EXPECT_THAT(records, IsOk());
    for (const auto& record : *records) {
      auto held = WitnessedCheckpointOf(record);
      if (held) sequences.push_back(held->sequence());
    }
    return sequences;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::string db_path_;
  std::unique_ptr<CheckpointKey> signer_;
  std::unique_ptr<CheckpointKey> other_;
  std::unique_ptr<AuditLog> log_;
  std::unique_ptr<Witness> witness_;
};

TEST_F(WitnessTest, AcceptsPinnedCheckpointsAndRecordsEachExactlyAsSigned) {
  const SignedCheckpoint first = Signed(*signer_, 3, Hash('a'));
  const SignedCheckpoint second = Signed(*signer_, 7, Hash('b'));
  auto receipt = Post(first);
  ASSERT_THAT(receipt, IsOk());
  EXPECT_TRUE(receipt->recorded);
  EXPECT_EQ(receipt->record_sequence, 1);
  ASSERT_THAT(Post(second), IsOk());
  EXPECT_THAT(HeldSequences(), ElementsAre(3, 7));

  // What the log holds is the checkpoint itself: it still verifies under the signer's key.
  auto records = log_->ReadAfter({}, 0, 10);
  ASSERT_THAT(records, IsOk());
  auto held = WitnessedCheckpointOf((*records)[1]);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(CheckpointJson(*held), CheckpointJson(second));
  EXPECT_EQ(signer_->CheckSignature(*held), "");
  // No payload beyond the checkpoint's fields.
  std::vector<std::string> keys;
  for (const auto& [name, value] : (*records)[1].control_plane().metadata().fields()) {
    keys.push_back(name);
  }
  std::sort(keys.begin(), keys.end());
  EXPECT_THAT(keys, ElementsAre("headHash", "keyId", "sequence", "signature", "signedAt"));
  EXPECT_EQ((*records)[1].control_plane().writer().service_id(), "audit");
}

TEST_F(WitnessTest, TheSameHeadSignedAgainIsAcceptedOnceWithoutANewRecord) {
  ASSERT_THAT(Post(Signed(*signer_, 4, Hash('c'))), IsOk());
  SignedCheckpoint again = Signed(*signer_, 4, Hash('c'));
  again.mutable_at()->set_seconds(again.at().seconds() + 10);
  ASSERT_THAT(signer_->Sign(again), IsOk());
  auto receipt = Post(again);
  ASSERT_THAT(receipt, IsOk());
  EXPECT_FALSE(receipt->recorded);
  EXPECT_THAT(HeldSequences(), ElementsAre(4));
}

TEST_F(WitnessTest, ALowerSequenceIsRefusedAsARollback) {
  ASSERT_THAT(Post(Signed(*signer_, 9, Hash('d'))), IsOk());
  EXPECT_THAT(Post(Signed(*signer_, 5, Hash('e'))),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("checkpoint.sequence: 5 is older than the last checkpoint "
                                 "held for key")));
  EXPECT_THAT(HeldSequences(), ElementsAre(9));
}

TEST_F(WitnessTest, TheSameSequenceWithAnotherHashIsRefusedAsARewrite) {
  ASSERT_THAT(Post(Signed(*signer_, 9, Hash('d'))), IsOk());
  EXPECT_THAT(Post(Signed(*signer_, 9, Hash('f'))),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr("checkpoint.head_hash: sequence 9 is held with head hash")));
  EXPECT_THAT(HeldSequences(), ElementsAre(9));
}

TEST_F(WitnessTest, TheLastCheckpointHeldSurvivesARestartOfTheWitness) {
  ASSERT_THAT(Post(Signed(*signer_, 12, Hash('1'))), IsOk());
  Open();
  ASSERT_TRUE(witness_->Last(signer_->key_id()).has_value());
  EXPECT_EQ(witness_->Last(signer_->key_id())->sequence(), 12);
  EXPECT_THAT(Post(Signed(*signer_, 11, Hash('2'))), StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(Post(Signed(*signer_, 13, Hash('3'))), IsOk());
  EXPECT_THAT(HeldSequences(), ElementsAre(12, 13));
}

TEST_F(WitnessTest, ARestartLoadsTheNewestOfManyCheckpointsHeld) {
  // More checkpoints than one page of the newest-first read, and other records after them.
  for (int64_t sequence = 20; sequence < 60; ++sequence) {
    ASSERT_THAT(Post(Signed(*signer_, sequence, Hash('a' + sequence % 6))), IsOk());
  }
  for (int i = 0; i < 5; ++i) {
    v1::ControlPlaneEvent event;
    event.set_id(absl::StrCat("grant-record-", i));
    event.set_type(v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
    event.set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
    *event.mutable_at() = TimeUtil::SecondsToTimestamp(1786438800);
    event.set_trace_id(absl::StrCat("grantstore-r", i + 1));
    event.set_namespace_id("world-1");
    event.mutable_actor()->set_service_id("ops");
    event.mutable_authority()->set_human_user_id("alice");
    event.mutable_owner()->set_human_user_id("alice");
    event.set_purpose("sharedos.control-plane");
    event.set_grant_id(absl::StrCat("g", i));
    ASSERT_THAT(log_->AppendControlPlane(event, "service:grantstore"), IsOk());
  }
  Open();
  ASSERT_TRUE(witness_->Last(signer_->key_id()).has_value());
  EXPECT_EQ(witness_->Last(signer_->key_id())->sequence(), 59);
  EXPECT_THAT(Post(Signed(*signer_, 58, Hash('0'))), StatusIs(absl::StatusCode::kAborted));
}

TEST_F(WitnessTest, EachMalformedOrUnpinnedCheckpointIsRefusedNamingTheField) {
  const SignedCheckpoint good = Signed(*signer_, 2, Hash('a'));
  const std::string json = CheckpointJson(good);
  auto with = [&json](const std::string& name, nlohmann::json value) {
    nlohmann::json body = nlohmann::json::parse(json);
    body[name] = value;
    return body.dump();
  };
  auto without = [&json](const std::string& name) {
    nlohmann::json body = nlohmann::json::parse(json);
    body.erase(name);
    return body.dump();
  };
  struct Case {
    std::string body;
    std::string message;
  };
  SignedCheckpoint altered = good;
  altered.set_sequence(3);  // the signature covered 2
  SignedCheckpoint foreign = Signed(*other_, 2, Hash('a'));
  const std::vector<Case> cases = {
      {"not json", "body: not a JSON object"},
      {"[1,2]", "body: not a JSON object"},
      {std::string(100, '[') + std::string(100, ']'), "body: JSON nested deeper than"},
      {std::string(kMaxWitnessBodyBytes + 1, ' '), "body: larger than 16384 bytes"},
      {with("extra", 1), "checkpoint.extra: not a field of a signed checkpoint"},
      {without("signature"), "checkpoint.signature: required"},
      {with("sequence", "many"), "checkpoint.sequence: malformed"},
      {with("sequence", "-1"), "checkpoint.sequence: negative"},
      {with("headHash", "ABC"), "checkpoint.head_hash: not 64 lowercase hex digits"},
      {with("at", "yesterday"), "checkpoint.at: malformed"},
      {CheckpointJson(foreign),
       "checkpoint.key_id: " + other_->key_id() + " is not a signer this witness pins"},
      {CheckpointJson(altered), "checkpoint.signature: signature does not verify"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(witness_->Receive(c.body),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.body.substr(0, 80);
  }
  EXPECT_THAT(HeldSequences(), ::testing::IsEmpty());
  EXPECT_THAT(Post(good), IsOk());
}

TEST_F(WitnessTest, NoOtherWriterMayRecordAWitnessedCheckpoint) {
  ASSERT_THAT(Post(Signed(*signer_, 2, Hash('a'))), IsOk());
  auto records = log_->ReadAfter({}, 0, 1);
  ASSERT_THAT(records, IsOk());
  v1::ControlPlaneEvent forged = (*records)[0].control_plane();
  forged.set_id("forged");
  forged.clear_writer();
  EXPECT_THAT(log_->AppendControlPlane(forged, "service:grantstore"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("only service:audit")));
}

TEST(WitnessCreateTest, NeedsAPinnedKeyAndNoKeyTwice) {
  auto store = storage::SqliteAuditStore::Open(TestPath(".db"), {});
  ASSERT_THAT(store, IsOk());
  common::SimulatedClock clock(absl::FromUnixSeconds(1786438800));
  AuditLog log(*std::move(store), clock, AuditLog::Options{});
  EXPECT_THAT(Witness::Create(log, {}, clock),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--witness_public_key")));
  auto signer = NewSigner(".key");
  std::vector<std::unique_ptr<CheckpointKey>> twice;
  twice.push_back(PublicHalf(*signer));
  twice.push_back(PublicHalf(*signer));
  EXPECT_THAT(Witness::Create(log, std::move(twice), clock),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("given twice")));
}

}  // namespace
}  // namespace sharedos::audit::core
