#include "tools/sharedosctl/cli.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::sharedosctl {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Invocation> Parse(std::vector<std::string> args, GlobalOptions* globals = nullptr) {
  GlobalOptions local;
  return ParseArgs(args, globals ? globals : &local);
}

std::string Message(const absl::StatusOr<Invocation>& parsed) {
  return std::string(parsed.status().message());
}

TEST(CliTest, ParsesACommandWithItsFlags) {
  auto parsed = Parse(
      {"grants", "list", "--namespace=world-demo", "--subject", "agent:a", "--include_revoked"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command, "grants list");
  EXPECT_EQ(parsed->Get("namespace"), "world-demo");
  EXPECT_EQ(parsed->Get("subject"), "agent:a");
  EXPECT_TRUE(parsed->GetBool("include_revoked"));
  EXPECT_FALSE(parsed->Has("issuer"));
  EXPECT_EQ(parsed->Get("issuer"), "");
}

TEST(CliTest, GlobalFlagsGoAnywhereAndKeepTheirDefaults) {
  GlobalOptions defaults;
  auto parsed = Parse({"audit", "verify"}, &defaults);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(defaults.target, "127.0.0.1:50051");
  EXPECT_EQ(defaults.token_file, "sharedos-data/admin.token");
  EXPECT_FALSE(defaults.json);
  EXPECT_EQ(defaults.timeout, absl::Seconds(10));

  GlobalOptions globals;
  parsed = Parse({"--target=localhost:1", "audit", "--json", "verify", "--timeout=3s",
                  "--token_file", "/t/admin.token", "--from=2"},
                 &globals);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->command, "audit verify");
  EXPECT_EQ(globals.target, "localhost:1");
  EXPECT_EQ(globals.token_file, "/t/admin.token");
  EXPECT_TRUE(globals.json);
  EXPECT_EQ(globals.timeout, absl::Seconds(3));
  EXPECT_EQ(parsed->Get("from"), "2");
  EXPECT_FALSE(parsed->Has("json"));
}

TEST(CliTest, UnknownCommandsAndFlagsAreUsageErrors) {
  EXPECT_THAT(Message(Parse({})), HasSubstr("no command"));
  EXPECT_THAT(Message(Parse({"grants"})), HasSubstr("unknown command \"grants\""));
  EXPECT_THAT(Message(Parse({"grants", "burn", "--namespace=n"})), HasSubstr("unknown command"));
  EXPECT_THAT(Message(Parse({"grants", "revoke", "--namespace=n", "--id=g", "--force"})),
              HasSubstr("unknown flag --force"));
  // A flag of another command is unknown here.
  EXPECT_THAT(Message(Parse({"audit", "verify", "--namespace=n"})),
              HasSubstr("unknown flag --namespace"));
}

TEST(CliTest, MissingRepeatedOrEmptyFlagsAreUsageErrors) {
  EXPECT_THAT(Message(Parse({"grants", "revoke", "--namespace=n"})), HasSubstr("needs --id"));
  EXPECT_THAT(Message(Parse({"grants", "show", "--namespace=a", "--namespace=b", "--id=g"})),
              HasSubstr("given twice"));
  EXPECT_THAT(Message(Parse({"grants", "show", "--namespace=", "--id=g"})),
              HasSubstr("must not be empty"));
  EXPECT_THAT(Message(Parse({"grants", "show", "--namespace=n", "--id"})),
              HasSubstr("--id needs a value"));
  EXPECT_THAT(Message(Parse({"--timeout=soon", "audit", "verify"})), HasSubstr("--timeout"));
  EXPECT_EQ(Parse({"audit", "verify", "--to=x"}).status().code(),
            absl::StatusCode::kOk);  // Values are checked by the command, not the parser.
}

TEST(CliTest, HelpSkipsTheOtherChecks) {
  auto parsed = Parse({"--help"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->help);
  EXPECT_TRUE(Parse({"grants", "nonsense", "--help"})->help);
}

TEST(CliTest, ParsesIntegers) {
  EXPECT_EQ(*ParseInt("max_uses", "3"), 3);
  EXPECT_THAT(std::string(ParseInt("max_uses", "three").status().message()),
              HasSubstr("--max_uses"));
}

TEST(CliTest, ParsesTurn) {
  GlobalOptions globals;
  auto turn = ParseArgs({"turn"}, &globals);
  ASSERT_TRUE(turn.ok()) << turn.status();
  EXPECT_EQ(turn->command, "turn");
  EXPECT_FALSE(turn->Has("host_token_file"));
  turn = ParseArgs({"turn", "--host_token_file=/d/host.token", "--json"}, &globals);
  ASSERT_TRUE(turn.ok()) << turn.status();
  EXPECT_EQ(turn->Get("host_token_file"), "/d/host.token");
  EXPECT_TRUE(globals.json);
  // Its flag belongs to it alone.
  EXPECT_FALSE(ParseArgs({"audit", "verify", "--host_token_file=x"}, &globals).ok());
  EXPECT_FALSE(ParseArgs({"turn", "--id=x"}, &globals).ok());
}

TEST(CliTest, UsageListsEveryCommand) {
  const std::string usage = UsageText();
  for (const char* command :
       {"grants issue", "grants derive", "grants revoke", "grants list", "grants show",
        "grants accept-restore", "policy put", "policy get", "escalations list", "escalations show",
        "escalations approve", "escalations deny", "audit query", "audit tail", "audit verify",
        "turn", "SHAREDOS_TARGET"}) {
    EXPECT_THAT(usage, HasSubstr(command));
  }
}

}  // namespace
}  // namespace sharedos::sharedosctl
