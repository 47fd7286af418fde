// Signed checkpoints end to end, with real processes: audit_svc (and sharedosd) signing with a
// key kept outside the data directory, sharedosctl taking and checking checkpoints. Each rewrite
// of the log file that someone without the key can make consistently (an edited record with
// every later hash and the head recomputed, a truncated tail with the head moved back, an
// emptied log) still verifies without a checkpoint, and is detected against an earlier one; a
// forged checkpoint is refused; a key or checkpoint file inside the data directory stops start.
// Without --checkpoint_key_file the default key beside the data directory is minted once, kept,
// and refused when it is open to others or malformed; every checkpoint is an audit.checkpoint
// log line carrying the very line `sharedosctl audit checkpoint` prints.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "audit_svc/server/audit_process_fixture.h"
#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "tests/testing/process.h"

namespace sharedos::audit::server {
namespace {

using ::sharedos::audit::server::testing::As;
using ::sharedos::audit::server::testing::Write;
using ::sharedos::audit::server::testing::WriteAdminAndWriterCredentials;
using ::sharedos::common::IsOk;
using ::sharedos::testing::Process;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAdminToken[] = "audit-admin-token-checkpoints";
constexpr char kServiceToken[] = "audit-service-token-checkpoints";

using Result = sharedos::testing::CommandResult;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Reads `process`'s log until an audit.checkpoint line whose "checkpoint" text is `text`; false
// when none comes within 30 s.
bool LoggedCheckpointText(Process& process, const std::string& text) {
  while (true) {
    absl::StatusOr<std::string> rest = process.WaitForLine("{", absl::Seconds(30));
    if (!rest.ok()) return false;
    const std::string line = absl::StrCat("{", *rest);
    auto parsed = core::ParseCheckpointLogLine(line);
    if (parsed.ok() && parsed->has_value() &&
        nlohmann::json::parse(line)["checkpoint"].get<std::string>() == text) {
      return true;
    }
  }
}

class CheckpointIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test (and per parameter): no test sees another's log or checkpoints.
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string root = sharedos::testing::TempPath(absl::StrReplaceAll(
        absl::StrCat("checkpoints-", test->test_suite_name(), "-", test->name()), {{"/", "-"}}));
    std::filesystem::remove_all(root);
    data_ = root + "/data";
    secrets_ = root + "/secrets";
    std::filesystem::create_directories(data_);
    std::filesystem::create_directories(secrets_);
    key_ = secrets_ + "/checkpoint.key";
    ASSERT_THAT(core::testing::WriteNewEd25519Key(key_), IsOk());
    checkpoints_ = secrets_ + "/checkpoints.jsonl";
    token_file_ = Write(secrets_ + "/admin.token", kAdminToken);
    credentials_ =
        WriteAdminAndWriterCredentials(secrets_ + "/credentials.json", kAdminToken, kServiceToken);
  }

  absl::StatusOr<std::unique_ptr<Process>> StartAudit(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--port=0", "--db=" + data_ + "/audit.db",
                                     "--credentials=" + credentials_};
    args.insert(args.end(), extra.begin(), extra.end());
    return Process::StartService("audit_svc/server/audit_svc", args, "audit_svc");
  }

  // audit_svc with the checkpoint key and file, its stub ready.
  // On demand only, unless `extra` sets an interval: each test knows its checkpoints.
  void Start(std::vector<std::string> extra = {}) {
    if (std::none_of(extra.begin(), extra.end(), [](const std::string& flag) {
          return absl::StartsWith(flag, "--checkpoint_interval=");
        })) {
      extra.push_back("--checkpoint_interval=0");
    }
    extra.push_back("--checkpoint_key_file=" + key_);
    extra.push_back("--checkpoint_file=" + checkpoints_);
    auto process = StartAudit(extra);
    ASSERT_THAT(process, IsOk());
    audit_ = *std::move(process);
    stub_ = v1::AuditLog::NewStub(
        grpc::CreateChannel(audit_->address(), grpc::InsecureChannelCredentials()));
  }

  void AppendDenied(int from, int to) {
    testing::AppendDenied(*stub_, kServiceToken, from, to, "trace-checkpoints", "checkpoint-test");
  }

  // Runs sharedosctl against the running service to completion.
  Result Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), {"--target=" + audit_->address(), "--token_file=" + token_file_});
    return sharedos::testing::RunToCompletion("tools/sharedosctl/sharedosctl", args);
  }

  // An orderly stop, once this test's channel is closed (an open one holds the server's shutdown
  // for its grace period). The exit code.
  int Stop() {
    stub_.reset();
    return audit_->Terminate();
  }

  Result VerifyAgainst(const std::string& checkpoint_file) {
    return Ctl({"audit", "verify", "--checkpoint=" + checkpoint_file,
                "--checkpoint_public_key=" + public_key_});
  }

  // Six denied records, a checkpoint of them (taken with sharedosctl, its public key pinned),
  // three more records, then audit_svc killed as a crash would.
  void RecordCheckpointAndCrash() {
    Start();
    AppendDenied(0, 6);
    public_key_ = secrets_ + "/checkpoint.pub.pem";
    Result taken = Ctl({"audit", "checkpoint", "--public_key_out=" + public_key_});
    ASSERT_EQ(taken.exit_code, 0) << taken.output;
    ASSERT_THAT(taken.output, HasSubstr("\"sequence\":\"6\""));
    AppendDenied(6, 9);
    stub_.reset();
    audit_->Kill();
  }

  std::string data_, secrets_, key_, checkpoints_, token_file_, credentials_, public_key_;
  std::unique_ptr<Process> audit_;
  std::unique_ptr<v1::AuditLog::Stub> stub_;
};

enum class Rewrite { kEditRecord, kTruncateTail, kEmpty };

class CheckpointRewriteTest : public CheckpointIntegrationTest,
                              public ::testing::WithParamInterface<Rewrite> {};

TEST_P(CheckpointRewriteTest, VerifiesWithoutACheckpointAndIsDetectedAgainstAnEarlierOne) {
  ASSERT_NO_FATAL_FAILURE(RecordCheckpointAndCrash());
  const std::string db = data_ + "/audit.db";
  const char* expected = "";
  switch (GetParam()) {
    case Rewrite::kEditRecord:  // record 2 denied → allowed, every later hash and the head redone
      ASSERT_THAT(core::testing::RewriteDeniedAsAllowed(db, 2), IsOk());
      expected = "history rewritten";
      break;
    case Rewrite::kTruncateTail:  // records 5.. deleted, the head moved back to 4
      ASSERT_THAT(core::testing::TruncateTail(db, 4), IsOk());
      expected = "no longer holds record 6";
      break;
    case Rewrite::kEmpty:
      ASSERT_THAT(core::testing::TruncateTail(db, 0), IsOk());
      expected = "no longer holds record 6";
      break;
  }
  Start();
  // Consistent: the chain alone cannot tell.
  Result plain = Ctl({"audit", "verify"});
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_THAT(plain.output, HasSubstr("ok:"));
  // Against the checkpoint taken before the rewrite: detected, under the pinned key and under
  // the server's own.
  Result pinned = VerifyAgainst(checkpoints_);
  EXPECT_EQ(pinned.exit_code, 1) << pinned.output;
  EXPECT_THAT(pinned.output, HasSubstr("BROKEN"));
  EXPECT_THAT(pinned.output, HasSubstr(expected));
  Result own = Ctl({"audit", "verify", "--checkpoint=" + checkpoints_});
  EXPECT_EQ(own.exit_code, 1) << own.output;
  EXPECT_EQ(Stop(), 0) << audit_->output();
}

INSTANTIATE_TEST_SUITE_P(EachRewrite, CheckpointRewriteTest,
                         ::testing::Values(Rewrite::kEditRecord, Rewrite::kTruncateTail,
                                           Rewrite::kEmpty));

TEST_F(CheckpointIntegrationTest, AnUntouchedLogExtendsItsCheckpointsAcrossACrash) {
  ASSERT_NO_FATAL_FAILURE(RecordCheckpointAndCrash());
  Start();
  AppendDenied(9, 12);
  Result taken = Ctl({"audit", "checkpoint"});
  ASSERT_EQ(taken.exit_code, 0) << taken.output;
  Result verified = VerifyAgainst(checkpoints_);
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  EXPECT_THAT(verified.output, HasSubstr("ok: 12 records verify"));
  EXPECT_THAT(verified.output, HasSubstr("2 checkpoints extended"));
  // What sharedosctl printed is the line the server exported: an operator's own copy verifies.
  const std::string own_copy = Write(secrets_ + "/own-copy.jsonl", taken.output);
  EXPECT_EQ(VerifyAgainst(own_copy).exit_code, 0);
  // And the very text the process logged (event audit.checkpoint) for that checkpoint.
  EXPECT_TRUE(LoggedCheckpointText(*audit_, std::string(absl::StripSuffix(taken.output, "\n"))))
      << audit_->output();
  EXPECT_EQ(Stop(), 0) << audit_->output();
}

TEST_F(CheckpointIntegrationTest, AForgedCheckpointIsRefused) {
  ASSERT_NO_FATAL_FAILURE(RecordCheckpointAndCrash());
  Start();
  const std::string genuine = ReadAll(checkpoints_);
  ASSERT_THAT(genuine, HasSubstr("\"sequence\":\"6\""));
  // An altered field: the sequence moved back to match a truncated log.
  const std::string altered =
      Write(secrets_ + "/altered.jsonl",
            absl::StrReplaceAll(genuine, {{"\"sequence\":\"6\"", "\"sequence\":\"4\""}}));
  Result refused = VerifyAgainst(altered);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("signature does not verify"));
  // Another key: the log's checkpoints are not what the operator pinned.
  const std::string other_key = secrets_ + "/other.key";
  ASSERT_THAT(core::testing::WriteNewEd25519Key(other_key), IsOk());
  auto other = core::CheckpointKey::ReadPrivateKeyFile(other_key, "other");
  ASSERT_THAT(other, IsOk());
  public_key_ = Write(secrets_ + "/other.pub.pem", (*other)->public_key_pem());
  Result foreign = VerifyAgainst(checkpoints_);
  EXPECT_EQ(foreign.exit_code, 1) << foreign.output;
  EXPECT_THAT(foreign.output, HasSubstr("signed by key"));
  // Not a checkpoint at all: a usage error naming the line.
  Result garbage = VerifyAgainst(Write(secrets_ + "/garbage.jsonl", "{\"sequence\": []}\n"));
  EXPECT_EQ(garbage.exit_code, 2) << garbage.output;
  EXPECT_THAT(garbage.output, HasSubstr("line 1"));
  EXPECT_EQ(Stop(), 0) << audit_->output();
}

TEST_F(CheckpointIntegrationTest, StartIsRefusedWhenTheKeyOrTheCheckpointFileIsInTheDataDir) {
  const std::string inside_key = data_ + "/checkpoint.key";
  ASSERT_THAT(core::testing::WriteNewEd25519Key(inside_key), IsOk());
  auto refused = StartAudit({"--checkpoint_key_file=" + inside_key});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("--checkpoint_key_file: inside the data directory"));
  // Through another spelling of the same directory.
  auto dotted = StartAudit({"--checkpoint_key_file=" + data_ + "/../data/checkpoint.key"});
  ASSERT_FALSE(dotted.ok());
  EXPECT_THAT(dotted.status().message(), HasSubstr("inside the data directory"));
  auto file_inside = StartAudit(
      {"--checkpoint_key_file=" + key_, "--checkpoint_file=" + data_ + "/checkpoints.jsonl"});
  ASSERT_FALSE(file_inside.ok());
  EXPECT_THAT(file_inside.status().message(),
              HasSubstr("--checkpoint_file: inside the data directory"));
}

// Without --checkpoint_key_file: the key beside the data directory, minted once (owner-only),
// kept across starts, its public half written for the operator, and refused when it is open to
// others or is not a key.
TEST_F(CheckpointIntegrationTest, WithoutAKeyFlagTheDefaultKeyIsMintedOnceAndKept) {
  const std::string keys = data_ + ".keys";
  auto first = StartAudit();
  ASSERT_THAT(first, IsOk());
  audit_ = *std::move(first);
  EXPECT_THAT(audit_->output(), HasSubstr("audit_svc: audit checkpoint key " + keys +
                                          "/checkpoint.key (new: minted on this first start)"));
  EXPECT_THAT(audit_->output(), HasSubstr("audit_svc: audit checkpoint public key (PEM) " + keys +
                                          "/checkpoint.pub.pem"));
  EXPECT_THAT(audit_->output(), HasSubstr("every 10s while the log grows"));
  EXPECT_EQ(std::filesystem::status(keys).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  EXPECT_EQ(
      std::filesystem::status(keys + "/checkpoint.key").permissions() & std::filesystem::perms::all,
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  public_key_ = secrets_ + "/served.pub.pem";
  Result taken = Ctl({"audit", "checkpoint", "--public_key_out=" + public_key_});
  ASSERT_EQ(taken.exit_code, 0) << taken.output;
  EXPECT_EQ(ReadAll(public_key_), ReadAll(keys + "/checkpoint.pub.pem"));
  const std::string key_pem = ReadAll(keys + "/checkpoint.key");
  EXPECT_EQ(Stop(), 0) << audit_->output();

  // Kept: the same key signs after a restart, and verifies the first run's checkpoint.
  auto second = StartAudit();
  ASSERT_THAT(second, IsOk());
  audit_ = *std::move(second);
  EXPECT_THAT(audit_->output(), Not(HasSubstr("minted")));
  EXPECT_EQ(ReadAll(keys + "/checkpoint.key"), key_pem);
  Result verified = VerifyAgainst(Write(secrets_ + "/taken.jsonl", taken.output));
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  EXPECT_EQ(Stop(), 0) << audit_->output();

  // Readable by others: refused, naming the file and the fix; never replaced.
  std::filesystem::permissions(keys + "/checkpoint.key", std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  auto open_key = StartAudit();
  ASSERT_FALSE(open_key.ok());
  EXPECT_THAT(open_key.status().message(),
              HasSubstr("checkpoint key " + keys +
                        "/checkpoint.key: open to group or others (mode 0604; chmod 600 it)"));
  std::filesystem::permissions(keys + "/checkpoint.key", std::filesystem::perms::others_read,
                               std::filesystem::perm_options::remove);
  // A directory open to others: refused too.
  std::filesystem::permissions(keys, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  auto open_dir = StartAudit();
  ASSERT_FALSE(open_dir.ok());
  EXPECT_THAT(open_dir.status().message(), HasSubstr("chmod 700 it"));
  std::filesystem::permissions(keys, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::remove);
  // Not a key: refused, never overwritten by a new one.
  Write(keys + "/checkpoint.key", "not a key\n");
  auto malformed = StartAudit();
  ASSERT_FALSE(malformed.ok());
  EXPECT_THAT(malformed.status().message(), HasSubstr("not a PEM Ed25519 private key"));
  EXPECT_EQ(ReadAll(keys + "/checkpoint.key"), "not a key\n");
}

TEST_F(CheckpointIntegrationTest, TheIntervalSignsAndTheTailStreamCarriesCheckpoints) {
  Start({"--checkpoint_interval=100ms"});
  v1::TailRequest request;
  request.set_include_checkpoints(true);
  auto context = As(kAdminToken, 30);
  auto reader = stub_->Tail(context.get(), request);
  AppendDenied(0, 3);
  v1::TailResponse response;
  int records = 0;
  v1::SignedCheckpoint checkpoint;
  while (reader->Read(&response)) {
    if (response.has_record()) ++records;
    if (response.has_checkpoint() && response.checkpoint().sequence() == 3) {
      checkpoint = response.checkpoint();
      break;
    }
  }
  context->TryCancel();
  reader->Finish();
  reader.reset();
  EXPECT_EQ(records, 3);
  ASSERT_EQ(checkpoint.sequence(), 3);
  // The same checkpoint was exported to the file first, and logged as one audit.checkpoint line.
  std::string line;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(checkpoint, &line).ok());
  EXPECT_THAT(ReadAll(checkpoints_), HasSubstr(line));
  EXPECT_TRUE(LoggedCheckpointText(*audit_, line)) << audit_->output();
  EXPECT_THAT(audit_->output(), Not(HasSubstr("PRIVATE KEY")));
  EXPECT_EQ(Stop(), 0) << audit_->output();
}

TEST_F(CheckpointIntegrationTest, SharedosdSignsCheckpointsOfItsEmbeddedLog) {
  const std::string sharedos_data = sharedos::testing::TempPath("sharedosd-checkpoint-data");
  auto process =
      Process::StartService("sharedosd/sharedosd",
                            {"--port=0", "--data_dir=" + sharedos_data, "--checkpoint_interval=0",
                             "--checkpoint_key_file=" + key_, "--checkpoint_file=" + checkpoints_},
                            "sharedosd");
  ASSERT_THAT(process, IsOk());
  audit_ = *std::move(process);
  token_file_ = sharedos_data + "/admin.token";
  Result taken = Ctl({"audit", "checkpoint"});
  ASSERT_EQ(taken.exit_code, 0) << taken.output;
  Result verified = Ctl({"audit", "verify", "--checkpoint=" + checkpoints_});
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  EXPECT_THAT(verified.output, HasSubstr("1 checkpoints extended"));
  EXPECT_EQ(Stop(), 0) << audit_->output();

  // Its key inside its data directory: start refused.
  const std::string inside_key = sharedos_data + "/checkpoint.key";
  ASSERT_THAT(core::testing::WriteNewEd25519Key(inside_key), IsOk());
  auto refused = Process::StartService(
      "sharedosd/sharedosd",
      {"--port=0", "--data_dir=" + sharedos_data, "--checkpoint_key_file=" + inside_key},
      "sharedosd");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("inside the data directory"));
}

}  // namespace
}  // namespace sharedos::audit::server
