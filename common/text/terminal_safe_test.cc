#include "common/text/terminal_safe.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::text {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// True when `text` holds a byte a terminal acts on (C0, DEL) or a C1 control encoded as UTF-8.
bool HasRawControl(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7F) return true;
    if (byte == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      return true;
    }
  }
  return false;
}

TEST(TerminalSafeTest, PlainTextAndUnicodeAreUnchanged) {
  EXPECT_EQ(TerminalSafe("agent:agent-assistant"), "agent:agent-assistant");
  EXPECT_EQ(TerminalSafe("Zürich — 東京 🙂"), "Zürich — 東京 🙂");
  EXPECT_EQ(TerminalSafe(""), "");
}

TEST(TerminalSafeTest, AnsiSequencesNewlinesAndTitlesBecomeInertText) {
  const std::string hostile = "ok\x1b[2K\r\x1b]0;pwned\x07\nesc-1  approved  world-demo\tx\x7f";
  const std::string safe = TerminalSafe(hostile);
  EXPECT_FALSE(HasRawControl(safe)) << safe;
  EXPECT_EQ(safe, "ok\\x1b[2K\\r\\x1b]0;pwned\\x07\\nesc-1  approved  world-demo\\tx\\x7f");
}

TEST(TerminalSafeTest, C1BidiAndSeparatorsAreEscaped) {
  // U+009B (CSI in one character), U+202E (right-to-left override), U+2066, U+2028.
  const std::string safe = TerminalSafe(
      "a\xc2\x9b"
      "31mb\xe2\x80\xae"
      "c\xe2\x81\xa6"
      "d\xe2\x80\xa8");
  EXPECT_EQ(safe, "a\\u009b31mb\\u202ec\\u2066d\\u2028");
}

TEST(TerminalSafeTest, BackslashesAreDoubledSoEscapesAreUnambiguous) {
  EXPECT_EQ(TerminalSafe("C:\\x1b"), "C:\\\\x1b");
}

TEST(TerminalSafeTest, MalformedUtf8IsEscapedBytewise) {
  EXPECT_EQ(TerminalSafe("a\xff"
                         "b"),
            "a\\xffb");
  EXPECT_EQ(TerminalSafe("\xc0\x80"), "\\xc0\\x80");           // overlong NUL
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(TerminalSafe("\xe2\x80"), "\\xe2\\x80");           // truncated
}

TEST(JsonTerminalSafeTest, EscapesWhatJsonLeavesRawAndStaysTheSameValue) {
  nlohmann::json value = {{"reason",
                           "a\x7f"
                           "b\xc2\x9b"
                           "c\xe2\x80\xae"
                           "d\ne\x1b"}};
  const std::string printed = value.dump(-1, ' ', false);
  ASSERT_TRUE(HasRawControl(printed));  // nlohmann leaves DEL and C1 raw
  const std::string safe = JsonTerminalSafe(printed);
  EXPECT_FALSE(HasRawControl(safe)) << safe;
  EXPECT_THAT(safe, Not(HasSubstr("\xe2\x80\xae")));
  EXPECT_EQ(nlohmann::json::parse(safe), value);
}

TEST(JsonTerminalSafeTest, LeavesJsonWhitespaceAndOrdinaryTextAlone) {
  const std::string json = "{\n  \"a\": \"Zürich\"\n}\n";
  EXPECT_EQ(JsonTerminalSafe(json), json);
}

}  // namespace
}  // namespace sharedos::common::text
