#include "audit_svc/core/checkpoint.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::audit::v1::SignedCheckpoint;
using ::sharedos::audit::v1::VerifyRequest;
using ::sharedos::audit::v1::VerifyResponse;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

AuditEvent Denied(int i) {
  AuditEvent event;
  event.set_version("1");
  event.set_id(absl::StrCat("denied-", i));
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_DENIED);
  event.mutable_at()->set_seconds(1786438800 + i);
  event.set_trace_id("trace-1");
  event.set_namespace_id("world");
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_reason("tool_unavailable");
  event.set_source(sharedos::protocol::v1::AUDIT_SOURCE_ENVELOPE);
  return event;
}

std::string TestPath(const std::string& suffix) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name(), suffix);
}

std::unique_ptr<CheckpointKey> NewKey(const std::string& suffix = ".key") {
  const std::string path = TestPath(suffix);
  EXPECT_THAT(testing::WriteNewEd25519Key(path), IsOk());
  auto key = CheckpointKey::ReadPrivateKeyFile(path, "--checkpoint_key_file");
  EXPECT_THAT(key, IsOk());
  return key.ok() ? *std::move(key) : nullptr;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = TestPath(".db");
    std::remove(db_path_.c_str());
    export_path_ = TestPath(".checkpoints.jsonl");
    std::remove(export_path_.c_str());
    key_path_ = TestPath(".key");
    ASSERT_THAT(testing::WriteNewEd25519Key(key_path_), IsOk());
    OpenLog();
  }

  void OpenLog() {
    checkpointer_.reset();
    log_.reset();
    auto store = storage::SqliteAuditStore::Open(db_path_, {});
    ASSERT_THAT(store, IsOk());
    log_ = std::make_unique<AuditLog>(*std::move(store), clock_, AuditLog::Options{});
    auto key = CheckpointKey::ReadPrivateKeyFile(key_path_, "--checkpoint_key_file");
    ASSERT_THAT(key, IsOk());
    auto checkpointer =
        Checkpointer::Create(*log_, *std::move(key), clock_, {export_path_, absl::ZeroDuration()});
    ASSERT_THAT(checkpointer, IsOk());
    checkpointer_ = *std::move(checkpointer);
  }

  // Closes the log (as a crash would), so the file can be rewritten behind its back.
  void CloseLog() {
    checkpointer_.reset();
    log_.reset();
  }

  void AppendDenied(int from, int to) {
    for (int i = from; i < to; ++i)
      ASSERT_THAT(log_->AppendEvent(Denied(i), "service:envelope"), IsOk());
  }

  VerifyResponse VerifyAgainst(const std::vector<SignedCheckpoint>& checkpoints,
                               const CheckpointKey& key) {
    VerifyRequest request;
    for (const SignedCheckpoint& c : checkpoints) *request.add_checkpoints() = c;
    request.set_checkpoint_public_key_pem(key.public_key_pem());
    absl::StatusOr<VerifyResponse> response = VerifyWithCheckpoints(*log_, request, nullptr);
    EXPECT_THAT(response, IsOk());
    return response.ok() ? *response : VerifyResponse();
  }

  bool PlainVerifyOk() {
    absl::StatusOr<VerifyResponse> response = log_->Verify(VerifyRequest());
    return response.ok() && response->ok();
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::string db_path_;
  std::string export_path_;
  std::string key_path_;
  std::unique_ptr<AuditLog> log_;
  std::unique_ptr<Checkpointer> checkpointer_;
};

TEST_F(CheckpointTest, SignsTheHeadAndExportsItAsAJsonLine) {
  absl::StatusOr<SignedCheckpoint> empty = checkpointer_->CheckpointNow();
  ASSERT_THAT(empty, IsOk());
  EXPECT_EQ(empty->sequence(), 0);
  EXPECT_EQ(empty->head_hash(), storage::kGenesisHash);

  AppendDenied(0, 3);
  absl::StatusOr<v1::AppendResponse> last = log_->AppendEvent(Denied(3), "service:envelope");
  ASSERT_THAT(last, IsOk());
  absl::StatusOr<SignedCheckpoint> made = checkpointer_->CheckpointNow();
  ASSERT_THAT(made, IsOk());
  EXPECT_EQ(made->sequence(), 4);
  EXPECT_EQ(made->head_hash(), last->head_hash());
  EXPECT_EQ(made->key_id(), checkpointer_->key().key_id());
  EXPECT_EQ(made->at().seconds(), 1786438800);
  EXPECT_THAT(checkpointer_->key().CheckSignature(*made), IsEmpty());
  EXPECT_EQ(checkpointer_->Generation(), 2);

  std::ifstream in(export_path_);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u);
  SignedCheckpoint exported;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(lines[1], &exported).ok());
  EXPECT_EQ(exported.SerializeAsString(), made->SerializeAsString());
}

TEST_F(CheckpointTest, AnAlteredOrForeignCheckpointDoesNotVerify) {
  AppendDenied(0, 2);
  absl::StatusOr<SignedCheckpoint> made = checkpointer_->CheckpointNow();
  ASSERT_THAT(made, IsOk());
  const CheckpointKey& key = checkpointer_->key();
  ASSERT_THAT(key.CheckSignature(*made), IsEmpty());

  SignedCheckpoint sequence = *made;
  sequence.set_sequence(1);
  SignedCheckpoint hash = *made;
  hash.set_head_hash(std::string(64, 'a'));
  SignedCheckpoint at = *made;
  at.mutable_at()->set_seconds(made->at().seconds() + 1);
  SignedCheckpoint signature = *made;
  signature.mutable_signature()->at(0) ^= 1;
  for (const SignedCheckpoint* altered : {&sequence, &hash, &at, &signature}) {
    EXPECT_THAT(key.CheckSignature(*altered), HasSubstr("does not verify"));
  }
  // Signed by another key, whether it names its own id or claims this one's.
  std::unique_ptr<CheckpointKey> other = NewKey(".other.key");
  SignedCheckpoint foreign = *made;
  ASSERT_THAT(other->Sign(foreign), IsOk());
  EXPECT_THAT(key.CheckSignature(foreign), HasSubstr("signed by key"));
  foreign.set_key_id(key.key_id());
  EXPECT_THAT(key.CheckSignature(foreign), HasSubstr("does not verify"));

  // Through Verify: refused with the checkpoint named; the genuine one passes.
  VerifyResponse forged = VerifyAgainst({*made, hash}, key);
  EXPECT_FALSE(forged.ok());
  EXPECT_EQ(forged.checkpoints_verified(), 1);
  EXPECT_THAT(forged.detail(), HasSubstr("checkpoints[1]"));
  VerifyResponse genuine = VerifyAgainst({*made}, key);
  EXPECT_TRUE(genuine.ok()) << genuine.detail();
  EXPECT_EQ(genuine.checkpoints_verified(), 1);
}

TEST_F(CheckpointTest, AnEditedRecordWithEveryLaterHashRecomputedIsDetected) {
  AppendDenied(0, 5);
  absl::StatusOr<SignedCheckpoint> earlier = checkpointer_->CheckpointNow();
  ASSERT_THAT(earlier, IsOk());
  AppendDenied(5, 8);
  CloseLog();
  ASSERT_THAT(testing::RewriteDeniedAsAllowed(db_path_, 2), IsOk());
  OpenLog();
  // The rewrite is consistent: without a checkpoint the chain verifies.
  ASSERT_TRUE(PlainVerifyOk());
  absl::StatusOr<v1::QueryResponse> rewritten = log_->Query({});
  ASSERT_THAT(rewritten, IsOk());
  EXPECT_EQ(rewritten->records(1).event().outcome(), protocol::v1::AUDIT_OUTCOME_ALLOWED);

  VerifyResponse response = VerifyAgainst({*earlier}, checkpointer_->key());
  EXPECT_FALSE(response.ok());
  EXPECT_EQ(response.first_bad_sequence(), 5);
  EXPECT_THAT(response.detail(), HasSubstr("history rewritten"));
}

TEST_F(CheckpointTest, ATruncatedTailWithTheHeadMovedBackIsDetected) {
  AppendDenied(0, 6);
  absl::StatusOr<SignedCheckpoint> earlier = checkpointer_->CheckpointNow();
  ASSERT_THAT(earlier, IsOk());
  CloseLog();
  ASSERT_THAT(testing::TruncateTail(db_path_, 3), IsOk());
  OpenLog();
  ASSERT_TRUE(PlainVerifyOk());
  VerifyResponse response = VerifyAgainst({*earlier}, checkpointer_->key());
  EXPECT_FALSE(response.ok());
  EXPECT_EQ(response.first_bad_sequence(), 6);
  EXPECT_THAT(response.detail(), HasSubstr("no longer holds record 6"));

  // Refilled past the checkpoint with other records: still not the history it signed.
  AppendDenied(100, 104);
  response = VerifyAgainst({*earlier}, checkpointer_->key());
  EXPECT_FALSE(response.ok());
  EXPECT_THAT(response.detail(), HasSubstr("history rewritten"));
}

TEST_F(CheckpointTest, AnEmptiedLogIsDetected) {
  AppendDenied(0, 3);
  absl::StatusOr<SignedCheckpoint> earlier = checkpointer_->CheckpointNow();
  ASSERT_THAT(earlier, IsOk());
  CloseLog();
  ASSERT_THAT(testing::TruncateTail(db_path_, 0), IsOk());
  OpenLog();
  ASSERT_TRUE(PlainVerifyOk());
  VerifyResponse response = VerifyAgainst({*earlier}, checkpointer_->key());
  EXPECT_FALSE(response.ok());
  EXPECT_THAT(response.detail(), HasSubstr("no longer holds record 3"));
}

TEST_F(CheckpointTest, AnUntouchedLogExtendsEveryEarlierCheckpoint) {
  std::vector<SignedCheckpoint> checkpoints;
  for (int round = 0; round < 4; ++round) {
    AppendDenied(round * 3, round * 3 + 3);
    absl::StatusOr<SignedCheckpoint> made = checkpointer_->CheckpointNow();
    ASSERT_THAT(made, IsOk());
    checkpoints.push_back(*made);
  }
  CloseLog();
  OpenLog();
  VerifyResponse response = VerifyAgainst(checkpoints, checkpointer_->key());
  EXPECT_TRUE(response.ok()) << response.detail();
  EXPECT_EQ(response.checkpoints_verified(), 4);
  EXPECT_EQ(response.checked(), 12);
}

TEST_F(CheckpointTest, VerifyRefusesWhatItCannotCheck) {
  AppendDenied(0, 2);
  absl::StatusOr<SignedCheckpoint> made = checkpointer_->CheckpointNow();
  ASSERT_THAT(made, IsOk());
  VerifyRequest request;
  *request.add_checkpoints() = *made;
  // No key to check under.
  EXPECT_THAT(VerifyWithCheckpoints(*log_, request, nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("checkpoint")));
  // The server's own key serves when none is pinned.
  absl::StatusOr<VerifyResponse> own = VerifyWithCheckpoints(*log_, request, &checkpointer_->key());
  ASSERT_THAT(own, IsOk());
  EXPECT_TRUE(own->ok());
  // A range with checkpoints, a malformed checkpoint, a public key that is not one.
  VerifyRequest ranged = request;
  ranged.set_from_sequence(1);
  EXPECT_THAT(VerifyWithCheckpoints(*log_, ranged, &checkpointer_->key()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("from_sequence")));
  VerifyRequest malformed = request;
  malformed.mutable_checkpoints(0)->set_head_hash("ABC");
  EXPECT_THAT(VerifyWithCheckpoints(*log_, malformed, &checkpointer_->key()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("checkpoints[0].head_hash")));
  VerifyRequest bad_key = request;
  bad_key.set_checkpoint_public_key_pem(
      "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n");
  EXPECT_THAT(VerifyWithCheckpoints(*log_, bad_key, &checkpointer_->key()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("checkpoint_public_key_pem")));
  VerifyRequest too_many;
  for (int i = 0; i <= kMaxCheckpointsPerVerify; ++i) *too_many.add_checkpoints() = *made;
  EXPECT_THAT(VerifyWithCheckpoints(*log_, too_many, &checkpointer_->key()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than 10000")));
}

TEST_F(CheckpointTest, AKeyFileThatIsNotAnEd25519PrivateKeyIsRefused) {
  const std::string path = TestPath(".notakey");
  std::ofstream(path) << "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
  EXPECT_THAT(CheckpointKey::ReadPrivateKeyFile(path, "--checkpoint_key_file"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--checkpoint_key_file")));
  EXPECT_THAT(CheckpointKey::ReadPrivateKeyFile(TestPath(".absent"), "--checkpoint_key_file"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cannot read")));
  // A public key verifies but cannot sign, so it cannot make a Checkpointer.
  auto public_key = CheckpointKey::ParsePublicKeyPem(checkpointer_->key().public_key_pem(), "pem");
  ASSERT_THAT(public_key, IsOk());
  EXPECT_FALSE((*public_key)->can_sign());
  EXPECT_EQ((*public_key)->key_id(), checkpointer_->key().key_id());
  EXPECT_THAT(Checkpointer::Create(*log_, *std::move(public_key), clock_, {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(CheckpointTest, TheIntervalThreadSignsOnlyWhenTheHeadHasMoved) {
  checkpointer_.reset();
  // Both records are in before the thread starts: a first tick between two appends would sign
  // the head at 1, then at 2, which is right but not what this test counts.
  AppendDenied(0, 2);
  auto key = CheckpointKey::ReadPrivateKeyFile(key_path_, "--checkpoint_key_file");
  ASSERT_THAT(key, IsOk());
  auto checkpointer = Checkpointer::Create(*log_, *std::move(key), clock_, {"", absl::Seconds(10)});
  ASSERT_THAT(checkpointer, IsOk());
  // The interval runs on the injected clock: nothing is signed until it passes.
  clock_.AwaitWaiters(1);
  EXPECT_EQ((*checkpointer)->Generation(), 0);
  clock_.AdvanceTime(absl::Seconds(10));
  auto [generation, latest] = (*checkpointer)->WaitForCheckpointAfter(0, absl::InfiniteDuration());
  EXPECT_EQ(generation, 1);
  EXPECT_EQ(latest.sequence(), 2);
  // The head has not moved: no second checkpoint over many intervals (each tick is seen: the
  // thread waits again after it).
  for (int tick = 0; tick < 5; ++tick) {
    clock_.AwaitWaiters(1);
    clock_.AdvanceTime(absl::Seconds(10));
  }
  clock_.AwaitWaiters(1);
  EXPECT_EQ((*checkpointer)->Generation(), 1);
  AppendDenied(2, 3);
  clock_.AdvanceTime(absl::Seconds(10));
  auto next = (*checkpointer)->WaitForCheckpointAfter(1, absl::InfiniteDuration());
  EXPECT_EQ(next.first, 2);
  EXPECT_EQ(next.second.sequence(), 3);
}

}  // namespace
}  // namespace sharedos::audit::core
