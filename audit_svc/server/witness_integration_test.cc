// Checkpoints shipped to a witness, with real processes (docs/adr/0023): an audit_svc signing
// checkpoints at a short interval with --checkpoint_witness pointing at a second audit_svc
// started with --witness_public_key. The witness holds the checkpoints in its own log; when the
// first one's log is rolled back and it restarts, its next checkpoint is refused 409 (and logged
// as an alarm on both sides), and `sharedosctl audit verify --checkpoints=<exported from the
// witness> --public_key=…` exits 1 naming the first checkpoint the log no longer extends. A
// forged, replayed or rewritten checkpoint POSTed to the witness is refused (400, 409). A witness
// that is down is a warning line, not an outage, and is caught up once it is back. sharedosd
// ships its checkpoints too.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "audit_svc/server/audit_process_fixture.h"
#include "common/http/http_client.h"
#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
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

using Result = sharedos::testing::CommandResult;

constexpr char kAdminToken[] = "audit-admin-token-witness";
constexpr char kServiceToken[] = "audit-service-token-witness";

// Reads `process`'s log until a line holding every one of `needles`; false when none comes
// within 30 s.
bool Logged(Process& process, const std::vector<std::string>& needles) {
  while (true) {
    absl::StatusOr<std::string> rest = process.WaitForLine("{", absl::Seconds(30));
    if (!rest.ok()) return false;
    if (std::all_of(needles.begin(), needles.end(), [&rest](const std::string& needle) {
          return absl::StrContains(*rest, needle);
        })) {
      return true;
    }
  }
}

common::http::HttpClientOptions WitnessClientOptions() {
  common::http::HttpClientOptions options;
  options.timeout = absl::Seconds(10);
  return options;
}

class WitnessIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = sharedos::testing::TempPath(absl::StrCat("witness-", test->name()));
    std::filesystem::remove_all(root_);
    for (const char* dir : {"/signer", "/witness", "/secrets"}) {
      std::filesystem::create_directories(root_ + dir);
    }
    secrets_ = root_ + "/secrets";
    key_ = secrets_ + "/checkpoint.key";
    ASSERT_THAT(core::testing::WriteNewEd25519Key(key_), IsOk());
    auto key = core::CheckpointKey::ReadPrivateKeyFile(key_, "key");
    ASSERT_THAT(key, IsOk());
    signing_key_ = *std::move(key);
    public_key_ = Write(secrets_ + "/checkpoint.pub.pem", signing_key_->public_key_pem());
    token_file_ = Write(secrets_ + "/admin.token", kAdminToken);
    credentials_ =
        WriteAdminAndWriterCredentials(secrets_ + "/credentials.json", kAdminToken, kServiceToken);
  }

  // The witness: its own log, pinning the signer's public key; `port` 0 picks one.
  void StartWitness(int port = 0) {
    auto process = Process::StartService(
        "audit_svc/server/audit_svc",
        {"--port=0", "--db=" + root_ + "/witness/audit.db", "--credentials=" + credentials_,
         "--checkpoint_interval=0", "--witness_public_key=" + public_key_,
         absl::StrCat("--witness_port=", port)},
        "audit_svc");
    ASSERT_THAT(process, IsOk());
    witness_ = *std::move(process);
    // "audit_svc: witness: accepting checkpoints signed by key K at http://127.0.0.1:P/v1/..."
    const std::string output = witness_->output();
    const size_t at = output.find(" at http://");
    ASSERT_NE(at, std::string::npos) << output;
    witness_url_ = output.substr(at + 4, output.find('\n', at) - at - 4);
    EXPECT_THAT(output, HasSubstr(absl::StrCat("accepting checkpoints signed by key ",
                                               signing_key_->key_id())));
  }

  // The signer: an audit_svc signing every 50 ms while its log grows, shipping to `witness_url`.
  void StartSigner(const std::string& witness_url) {
    auto process =
        Process::StartService("audit_svc/server/audit_svc",
                              {"--port=0", "--db=" + root_ + "/signer/audit.db",
                               "--credentials=" + credentials_, "--checkpoint_key_file=" + key_,
                               "--checkpoint_interval=50ms", "--checkpoint_witness=" + witness_url},
                              "audit_svc");
    ASSERT_THAT(process, IsOk());
    signer_ = *std::move(process);
    signer_stub_ = v1::AuditLog::NewStub(
        grpc::CreateChannel(signer_->address(), grpc::InsecureChannelCredentials()));
  }

  int StopSigner() {
    signer_stub_.reset();
    return signer_->Terminate();
  }

  void AppendDenied(int from, int to) {
    testing::AppendDenied(*signer_stub_, kServiceToken, from, to, "trace-witness", "witness-test");
  }

  // Follows the witness's log (Tail, no polling) until it holds the signer's checkpoint of
  // `sequence`; false when it does not within 30 s.
  bool WitnessHolds(int64_t sequence) {
    auto stub = v1::AuditLog::NewStub(
        grpc::CreateChannel(witness_->address(), grpc::InsecureChannelCredentials()));
    v1::TailRequest request;
    request.set_from_sequence(1);
    request.mutable_filter()->set_control_plane_type(
        v1::CONTROL_PLANE_EVENT_TYPE_CHECKPOINT_WITNESSED);
    auto context = As(kAdminToken, 30);
    auto reader = stub->Tail(context.get(), request);
    v1::TailResponse response;
    bool held = false;
    while (!held && reader->Read(&response)) {
      const auto& fields = response.record().control_plane().metadata().fields();
      auto it = fields.find("sequence");
      held = it != fields.end() && it->second.string_value() == absl::StrCat(sequence);
    }
    context->TryCancel();
    reader->Finish();
    return held;
  }

  Result Ctl(const std::string& target, std::vector<std::string> args) {
    args.insert(args.begin(), {"--target=" + target, "--token_file=" + token_file_});
    return sharedos::testing::RunToCompletion("tools/sharedosctl/sharedosctl", args);
  }

  // The witness's export (`audit witnessed`) in a file: the sequences it holds.
  std::vector<int64_t> ExportFromWitness(const std::string& path) {
    Result exported =
        Ctl(witness_->address(), {"audit", "witnessed", "--key_id=" + signing_key_->key_id()});
    EXPECT_EQ(exported.exit_code, 0) << exported.output;
    Write(path, exported.output);
    std::vector<int64_t> sequences;
    for (absl::string_view line : absl::StrSplit(exported.output, '\n', absl::SkipEmpty())) {
      auto parsed = core::ParseCheckpointLogLine(line);
      if (parsed.ok() && parsed->has_value()) sequences.push_back((*parsed)->sequence());
    }
    return sequences;
  }

  common::http::HttpAnswer PostToWitness(const v1::SignedCheckpoint& checkpoint) {
    common::http::HttplibClient client(WitnessClientOptions());
    auto answer =
        client.Post(witness_url_, core::CheckpointJson(checkpoint), "application/json", 4096);
    EXPECT_THAT(answer, IsOk());
    return answer.ok() ? *answer : common::http::HttpAnswer{};
  }

  std::string root_, secrets_, key_, public_key_, token_file_, credentials_, witness_url_;
  std::unique_ptr<core::CheckpointKey> signing_key_;
  std::unique_ptr<Process> witness_;
  std::unique_ptr<Process> signer_;
  std::unique_ptr<v1::AuditLog::Stub> signer_stub_;
};

TEST_F(WitnessIntegrationTest, ARolledBackLogIsRefusedByTheWitnessAndFailsAgainstItsExport) {
  ASSERT_NO_FATAL_FAILURE(StartWitness());
  ASSERT_NO_FATAL_FAILURE(StartSigner(witness_url_));
  // Only the witness's host is logged, never its URL's path.
  EXPECT_THAT(signer_->output(), HasSubstr("posted to the witness at 127.0.0.1:"));
  EXPECT_THAT(signer_->output(), Not(HasSubstr("/v1/checkpoints")));
  AppendDenied(0, 6);
  ASSERT_TRUE(WitnessHolds(6)) << signer_->output() << witness_->output();
  AppendDenied(6, 9);
  ASSERT_TRUE(WitnessHolds(9)) << signer_->output() << witness_->output();

  // Untouched, the signer's log extends everything the witness holds.
  const std::string exported = secrets_ + "/witnessed.log";
  std::vector<int64_t> held = ExportFromWitness(exported);
  ASSERT_FALSE(held.empty());
  EXPECT_EQ(held.back(), 9);
  EXPECT_TRUE(std::is_sorted(held.begin(), held.end()));
  Result clean = Ctl(signer_->address(), {"audit", "verify", "--checkpoints=" + exported,
                                          "--public_key=" + public_key_});
  EXPECT_EQ(clean.exit_code, 0) << clean.output;

  // Rolled back: the records after 4 removed and the head moved back, as someone who can write
  // the data directory (not the key) can; the chain alone still verifies.
  ASSERT_EQ(StopSigner(), 0) << signer_->output();
  ASSERT_THAT(core::testing::TruncateTail(root_ + "/signer/audit.db", 4), IsOk());
  ASSERT_NO_FATAL_FAILURE(StartSigner(witness_url_));
  Result plain = Ctl(signer_->address(), {"audit", "verify"});
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  // Its first checkpoint after the restart (sequence 4) is refused by the witness: 409, an alarm
  // on both sides.
  EXPECT_TRUE(
      Logged(*signer_, {"\"event\":\"audit.witness.refused\"", "\"status\":409", "\"sequence\":4"}))
      << signer_->output();
  EXPECT_TRUE(Logged(
      *witness_, {"\"event\":\"audit.witness.conflict\"", "\"sequence\":4", "\"held_sequence\":9"}))
      << witness_->output();

  // Against the witness's export: exit 1, naming the first checkpoint past the new head.
  held = ExportFromWitness(exported);
  int64_t first_bad = 0;
  for (int64_t sequence : held) {
    if (sequence > 4) {
      first_bad = sequence;
      break;
    }
  }
  ASSERT_GT(first_bad, 4);
  Result detected = Ctl(signer_->address(), {"audit", "verify", "--checkpoints=" + exported,
                                             "--public_key=" + public_key_});
  EXPECT_EQ(detected.exit_code, 1) << detected.output;
  EXPECT_THAT(detected.output, HasSubstr("BROKEN"));
  EXPECT_THAT(detected.output,
              HasSubstr(absl::StrCat("the checkpoint of sequence ", first_bad, " (line")));

  // The witness's own record of them verifies (its chain protects the list).
  Result witness_chain = Ctl(witness_->address(), {"audit", "verify"});
  EXPECT_EQ(witness_chain.exit_code, 0) << witness_chain.output;
  EXPECT_EQ(StopSigner(), 0) << signer_->output();
  EXPECT_EQ(witness_->Terminate(), 0) << witness_->output();
}

TEST_F(WitnessIntegrationTest, AForgedReplayedOrRewrittenCheckpointIsRefused) {
  ASSERT_NO_FATAL_FAILURE(StartWitness());
  auto signed_at = [this](int64_t sequence, char hash) {
    v1::SignedCheckpoint checkpoint;
    checkpoint.set_sequence(sequence);
    checkpoint.set_head_hash(std::string(64, hash));
    checkpoint.mutable_at()->set_seconds(1786438800 + sequence);
    EXPECT_THAT(signing_key_->Sign(checkpoint), IsOk());
    return checkpoint;
  };
  EXPECT_EQ(PostToWitness(signed_at(5, 'a')).status, 200);
  EXPECT_EQ(PostToWitness(signed_at(8, 'b')).status, 200);
  // Rolled back (a genuine older checkpoint, or one signed after a rollback): 409.
  common::http::HttpAnswer older = PostToWitness(signed_at(5, 'a'));
  EXPECT_EQ(older.status, 409);
  EXPECT_THAT(older.body, HasSubstr("checkpoint.sequence: 5 is older than"));
  // Rewritten: the same sequence, another head: 409.
  common::http::HttpAnswer rewritten = PostToWitness(signed_at(8, 'c'));
  EXPECT_EQ(rewritten.status, 409);
  EXPECT_THAT(rewritten.body, HasSubstr("checkpoint.head_hash"));
  // Forged: a field altered after signing: 400 naming the signature.
  v1::SignedCheckpoint forged = signed_at(9, 'd');
  forged.set_sequence(10);
  common::http::HttpAnswer refused = PostToWitness(forged);
  EXPECT_EQ(refused.status, 400);
  EXPECT_THAT(refused.body, HasSubstr("checkpoint.signature"));
  // Not a checkpoint, and too large.
  common::http::HttplibClient client(WitnessClientOptions());
  auto junk =
      client.Post(witness_url_, "{\"sequence\":\"1\",\"token\":\"x\"}", "application/json", 4096);
  ASSERT_THAT(junk, IsOk());
  EXPECT_EQ(junk->status, 400);
  EXPECT_THAT(junk->body, HasSubstr("checkpoint.token: not a field"));
  auto large = client.Post(witness_url_, std::string(20000, ' '), "application/json", 4096);
  ASSERT_THAT(large, IsOk());
  EXPECT_EQ(large->status, 413);
  // The witness holds 5 and 8 only.
  std::vector<int64_t> held = ExportFromWitness(secrets_ + "/witnessed.log");
  EXPECT_EQ(held, (std::vector<int64_t>{5, 8}));
  EXPECT_EQ(witness_->Terminate(), 0) << witness_->output();
}

TEST_F(WitnessIntegrationTest, AWitnessThatIsDownIsAWarningAndIsCaughtUpWhenItIsBack) {
  // A witness started once to learn a free port, then stopped.
  ASSERT_NO_FATAL_FAILURE(StartWitness());
  const std::string url = witness_url_;
  const std::string port = url.substr(url.rfind(':') + 1, url.find('/', 8) - url.rfind(':') - 1);
  ASSERT_EQ(witness_->Terminate(), 0);
  ASSERT_NO_FATAL_FAILURE(StartSigner(url));
  AppendDenied(0, 3);
  EXPECT_TRUE(Logged(*signer_, {"\"event\":\"audit.witness.unreachable\"",
                                "\"witness\":\"127.0.0.1:" + port + "\""}))
      << signer_->output();
  // Not an outage: the log still takes records and signs checkpoints locally.
  AppendDenied(3, 4);
  Result taken = Ctl(signer_->address(), {"audit", "checkpoint"});
  EXPECT_EQ(taken.exit_code, 0) << taken.output;
  // Back on the same port: the waiting checkpoints are delivered on a later attempt.
  int number = 0;
  ASSERT_TRUE(absl::SimpleAtoi(port, &number));
  ASSERT_NO_FATAL_FAILURE(StartWitness(number));
  EXPECT_TRUE(WitnessHolds(4)) << signer_->output();
  EXPECT_EQ(StopSigner(), 0) << signer_->output();
  EXPECT_EQ(witness_->Terminate(), 0) << witness_->output();
}

TEST_F(WitnessIntegrationTest, SharedosdShipsItsCheckpointsToAWitness) {
  // sharedosd's key is the signer's: the witness pins it.
  ASSERT_NO_FATAL_FAILURE(StartWitness());
  const std::string data = root_ + "/sharedosd-data";
  auto process =
      Process::StartService("sharedosd/sharedosd",
                            {"--port=0", "--data_dir=" + data, "--checkpoint_key_file=" + key_,
                             "--checkpoint_interval=0", "--checkpoint_witness=" + witness_url_},
                            "sharedosd");
  ASSERT_THAT(process, IsOk());
  std::unique_ptr<Process> sharedosd = *std::move(process);
  token_file_ = data + "/admin.token";
  Result taken = Ctl(sharedosd->address(), {"audit", "checkpoint"});
  ASSERT_EQ(taken.exit_code, 0) << taken.output;
  auto parsed = nlohmann::json::parse(taken.output);
  int64_t sequence = 0;
  // proto3 JSON leaves out a sequence of 0 (the empty log).
  ASSERT_TRUE(absl::SimpleAtoi(parsed.value("sequence", std::string("0")), &sequence));
  token_file_ = secrets_ + "/admin.token";
  EXPECT_TRUE(WitnessHolds(sequence)) << sharedosd->output();
  EXPECT_EQ(sharedosd->Terminate(), 0) << sharedosd->output();
  EXPECT_EQ(witness_->Terminate(), 0) << witness_->output();
}

}  // namespace
}  // namespace sharedos::audit::server
