#include "common/validation/bounds.h"

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "common/status/status_matchers.h"
#include "common/validation/limits.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"

namespace sharedos::common::validation {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::Optional;

constexpr char kEmoji[] = "\xF0\x9F\x98\x80";  // U+1F600: 4 bytes, 2 UTF-16 units.
constexpr char kEuro[] = "\xE2\x82\xAC";       // U+20AC: 3 bytes, 1 unit.

std::string Repeat(absl::string_view s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out.append(s.data(), s.size());
  return out;
}

// "" expects OK; anything else the exact INVALID_ARGUMENT message.
void ExpectResult(const absl::Status& status, const std::string& error) {
  if (error.empty()) {
    EXPECT_THAT(status, IsOk());
  } else {
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, error));
  }
}

TEST(PathsTest, Compose) {
  EXPECT_EQ(FieldPath("", "grant"), "grant");
  EXPECT_EQ(FieldPath("grant", "id"), "grant.id");
  EXPECT_EQ(IndexPath("grant.capabilities", 3), "grant.capabilities[3]");
  EXPECT_EQ(KeyPath("m", "k\"\n\xC3\xA9"), "m[\"k\\\"\\n\xC3\xA9\"]");
  EXPECT_THAT(InvalidArgumentAt("a.b", "empty"),
              StatusIs(absl::StatusCode::kInvalidArgument, "a.b: empty"));
  EXPECT_THAT(InvalidArgumentAt("", "empty"),
              StatusIs(absl::StatusCode::kInvalidArgument, "empty"));
}

TEST(Utf16PrefixTest, CutsOnCharacterBoundaries) {
  EXPECT_EQ(Utf16Prefix("", 3), "");
  EXPECT_EQ(Utf16Prefix("abcdef", 3), "abc");
  EXPECT_EQ(Utf16Prefix("abc", 3), "abc");
  EXPECT_EQ(Utf16Prefix("ab", 0), "");
  // U+00E9: 2 bytes, 1 unit; U+1F600: 4 bytes, 2 units, never split.
  EXPECT_EQ(Utf16Prefix("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(Utf16Prefix("a\xF0\x9F\x98\x80", 2), "a");
  EXPECT_EQ(Utf16Prefix("a\xF0\x9F\x98\x80", 3), "a\xF0\x9F\x98\x80");
  // An invalid byte counts as one unit.
  EXPECT_EQ(Utf16Prefix("\xFF"
                        "ab",
                        2),
            "\xFF"
            "a");
}

TEST(Utf16LengthTest, CountsCodeUnits) {
  EXPECT_THAT(Utf16Length(""), Optional(0u));
  EXPECT_THAT(Utf16Length("abc"), Optional(3u));
  EXPECT_THAT(Utf16Length("\xC3\xA9"), Optional(1u));  // é
  EXPECT_THAT(Utf16Length(kEuro), Optional(1u));
  EXPECT_THAT(Utf16Length(kEmoji), Optional(2u));
  EXPECT_THAT(Utf16Length(std::string("a\0b", 3)), Optional(3u));
  EXPECT_THAT(Utf16Length("\xF4\x8F\xBF\xBF"), Optional(2u));  // U+10FFFF
}

TEST(Utf16LengthTest, RejectsInvalidUtf8) {
  for (const char* bad : {
           "\x80",              // lone continuation byte
           "\xC0\x80",          // overlong NUL
           "\xC1\xBF",          // overlong
           "\xE0\x80\xAF",      // overlong '/'
           "\xED\xA0\x80",      // surrogate U+D800
           "\xF4\x90\x80\x80",  // above U+10FFFF
           "\xE2\x82",          // truncated
           "a\xFF",             // invalid byte
       }) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(Utf16Length(bad), std::nullopt);
  }
}

TEST(TrimWhitespaceTest, TrimsWhatJavaScriptTrims) {
  const struct {
    std::string in;
    std::string out;
  } cases[] = {
      {" a ", "a"},
      {"a", "a"},
      {"", ""},
      {"   ", ""},
      {"a b", "a b"},
      {"\t\n\v\f\r a \r\n", "a"},
      {"\xC2\xA0x\xC2\xA0", "x"},                      // U+00A0
      {"\xE3\x80\x80x\xEF\xBB\xBF", "x"},              // U+3000, U+FEFF
      {"\xE2\x80\x80x\xE2\x80\x8A", "x"},              // U+2000, U+200A
      {"\xE2\x80\xA8x\xE2\x80\xA9", "x"},              // U+2028, U+2029
      {"\xC2\x85x", "\xC2\x85x"},                      // U+0085 is not trimmed
      {"\xE2\x80\x8Bx", "\xE2\x80\x8Bx"},              // U+200B is not trimmed
      {std::string("\0x", 2), std::string("\0x", 2)},  // NUL is not trimmed
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    EXPECT_EQ(TrimWhitespace(c.in), c.out);
  }
}

// Strings assembled from pieces whose length, validity and whiteness are known, at every length
// around the eight-byte ASCII steps: the answers are those of the pieces, wherever a step falls.
TEST(Utf16LengthTest, AssembledStringsAnswerAsTheirPieces) {
  struct Piece {
    std::string text;
    size_t units;
    bool valid;
    bool white;
  };
  const std::vector<Piece> pieces = {
      {"a", 1, true, false},
      {"Z", 1, true, false},
      {" ", 1, true, true},
      {"\t", 1, true, true},
      {"\x7F", 1, true, false},
      {std::string("\0", 1), 1, true, false},
      {"\xC3\xA9", 1, true, false},
      {kEuro, 1, true, false},
      {kEmoji, 2, true, false},
      {"\xC2\xA0", 1, true, true},      // U+00A0
      {"\xE2\x80\x80", 1, true, true},  // U+2000
      {"\xFF", 1, false, false},        // invalid: content
  };
  std::mt19937_64 random(0x9E3779B97F4A7C15ULL);  // fixed seed: the same strings every run
  auto next = [&random](size_t bound) { return static_cast<size_t>(random() % bound); };
  for (int round = 0; round < 4000; ++round) {
    // Mostly ASCII, as identifiers are, so that eight-byte runs are common.
    const size_t count = next(40);
    std::string text;
    size_t units = 0;
    bool valid = true;
    size_t first_content = std::string::npos;  // byte offsets of the content, for trimming
    size_t content_end = 0;
    for (size_t i = 0; i < count; ++i) {
      const Piece& piece = next(3) == 0 ? pieces[next(pieces.size())] : pieces[next(2)];
      if (!piece.white) {
        if (first_content == std::string::npos) first_content = text.size();
        content_end = text.size() + piece.text.size();
      }
      text += piece.text;
      units += piece.units;
      valid = valid && piece.valid;
    }
    SCOPED_TRACE(absl::CHexEscape(text));
    if (valid) {
      EXPECT_THAT(Utf16Length(text), Optional(units));
    } else {
      EXPECT_EQ(Utf16Length(text), std::nullopt);
    }
    const std::string trimmed = first_content == std::string::npos
                                    ? std::string()
                                    : text.substr(first_content, content_end - first_content);
    EXPECT_EQ(TrimWhitespace(text), trimmed);
  }
}

TEST(CheckTrimmedStringTest, IdentifierBoundsAndTrimming) {
  const struct {
    std::string in;
    std::string out;  // value after the call
    std::string error;
  } cases[] = {
      {"a", "a", ""},
      {" a ", "a", ""},
      {"  x y\t", "x y", ""},
      {std::string(256, 'a'), std::string(256, 'a'), ""},
      {std::string(257, 'a'), std::string(257, 'a'), "id: longer than 256"},
      {"  " + std::string(256, 'a') + " ", std::string(256, 'a'), ""},
      {Repeat(kEmoji, 128), Repeat(kEmoji, 128), ""},
      {Repeat(kEmoji, 128) + "a", Repeat(kEmoji, 128) + "a", "id: longer than 256"},
      {Repeat(kEuro, 256), Repeat(kEuro, 256), ""},
      {Repeat(kEuro, 257), Repeat(kEuro, 257), "id: longer than 256"},
      {"", "", "id: empty"},
      {"   ", "", "id: empty"},
      {"\xE3\x80\x80", "", "id: empty"},
      {"a\xFF", "a\xFF", "id: invalid UTF-8"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.in);
    std::string value = c.in;
    ExpectResult(CheckIdentifier(&value, "id"), c.error);
    EXPECT_EQ(value, c.out);
  }
}

TEST(CheckTrimmedStringTest, PurposeAndActionBounds) {
  const struct {
    absl::Status (*check)(std::string*, const PathRef&);
    size_t length;
    std::string error;
  } cases[] = {
      {CheckPurpose, kMaxPurposeLength, ""},
      {CheckPurpose, kMaxPurposeLength + 1, "f: longer than 512"},
      {CheckAction, kMaxActionLength, ""},
      {CheckAction, kMaxActionLength + 1, "f: longer than 128"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.length);
    std::string value = " " + std::string(c.length, 'p') + " ";
    ExpectResult(c.check(&value, "f"), c.error);
  }
  std::string blank = " \t ";
  EXPECT_THAT(CheckPurpose(&blank, "f"), StatusIs(absl::StatusCode::kInvalidArgument, "f: empty"));
}

TEST(CheckOptionalIdentifierTest, EmptyIsAbsentBlankIsNot) {
  std::string empty;
  EXPECT_THAT(CheckOptionalIdentifier(&empty, "p"), IsOk());
  std::string blank = "  ";
  EXPECT_THAT(CheckOptionalIdentifier(&blank, "p"),
              StatusIs(absl::StatusCode::kInvalidArgument, "p: empty"));
  std::string padded = " g ";
  EXPECT_THAT(CheckOptionalIdentifier(&padded, "p"), IsOk());
  EXPECT_EQ(padded, "g");
}

TEST(CheckStringTest, UntrimmedBounds) {
  ExpectResult(CheckString(std::string(4096, 'm'), 1, 4096, "m"), "");
  ExpectResult(CheckString(std::string(4097, 'm'), 1, 4096, "m"), "m: longer than 4096");
  ExpectResult(CheckString("", 1, 4096, "m"), "m: empty");
  ExpectResult(CheckString(" ", 1, 4096, "m"), "");  // not trimmed
  ExpectResult(CheckString("", 0, 4, "m"), "");
  ExpectResult(CheckString("ab", 3, 4, "m"), "m: shorter than 3");
  ExpectResult(CheckString("\xC0", 1, 4, "m"), "m: invalid UTF-8");
}

TEST(CheckPathSegmentTest, Rules) {
  const struct {
    std::string segment;
    std::string error;
  } cases[] = {
      {"a", ""},
      {"cell-3", ""},
      {"...", ""},
      {".hidden", ""},
      {"a b", ""},
      {"caf\xC3\xA9", ""},
      {std::string(256, 's'), ""},
      {Repeat(kEmoji, 128), ""},
      {std::string(257, 's'), "s: longer than 256"},
      {Repeat(kEmoji, 128) + "s", "s: longer than 256"},
      {"", "s: empty"},
      {" a", "s: leading or trailing whitespace"},
      {"a ", "s: leading or trailing whitespace"},
      {"\ta", "s: leading or trailing whitespace"},
      {"a\xC2\xA0", "s: leading or trailing whitespace"},
      {" ", "s: leading or trailing whitespace"},
      {".", "s: is \".\""},
      {"..", "s: is \"..\""},
      {"a/b", "s: contains '/'"},
      {"/", "s: contains '/'"},
      {"a\\b", "s: contains '\\'"},
      {std::string("a\0b", 3), "s: contains control character U+0000"},
      {"a\x01z", "s: contains control character U+0001"},
      {"a\nz", "s: contains control character U+000A"},
      {"a\x1Fz", "s: contains control character U+001F"},
      {"a\x7Fz", "s: contains control character U+007F"},
      {"a\xFF", "s: invalid UTF-8"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.segment);
    ExpectResult(CheckPathSegment(c.segment, "s"), c.error);
  }
}

TEST(CheckToolNameTest, Rules) {
  const std::string invalid = " (allowed: A-Z a-z 0-9 _ . -)";
  const struct {
    std::string name;
    std::string error;
  } cases[] = {
      {"github.search", ""},
      {"A_b-c.9", ""},
      {std::string(128, 't'), ""},
      {std::string(129, 't'), "t: longer than 128"},
      {"", "t: empty"},
      {" a", "t: invalid character at offset 0" + invalid},
      {"a b", "t: invalid character at offset 1" + invalid},
      {"a/b", "t: invalid character at offset 1" + invalid},
      {"caf\xC3\xA9", "t: invalid character at offset 3" + invalid},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ExpectResult(CheckToolName(c.name, "t"), c.error);
  }
}

TEST(CheckProtocolVersionTest, OnlyOne) {
  ExpectResult(CheckProtocolVersion("1", "v"), "");
  for (const char* bad : {"2", "", " 1", "1.0", "v1"}) {
    SCOPED_TRACE(bad);
    ExpectResult(CheckProtocolVersion(bad, "v"), "v: must be \"1\"");
  }
}

TEST(CheckContentHashTest, SixtyFourLowercaseHex) {
  const std::string error = "h: must be 64 lowercase hex digits";
  ExpectResult(CheckContentHash(std::string(64, 'f'), "h"), "");
  ExpectResult(CheckContentHash(Repeat("0123456789abcdef", 4), "h"), "");
  ExpectResult(CheckContentHash(std::string(63, 'f'), "h"), error);
  ExpectResult(CheckContentHash(std::string(65, 'f'), "h"), error);
  ExpectResult(CheckContentHash(std::string(64, 'F'), "h"), error);
  ExpectResult(CheckContentHash(std::string(64, 'g'), "h"), error);
}

TEST(CheckCountTest, Bounds) {
  ExpectResult(CheckCount(0, 0, 64, "c"), "");
  ExpectResult(CheckCount(64, 1, 64, "c"), "");
  ExpectResult(CheckCount(65, 1, 64, "c"), "c: more than 64");
  ExpectResult(CheckCount(0, 1, 64, "c"), "c: empty");
  ExpectResult(CheckCount(1, 2, 64, "c"), "c: fewer than 2");
}

TEST(CheckTimestampTest, Range) {
  const std::string seconds = "t: seconds out of range (0001-01-01 .. 9999-12-31)";
  const std::string nanos = "t: nanos out of range (0 .. 999999999)";
  const struct {
    int64_t seconds;
    int32_t nanos;
    std::string error;
  } cases[] = {
      {0, 0, ""},
      {kMinTimestampSeconds, 0, ""},
      {kMaxTimestampSeconds, kMaxTimestampNanos, ""},
      {kMinTimestampSeconds - 1, 0, seconds},
      {kMaxTimestampSeconds + 1, 0, seconds},
      {0, -1, nanos},
      {0, 1000000000, nanos},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.seconds);
    google::protobuf::Timestamp t;
    t.set_seconds(c.seconds);
    t.set_nanos(c.nanos);
    ExpectResult(CheckTimestamp(t, "t"), c.error);
  }
}

TEST(CheckJsonTest, AcceptsJson) {
  google::protobuf::Value value;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        struct_value {
          fields {
            key: "n"
            value { null_value: NULL_VALUE }
          }
          fields {
            key: "b"
            value { bool_value: true }
          }
          fields {
            key: "x"
            value { number_value: -1.5e300 }
          }
          fields {
            key: "s"
            value { string_value: "caf\303\251" }
          }
          fields {
            key: "l"
            value {
              list_value {
                values { struct_value {} }
                values { list_value {} }
              }
            }
          }
        }
      )pb",
      &value));
  EXPECT_THAT(CheckJsonValue(value, "v"), IsOk());
  EXPECT_THAT(CheckJsonObject(value.struct_value(), "o"), IsOk());
  EXPECT_THAT(CheckJsonObject(google::protobuf::Struct(), "o"), IsOk());
}

TEST(CheckJsonTest, RejectsNonFiniteNumbersWithTheirPath) {
  for (const double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(bad);
    google::protobuf::Value top;
    top.set_number_value(bad);
    EXPECT_THAT(CheckJsonValue(top, "v"),
                StatusIs(absl::StatusCode::kInvalidArgument, "v: not a finite number"));

    google::protobuf::Struct object;
    google::protobuf::ListValue* list = (*object.mutable_fields())["a"].mutable_list_value();
    list->add_values()->set_number_value(1);
    (*list->add_values()->mutable_struct_value()->mutable_fields())["b"].set_number_value(bad);
    EXPECT_THAT(CheckJsonObject(object, "metadata"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "metadata[\"a\"][1][\"b\"]: not a finite number"));
  }
}

TEST(CheckJsonTest, RejectsUnsetValuesAndInvalidText) {
  EXPECT_THAT(CheckJsonValue(google::protobuf::Value(), "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, "v: no value set"));
  google::protobuf::Struct object;
  (*object.mutable_fields())["z"];
  EXPECT_THAT(CheckJsonObject(object, "o"),
              StatusIs(absl::StatusCode::kInvalidArgument, "o[\"z\"]: no value set"));
  google::protobuf::Value text;
  text.set_string_value("\xC0\x80");
  EXPECT_THAT(CheckJsonValue(text, "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, "v: invalid UTF-8"));
}

TEST(CheckJsonTest, FirstErrorInKeyOrder) {
  google::protobuf::Struct object;
  for (const char* key : {"z", "m", "b"}) {
    (*object.mutable_fields())[key].set_number_value(std::nan(""));
  }
  EXPECT_THAT(CheckJsonObject(object, "o"),
              StatusIs(absl::StatusCode::kInvalidArgument, "o[\"b\"]: not a finite number"));
}

}  // namespace
}  // namespace sharedos::common::validation
