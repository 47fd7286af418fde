#include "tools/sharedosctl/audit_commands.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/render.h"

namespace sharedos::sharedosctl {
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
