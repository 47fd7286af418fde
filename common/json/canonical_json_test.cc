#include "common/json/canonical_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using Json = nlohmann::json;

struct Golden {
  Json value;
  std::string expected;
};

void ExpectGoldens(const std::vector<Golden>& goldens) {
  for (const Golden& golden : goldens) {
    EXPECT_EQ(CanonicalJson(golden.value), golden.expected) << golden.expected;
    EXPECT_THAT(StrictCanonicalJson(golden.value), IsOkAndHolds(golden.expected));
  }
}

TEST(CanonicalJsonTest, Literals) {
  ExpectGoldens({
      {Json(nullptr), "null"},
      {Json(true), "true"},
      {Json(false), "false"},
  });
}

TEST(CanonicalJsonTest, Integers) {
  ExpectGoldens({
      {Json(0), "0"},
      {Json(-1), "-1"},
      {Json(std::numeric_limits<std::int64_t>::min()), "-9223372036854775808"},
      {Json(std::numeric_limits<std::uint64_t>::max()), "18446744073709551615"},
      {Json::parse("-0"), "0"},
      {Json::parse("9007199254740993"), "9007199254740993"},
  });
}

// Expected strings are JavaScript's JSON.stringify output (checked with Node).
TEST(CanonicalJsonTest, FloatsFollowEcmaScriptNumberToString) {
  ExpectGoldens({
      {Json(1.0), "1"},
      {Json(-0.0), "0"},
      {Json(100.0), "100"},
      {Json(0.1), "0.1"},
      {Json(1.5), "1.5"},
      {Json(-1.5), "-1.5"},
      {Json(123.456), "123.456"},
      {Json(0.1 + 0.2), "0.30000000000000004"},
      {Json(1e21), "1e+21"},
      {Json(1e20), "100000000000000000000"},
      {Json(1.2345678901234568e20), "123456789012345680000"},
      {Json(12345678901234567890.0), "12345678901234567000"},
      {Json(9007199254740992.0), "9007199254740992"},
      {Json(1e-6), "0.000001"},
      {Json(1.234e-6), "0.000001234"},
      {Json(1.23e-5), "0.0000123"},
      {Json(1e-7), "1e-7"},
      {Json(-1e-7), "-1e-7"},
      {Json(1.5e-7), "1.5e-7"},
      {Json(1e300), "1e+300"},
      {Json(5e-324), "5e-324"},
      {Json(1.7976931348623157e308), "1.7976931348623157e+308"},
      {Json::parse("1.0"), "1"},
      {Json::parse("2.50"), "2.5"},
  });
}

TEST(CanonicalJsonTest, NonFiniteNumbersRenderAsNullLikeJsonStringify) {
  EXPECT_EQ(CanonicalJson(Json(std::nan(""))), "null");
  EXPECT_EQ(CanonicalJson(Json(std::numeric_limits<double>::infinity())), "null");
  EXPECT_EQ(CanonicalJson(Json::array({-std::numeric_limits<double>::infinity()})), "[null]");
}

TEST(CanonicalJsonTest, StringsEscapeLikeJsonStringify) {
  ExpectGoldens({
      {Json(""), R"("")"},
      {Json("plain"), R"("plain")"},
      {Json("a\"b\\c"), R"("a\"b\\c")"},
      {Json("\b\f\n\r\t"), R"("\b\f\n\r\t")"},
      {Json(std::string("\x00\x01\x1f", 3)), R"("\u0000\u0001\u001f")"},
      {Json("\x7f/</script>"), "\"\x7f/</script>\""},
      {Json("caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80"),
       "\"caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80\""},
  });
}

// Strings assembled from pieces whose JSON.stringify text is known, long and short: printable
// ASCII is copied in runs, everything else one character at a time, and the text is the pieces'.
TEST(CanonicalJsonTest, AssembledStringsEscapeAsTheirPieces) {
  struct Piece {
    std::string text;
    std::string json;
    bool valid;
  };
  const std::vector<Piece> pieces = {
      {"a", "a", true},
      {"~ ", "~ ", true},
      {"\"", "\\\"", true},
      {"\\", "\\\\", true},
      {"\n", "\\n", true},
      {"\x01", "\\u0001", true},
      {"\x1F", "\\u001f", true},
      {"\x7F", "\x7F", true},
      {std::string("\0", 1), "\\u0000", true},
      {"\xC3\xA9", "\xC3\xA9", true},
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80", true},
      {"\xFF", "\xEF\xBF\xBD", false},  // ill-formed: U+FFFD
  };
  std::mt19937_64 random(0x2545F4914F6CDD1DULL);  // fixed seed: the same strings every run
  auto next = [&random](size_t bound) { return static_cast<size_t>(random() % bound); };
  for (int round = 0; round < 4000; ++round) {
    std::string text;
    std::string expected = "\"";
    bool valid = true;
    const size_t count = next(40);
    for (size_t i = 0; i < count; ++i) {
      const Piece& piece = next(3) == 0 ? pieces[next(pieces.size())] : pieces[next(2)];
      text += piece.text;
      expected += piece.json;
      valid = valid && piece.valid;
    }
    expected += "\"";
    std::string out = "prefix:";
    EXPECT_EQ(AppendJsonStringTo(text, &out), valid) << text;
    EXPECT_EQ(out, "prefix:" + expected) << text;
  }
}

TEST(CanonicalJsonTest, ArraysKeepOrderWithoutWhitespace) {
  ExpectGoldens({
      {Json::array(), "[]"},
      {Json::parse(R"([3, 1, 2])"), "[3,1,2]"},
      {Json::parse(R"([1, [2, [3, []]], {}, "x", null])"), R"([1,[2,[3,[]]],{},"x",null])"},
  });
}

TEST(CanonicalJsonTest, ObjectsSortKeysRecursively) {
  ExpectGoldens({
      {Json::object(), "{}"},
      {Json::parse(R"({"b": 1, "a": 2})"), R"({"a":2,"b":1})"},
      {Json::parse(R"({"z": {"y": [ {"d": 1, "c": 2} ], "x": {}}, "a": []})"),
       R"({"a":[],"z":{"x":{},"y":[{"c":2,"d":1}]}})"},
      // Golden and hash computed with the TypeScript canonicaliser's shape in
      // Node.
      {Json::parse("{\"b\":1,\"a\":[1,2.5,\"x\"],\"\xc3\xa9\":{\"z\":null,"
                   "\"B\":true,\"a\":false}}"),
       "{\"a\":[1,2.5,\"x\"],\"b\":1,\"\xc3\xa9\":{\"B\":true,\"a\":false,"
       "\"z\":null}}"},
  });
}

TEST(CanonicalJsonTest, KeysSortByUtf16CodeUnitsNotBytes) {
  // UTF-8 byte order would put U+E000 (EE 80 80) and U+FF21 (EF BC A1) before
  // U+1F600 (F0 9F 98 80); UTF-16 puts U+1F600 (D83D DE00) first.
  Json value = Json::object();
  value["\xf0\x9f\x98\x80"] = 1;  // U+1F600
  value["\xee\x80\x80"] = 2;      // U+E000
  value["\xef\xbc\xa1"] = 3;      // U+FF21
  value["z"] = 4;
  value["\xc3\xa9"] = 5;  // U+00E9
  value["B"] = 6;
  value["a"] = 7;
  value[""] = 8;
  ExpectGoldens({
      {value,
       "{\"\":8,\"B\":6,\"a\":7,\"z\":4,\"\xc3\xa9\":5,\"\xf0\x9f\x98\x80\":1,"
       "\"\xee\x80\x80\":2,\"\xef\xbc\xa1\":3}"},
  });
}

TEST(CanonicalJsonTest, KeysAreEscaped) {
  ExpectGoldens({
      {Json::parse(R"({"a\"b": 1, "\n": 2})"), R"({"\n":2,"a\"b":1})"},
  });
}

TEST(CanonicalJsonTest, DeepNestingDoesNotOverflowTheStack) {
  constexpr int kDepth = 200000;
  const std::string text = std::string(kDepth, '[') + "{\"k\":1}" + std::string(kDepth, ']');
  const Json value = Json::parse(text);
  const std::string expected = std::string(kDepth, '[') + R"({"k":1})" + std::string(kDepth, ']');
  EXPECT_EQ(CanonicalJson(value), expected);
}

TEST(CanonicalJsonTest, IllFormedUtf8BecomesReplacementCharacters) {
  const std::string kFffd = "\xef\xbf\xbd";
  EXPECT_EQ(CanonicalJson(Json("a\xff"
                               "b")),
            "\"a" + kFffd + "b\"");
  // A truncated sequence is one maximal subpart.
  EXPECT_EQ(CanonicalJson(Json("\xe2\x82")), "\"" + kFffd + "\"");
  // An encoded surrogate is three ill-formed bytes.
  EXPECT_EQ(CanonicalJson(Json("\xed\xa0\x80")), "\"" + kFffd + kFffd + kFffd + "\"");
  // Overlong encodings are rejected byte by byte.
  EXPECT_EQ(CanonicalJson(Json("\xc0\xaf")), "\"" + kFffd + kFffd + "\"");
  Json object = Json::object();
  object["\xff"] = 1;
  EXPECT_EQ(CanonicalJson(object), "{\"" + kFffd + "\":1}");
}

TEST(CanonicalJsonTest, BinaryRendersAsByteArray) {
  EXPECT_EQ(CanonicalJson(Json::binary({0, 7, 255})), "[0,7,255]");
  EXPECT_EQ(CanonicalJson(Json::array({Json::binary({})})), "[[]]");
}

TEST(StrictCanonicalJsonTest, RefusesWhatJsonTextCannotCarry) {
  EXPECT_THAT(StrictCanonicalJson(Json(std::nan(""))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot canonicalise JSON: a NaN or infinite number at \"\""));
  Json value = Json::parse(R"({"a": [1, {"b/c": "x", "d~": 2}]})");
  value["a"][1]["b/c"] = "bad\xff";
  EXPECT_THAT(StrictCanonicalJson(value), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   "cannot canonicalise JSON: a string that is not "
                                                   "well-formed UTF-8 at \"/a/1/b~1c\""));
  value["a"][1]["b/c"] = "ok";
  value["a"][1]["d~"] = std::numeric_limits<double>::infinity();
  EXPECT_THAT(StrictCanonicalJson(value),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot canonicalise JSON: a NaN or infinite number at "
                       "\"/a/1/d~0\""));
  Json bad_key = Json::object();
  bad_key["x"]["ok"] = 1;
  bad_key["x"]["\xc3"] = 1;
  EXPECT_THAT(StrictCanonicalJson(bad_key),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot canonicalise JSON: an object key that is not "
                       "well-formed UTF-8 at \"/x\""));
  EXPECT_THAT(StrictCanonicalJson(Json::array({1, Json::binary({1})})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot canonicalise JSON: a binary value at \"/1\""));
  EXPECT_THAT(StrictCanonicalJson(Json(Json::value_t::discarded)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot canonicalise JSON: a discarded value at \"\""));
}

TEST(Sha256HexOfCanonicalJsonTest, HashesTheCanonicalText) {
  EXPECT_EQ(Sha256HexOfCanonicalJson(Json::array()),
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");
  // sha256Hex(canonicalJson(v)) computed in Node for the same value.
  EXPECT_EQ(Sha256HexOfCanonicalJson(
                Json::parse("{\"b\":1,\"a\":[1,2.5,\"x\"],\"\xc3\xa9\":{\"z\":null,\"B\":true,"
                            "\"a\":false}}")),
            "f99d60d1627de608a4dcf0e29ec5ca1a76ee8e58ee3b3cb4646455ce88283f69");
  // Key order and whitespace of the input do not matter.
  EXPECT_EQ(Sha256HexOfCanonicalJson(Json::parse(R"({ "x": 1, "y": [true] })")),
            Sha256HexOfCanonicalJson(Json::parse(R"({"y":[true],"x":1.0})")));
}

TEST(EcmaScriptNumberToStringTest, NonFiniteValues) {
  EXPECT_EQ(EcmaScriptNumberToString(std::nan("")), "NaN");
  EXPECT_EQ(EcmaScriptNumberToString(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(EcmaScriptNumberToString(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(EcmaScriptNumberToString(-2.5e-8), "-2.5e-8");
}

}  // namespace
}  // namespace sharedos::common
