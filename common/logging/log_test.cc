#include "common/logging/log.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::logging {
namespace {

TEST(LogTest, OneJsonObjectWithLevelServiceEventTraceAndFields) {
  SetService("audit_svc");
  const std::string line =
      FormatLine(Level::kWarning, "turn.ended", "trace-1", {{"status", "escalated"}, {"n", 3}});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const nlohmann::json parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["level"], "warning");
  EXPECT_EQ(parsed["service"], "audit_svc");
  EXPECT_EQ(parsed["event"], "turn.ended");
  EXPECT_EQ(parsed["trace_id"], "trace-1");
  EXPECT_EQ(parsed["status"], "escalated");
  EXPECT_EQ(parsed["n"], 3);
  EXPECT_TRUE(parsed["ts"].is_string());
}

TEST(LogTest, NoTraceIdWhenEmptyReservedKeysKeptAndBadUtf8Replaced) {
  SetService("sharedosd");
  const nlohmann::json parsed = nlohmann::json::parse(
      FormatLine(Level::kInfo, "config", "", {{"event", "spoofed"}, {"x", "\xff\n"}}));
  EXPECT_FALSE(parsed.contains("trace_id"));
  EXPECT_EQ(parsed["event"], "config");
  EXPECT_EQ(parsed["x"].get<std::string>().find('\xff'), std::string::npos);
}

TEST(LogTest, NoControlCharacterReachesTheLineRaw) {
  SetService("sharedosd");
  const std::string value =
      "tool\x1b]0;pwned\x07\n\x7f\xc2\x9b"
      "31m\xe2\x80\xae";
  const std::string line = FormatLine(Level::kInfo, "turn.ended", "", {{"tool", value}});
  for (size_t i = 0; i < line.size(); ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    EXPECT_FALSE(byte < 0x20 || byte == 0x7F) << "raw control at " << i << ": " << line;
    if (byte == 0xC2 && i + 1 < line.size()) {
      EXPECT_FALSE(static_cast<unsigned char>(line[i + 1]) <= 0x9F) << "raw C1: " << line;
    }
  }
  EXPECT_EQ(line.find("\xe2\x80\xae"), std::string::npos) << line;
  // Still one JSON object carrying the same value.
  EXPECT_EQ(nlohmann::json::parse(line)["tool"], value);
}

TEST(LogTest, SecretsAppearOnlyAsSetOrUnset) {
  EXPECT_STREQ(SecretState(""), "unset");
  EXPECT_STREQ(SecretState("hunter2"), "set");
}

}  // namespace
}  // namespace sharedos::common::logging
