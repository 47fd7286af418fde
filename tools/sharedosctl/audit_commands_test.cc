#include "tools/sharedosctl/audit_commands.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grantstore_svc/client/operator_render.h"
#include "gtest/gtest.h"
#include "tools/sharedosctl/cli.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::RenderVerify;

namespace {

using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& content) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path, std::ios::trunc) << content;
  return path;
}

Invocation Parsed(std::vector<std::string> args) {
  GlobalOptions globals;
  auto parsed = ParseArgs(args, &globals);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : Invocation();
}

TEST(ReadCheckpointFileTest, ReadsOneCheckpointPerLineSkippingBlankLines) {
  const std::string path =
      TempFile("checkpoints.jsonl",
               "{\"sequence\":\"3\",\"headHash\":\"ab\",\"keyId\":\"k\",\"signature\":\"AAEC\"}\n\n"
               "  \n{\"sequence\":\"7\"}\n");
  auto checkpoints = ReadCheckpointFile(path);
  ASSERT_TRUE(checkpoints.ok()) << checkpoints.status();
  ASSERT_EQ(checkpoints->size(), 2u);
  EXPECT_EQ((*checkpoints)[0].sequence(), 3);
  EXPECT_EQ((*checkpoints)[0].signature(), std::string("\x00\x01\x02", 3));
  EXPECT_EQ((*checkpoints)[1].sequence(), 7);
}

TEST(ReadCheckpointFileTest, RefusesALineThatIsNotACheckpointNamingIt) {
  auto bad =
      ReadCheckpointFile(TempFile("bad.jsonl", "{\"sequence\":\"3\"}\n{\"colour\":\"red\"}\n"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("line 2"));
  auto empty = ReadCheckpointFile(TempFile("empty.jsonl", "\n"));
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("holds none"));
  auto missing = ReadCheckpointFile(TempFile("x", "") + ".missing");
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("--checkpoint: cannot read"));
}

// An audit.checkpoint log line as the services write it, the checkpoint's JSON in a string.
std::string LogLine(const std::string& checkpoint_json) {
  std::string escaped;
  for (char c : checkpoint_json) {
    if (c == '"') escaped += '\\';
    escaped += c;
  }
  return "{\"ts\":\"2026-12-06T08:00:00.000000Z\",\"level\":\"info\",\"service\":\"sharedosd\","
         "\"event\":\"audit.checkpoint\",\"sequence\":3,\"key_id\":\"k\",\"checkpoint\":\"" +
         escaped + "\"}";
}

TEST(ReadCheckpointLogFileTest, ReadsTheCheckpointLinesOfALogSkippingEveryOtherLine) {
  const std::string path =
      TempFile("exported.log",
               "sharedosd listening on 127.0.0.1:1\n"
               "{\"ts\":\"x\",\"event\":\"config\",\"port\":1}\n" +
                   LogLine("{\"sequence\":\"3\",\"headHash\":\"ab\",\"signature\":\"AAEC\"}") +
                   "\r\n"
                   // A collector's prefix before the JSON object.
                   "2026-12-06T08:00:01Z stderr F " +
                   LogLine("{\"sequence\":\"7\"}") + "\n" + std::string(100000, 'x') +
                   "\n"
                   "{\"event\":\"turn.ended\",\"note\":\"audit.checkpoint\"}\n" +
                   LogLine("{\"sequence\":\"9\"}"));
  auto checkpoints = ReadCheckpointLogFile(path);
  ASSERT_TRUE(checkpoints.ok()) << checkpoints.status();
  ASSERT_EQ(checkpoints->size(), 3u);
  EXPECT_EQ((*checkpoints)[0].checkpoint.sequence(), 3);
  EXPECT_EQ((*checkpoints)[0].checkpoint.signature(), std::string("\x00\x01\x02", 3));
  EXPECT_EQ((*checkpoints)[0].line, 3);
  EXPECT_EQ((*checkpoints)[1].checkpoint.sequence(), 7);
  EXPECT_EQ((*checkpoints)[1].line, 4);
  EXPECT_EQ((*checkpoints)[2].checkpoint.sequence(), 9);
  EXPECT_EQ((*checkpoints)[2].line, 7);
}

TEST(ReadCheckpointLogFileTest, RefusesAMalformedCheckpointLineNamingIt) {
  for (const std::string& bad : std::vector<std::string>{
           // Names the event but is not JSON.
           "the \"audit.checkpoint\" line was cut {\"event\":\"audit.checkpoint\",",
           // No checkpoint text.
           "{\"event\":\"audit.checkpoint\",\"sequence\":3}",
           // A checkpoint text that is not a checkpoint.
           LogLine("{\"colour\":\"red\"}"),
           // Longer than the bound.
           LogLine("{\"sequence\":\"3\"}") + std::string(20000, ' ')}) {
    auto read = ReadCheckpointLogFile(TempFile("bad.log", "{\"event\":\"config\"}\n" + bad + "\n"));
    EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument) << bad.substr(0, 80);
    EXPECT_THAT(std::string(read.status().message()), HasSubstr("--checkpoints: "));
    EXPECT_THAT(std::string(read.status().message()), HasSubstr(" line 2: ")) << read.status();
  }
  auto none = ReadCheckpointLogFile(TempFile("none.log", "{\"event\":\"config\"}\n"));
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("holds no audit.checkpoint line"));
  auto missing = ReadCheckpointLogFile(TempFile("y", "") + ".missing");
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("--checkpoints: cannot read"));
}

TEST(AuditVerifyTest, LoggedCheckpointFlagsThatCannotBeHonouredAreUsageErrors) {
  Clients none;  // No stubs: a call would crash.
  const std::string log = TempFile("one.log", LogLine("{\"sequence\":\"1\"}") + "\n");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"audit", "verify", "--checkpoints=" + log},
           {"audit", "verify", "--public_key=" + log},
           {"audit", "verify", "--checkpoints=" + log, "--public_key=" + log + ".missing"},
           {"audit", "verify", "--checkpoints=" + log, "--public_key=" + log, "--from=2"},
           {"audit", "verify", "--checkpoints=" + log, "--public_key=" + log,
            "--checkpoint=" + log}}) {
    std::ostringstream out, err;
    EXPECT_EQ(AuditVerify(Parsed(args), GlobalOptions(), none, out, err), kExitUsage)
        << args.back();
    EXPECT_THAT(err.str(), HasSubstr("--")) << err.str();
    EXPECT_EQ(out.str(), "");
  }
}

TEST(AuditVerifyTest, CheckpointFlagsThatCannotBeHonouredAreUsageErrors) {
  Clients none;  // No stubs: a call would crash.
  const std::string file = TempFile("one.jsonl", "{\"sequence\":\"1\"}\n");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"audit", "verify", "--checkpoint=" + file, "--from=2"},
           {"audit", "verify", "--checkpoint_public_key=" + file},
           {"audit", "verify", "--checkpoint=" + file + ".missing"}}) {
    std::ostringstream out, err;
    EXPECT_EQ(AuditVerify(Parsed(args), GlobalOptions(), none, out, err), kExitUsage)
        << args.back();
    EXPECT_THAT(err.str(), HasSubstr("--checkpoint"));
    EXPECT_EQ(out.str(), "");
  }
}

TEST(AuditVerifyTest, RendersCheckpointsAndAFaultWithoutABadRecord) {
  audit::v1::VerifyResponse verify;
  verify.set_ok(true);
  verify.set_checked(9);
  verify.set_head_hash("ab");
  verify.set_checkpoints_verified(2);
  EXPECT_EQ(RenderVerify(verify), "ok: 9 records verify; head ab; 2 checkpoints extended\n");
  verify.set_ok(false);
  verify.set_checkpoints_verified(0);
  verify.set_detail("checkpoints[0] (sequence 6): signature does not verify");
  EXPECT_EQ(RenderVerify(verify),
            "BROKEN: (9 records checked): checkpoints[0] (sequence 6): signature does not "
            "verify\n");
  verify.set_first_bad_sequence(6);
  EXPECT_THAT(RenderVerify(verify), HasSubstr("BROKEN: first bad sequence 6 (9 records"));
}

}  // namespace
}  // namespace sharedos::sharedosctl
