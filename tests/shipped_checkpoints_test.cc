// Issue 39, from outside the process: sharedosd started as the README starts it (`--demo`, no
// key given: the default key is minted beside the data directory), a turn made with the real
// sharedosctl, the audit.checkpoint lines of its log shipped to a file. Then the data directory
// is tampered with as someone who can write it (but not the key directory) could — a denied
// record rewritten as allowed with every later hash and the head recomputed, the tail truncated,
// or the whole directory put back as an earlier copy — and sharedosd started again: plain
// `audit verify` still answers ok, `audit verify --checkpoints=<shipped log> --public_key=<pem>`
// exits 1 naming the first checkpoint the log no longer extends.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "common/sqlite/database.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::testing::CommandResult;
using ::sharedos::testing::Process;
using ::testing::HasSubstr;
using ::testing::Not;

enum class Tamper { kRewriteDenied, kTruncate, kRestoreEarlierCopy };

// The sequences of the audit.checkpoint lines in `log`, in order.
std::vector<int64_t> LoggedSequences(const std::string& log) {
  std::vector<int64_t> sequences;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    auto parsed = audit::core::ParseCheckpointLogLine(line);
    if (parsed.ok() && parsed->has_value()) sequences.push_back((*parsed)->sequence());
  }
  return sequences;
}

// The first number after `prefix` in `text` (-1: none).
int64_t NumberAfter(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return -1;
  size_t end = at + prefix.size();
  while (end < text.size() && absl::ascii_isdigit(text[end])) ++end;
  int64_t value = -1;
  if (!absl::SimpleAtoi(text.substr(at + prefix.size(), end - at - prefix.size()), &value)) {
    return -1;
  }
  return value;
}

// The head sequence stored in a SQLite audit log (-1: unreadable).
int64_t StoredHead(const std::string& db_path) {
  auto db = common::sqlite::Database::Open(db_path);
  if (!db.ok()) return -1;
  auto head = (*db)->Prepare("SELECT sequence FROM audit_head WHERE id = 1");
  if (!head.ok()) return -1;
  auto row = head->Step();
  return row.ok() && *row ? head->ColumnInt64(0) : -1;
}

class ShippedCheckpointsTest : public ::testing::TestWithParam<Tamper> {
 protected:
  void SetUp() override {
    root_ = sharedos::testing::TempPath(absl::StrCat("shipped-", static_cast<int>(GetParam())));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    // As the README's quickstart names it, in a directory of the test's own.
    data_ = root_ + "/sharedos-data";
    shipped_ = root_ + "/shipped.log";
  }

  // sharedosd as tools/run.sh starts it (--demo), on free ports, the interval short by flag.
  void Start() {
    auto process = Process::StartService(
        "sharedosd/sharedosd",
        {"--demo", "--port=0", "--data_dir=" + data_, "--checkpoint_interval=100ms"}, "sharedosd");
    ASSERT_THAT(process, IsOk());
    daemon_ = *std::move(process);
  }

  CommandResult Ctl(std::vector<std::string> args) {
    args.insert(args.begin(),
                {"--target=" + daemon_->address(), "--token_file=" + data_ + "/admin.token"});
    return sharedos::testing::RunToCompletion("tools/sharedosctl/sharedosctl", args);
  }

  // The head the chain verifies to.
  int64_t Head() {
    CommandResult verified = Ctl({"audit", "verify"});
    EXPECT_EQ(verified.exit_code, 0) << verified.output;
    return NumberAfter(verified.output, "ok: ");
  }

  // The README's first step: the turn reads, is refused a write (a denied record) and escalates.
  // Returns the denied record's sequence.
  int64_t TurnWithARefusal() {
    CommandResult turn = Ctl({"turn", "--host_token_file=" + data_ + "/host.token"});
    EXPECT_EQ(turn.exit_code, 0) << turn.output;
    EXPECT_THAT(turn.output, HasSubstr("no_matching_grant"));
    CommandResult denied = Ctl({"--json", "audit", "query", "--outcome=denied"});
    EXPECT_EQ(denied.exit_code, 0) << denied.output;
    // The last denied record (records are listed in order).
    int64_t last = -1;
    for (absl::string_view line : absl::StrSplit(denied.output, '\n')) {
      const int64_t sequence = NumberAfter(std::string(line), "\"sequence\": \"");
      if (sequence > 0) last = sequence;
    }
    return last;
  }

  // Reads the log until a checkpoint of `sequence` or later has been logged (the interval signs
  // the head it moved to), then stops sharedosd and ships every line it wrote.
  void WaitForCheckpointStopAndShip(int64_t sequence) {
    bool seen = false;
    while (!seen) {
      auto line = daemon_->WaitForLine("{", absl::Seconds(30));
      ASSERT_THAT(line, IsOk());
      auto parsed = audit::core::ParseCheckpointLogLine(absl::StrCat("{", *line));
      ASSERT_THAT(parsed, IsOk());
      seen = parsed->has_value() && (*parsed)->sequence() >= sequence;
    }
    EXPECT_EQ(daemon_->Terminate(), 0) << daemon_->output();
    std::ofstream(shipped_, std::ios::app) << daemon_->output();
    daemon_.reset();
  }

  std::string root_, data_, shipped_;
  std::unique_ptr<Process> daemon_;
};

TEST_P(ShippedCheckpointsTest, TamperingOlderThanTheLastShippedCheckpointIsDetected) {
  // First start: no key given, the default one is minted beside the data directory.
  ASSERT_NO_FATAL_FAILURE(Start());
  const std::string key = data_ + ".keys/checkpoint.key";
  const std::string public_key = data_ + ".keys/checkpoint.pub.pem";
  EXPECT_THAT(daemon_->output(), HasSubstr("sharedosd: audit checkpoint key " + key +
                                           " (new: minted on this first start)"));
  EXPECT_THAT(daemon_->output(),
              HasSubstr("sharedosd: audit checkpoint public key (PEM) " + public_key));
  EXPECT_EQ(std::filesystem::status(data_ + ".keys").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  EXPECT_EQ(std::filesystem::status(key).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const int64_t first_denied = TurnWithARefusal();
  ASSERT_GT(first_denied, 0);
  const int64_t first_head = Head();
  ASSERT_NO_FATAL_FAILURE(WaitForCheckpointStopAndShip(first_head));

  // An earlier copy of the whole data directory (the key directory is not in it).
  const std::string copy = root_ + "/earlier-copy";
  std::filesystem::copy(data_, copy, std::filesystem::copy_options::recursive);

  // Second start: the same key, kept.
  ASSERT_NO_FATAL_FAILURE(Start());
  EXPECT_THAT(daemon_->output(), Not(HasSubstr("minted on this first start")));
  const int64_t second_denied = TurnWithARefusal();
  ASSERT_GT(second_denied, first_head);
  ASSERT_NO_FATAL_FAILURE(WaitForCheckpointStopAndShip(Head()));

  // The shipped log holds checkpoints of both runs, and no secret.
  std::ifstream shipped_in(shipped_);
  const std::string shipped((std::istreambuf_iterator<char>(shipped_in)),
                            std::istreambuf_iterator<char>());
  const std::vector<int64_t> logged = LoggedSequences(shipped);
  ASSERT_FALSE(logged.empty());
  EXPECT_THAT(shipped, Not(HasSubstr("PRIVATE KEY")));

  // Untouched, the log extends every shipped checkpoint.
  ASSERT_NO_FATAL_FAILURE(Start());
  CommandResult untouched =
      Ctl({"audit", "verify", "--checkpoints=" + shipped_, "--public_key=" + public_key});
  EXPECT_EQ(untouched.exit_code, 0) << untouched.output;
  EXPECT_THAT(untouched.output, HasSubstr(absl::StrCat(logged.size(), " checkpoints extended")));
  EXPECT_EQ(daemon_->Terminate(), 0);
  daemon_.reset();

  // The tampering, and the first shipped checkpoint it must break: the lowest at or past the
  // first changed record.
  const std::string db = data_ + "/audit.db";
  int64_t first_changed = 0;
  switch (GetParam()) {
    case Tamper::kRewriteDenied:
      ASSERT_THAT(audit::core::testing::RewriteDeniedAsAllowed(db, first_denied), IsOk());
      first_changed = first_denied;
      break;
    case Tamper::kTruncate:
      ASSERT_THAT(audit::core::testing::TruncateTail(db, second_denied - 1), IsOk());
      first_changed = second_denied;
      break;
    case Tamper::kRestoreEarlierCopy:
      std::filesystem::remove_all(data_);
      std::filesystem::copy(copy, data_, std::filesystem::copy_options::recursive);
      first_changed = StoredHead(data_ + "/audit.db") + 1;
      ASSERT_GE(first_changed, first_head + 1);
      break;
  }
  const auto first_bad = std::find_if(logged.begin(), logged.end(),
                                      [&](int64_t sequence) { return sequence >= first_changed; });
  ASSERT_NE(first_bad, logged.end()) << "no shipped checkpoint covers the change";

  ASSERT_NO_FATAL_FAILURE(Start());
  // Consistent: the chain alone cannot tell.
  CommandResult plain = Ctl({"audit", "verify"});
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  CommandResult checked =
      Ctl({"audit", "verify", "--checkpoints=" + shipped_, "--public_key=" + public_key});
  EXPECT_EQ(checked.exit_code, 1) << checked.output;
  EXPECT_THAT(checked.output, HasSubstr(absl::StrCat("BROKEN: first bad sequence ", *first_bad)));
  EXPECT_THAT(checked.output,
              HasSubstr(absl::StrCat("the checkpoint of sequence ", *first_bad, " (line ")));
  EXPECT_EQ(daemon_->Terminate(), 0);
}

INSTANTIATE_TEST_SUITE_P(EachTampering, ShippedCheckpointsTest,
                         ::testing::Values(Tamper::kRewriteDenied, Tamper::kTruncate,
                                           Tamper::kRestoreEarlierCopy));

}  // namespace
}  // namespace sharedos
