#include "common/crypto/base64url.h"

#include <string>

#include "absl/status/status.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

struct Vector {
  std::string bytes;
  const char* encoded;
};

TEST(Base64UrlTest, KnownVectorsRoundTrip) {
  const Vector vectors[] = {
      {"", ""},
      {std::string("\xfb\xff"), "-_8"},
      {std::string("\xfb\xff\xbf"), "-_-_"},
      // RFC 4648 §10, without padding.
      {"f", "Zg"},
      {"fo", "Zm8"},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg"},
      {"fooba", "Zm9vYmE"},
      {"foobar", "Zm9vYmFy"},
      {std::string("\0\0\0", 3), "AAAA"},
  };
  for (const Vector& v : vectors) {
    EXPECT_EQ(Base64UrlEncode(v.bytes), v.encoded);
    EXPECT_THAT(Base64UrlDecode(v.encoded), IsOkAndHolds(v.bytes));
  }
}

TEST(Base64UrlTest, EveryByteValueRoundTrips) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t length = 0; length <= all.size(); length += 37) {
    const std::string bytes = all.substr(0, length);
    const std::string encoded = Base64UrlEncode(bytes);
    EXPECT_EQ(encoded.find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              std::string::npos);
    EXPECT_THAT(Base64UrlDecode(encoded), IsOkAndHolds(bytes));
  }
}

struct Invalid {
  const char* text;
  const char* message;
};

TEST(Base64UrlTest, DecodeRejectsAnythingButCanonicalUnpaddedBase64Url) {
  const Invalid cases[] = {
      {"Zg==", "invalid base64url: unexpected character at offset 2"},
      {"+_8", "invalid base64url: unexpected character at offset 0"},
      {"-/8", "invalid base64url: unexpected character at offset 1"},
      {" Zg", "invalid base64url: unexpected character at offset 0"},
      {"Zm9v\n", "invalid base64url: length 5 is 1 modulo 4"},
      {"Zm8\n", "invalid base64url: unexpected character at offset 3"},
      {"a", "invalid base64url: length 1 is 1 modulo 4"},
      {"Zh", "invalid base64url: non-zero trailing bits"},
      {"Zm9", "invalid base64url: non-zero trailing bits"},
      {"\xc3\xa9\xc3\xa9", "invalid base64url: unexpected character at offset 0"},
  };
  for (const Invalid& c : cases) {
    EXPECT_THAT(Base64UrlDecode(c.text), StatusIs(absl::StatusCode::kInvalidArgument, c.message))
        << c.text;
  }
}

}  // namespace
}  // namespace sharedos::common
