#include "common/text/url.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::text {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(UrlEncodeTest, EncodesAllButUnreservedAndRoundTripsThroughUrlDecode) {
  EXPECT_EQ(UrlEncode("aZ09-_.~"), "aZ09-_.~");
  EXPECT_EQ(UrlEncode("a b+c/d:e@f=g&h"), "a%20b%2Bc%2Fd%3Ae%40f%3Dg%26h");
  const std::string text = "exec-1 &x=<y>/ü";
  const std::string encoded = UrlEncode(text);
  EXPECT_THAT(encoded, Not(HasSubstr("&")));
  EXPECT_THAT(UrlDecode(encoded), absl::StatusOr<std::string>(text));
}

TEST(UrlDecodeTest, ReadsPlusAsSpaceAndRefusesBadEscapes) {
  EXPECT_THAT(UrlDecode("a+b%2Bc"), absl::StatusOr<std::string>("a b+c"));
  EXPECT_EQ(UrlDecode("%zz").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(UrlDecode("%4").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(UrlDecode("%").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ParseHttpUrlTest, SplitsOriginHostAndTarget) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl("https://idp.example.test:8443/oauth2/token?x=1");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_TRUE(url->https);
  EXPECT_EQ(url->origin, "https://idp.example.test:8443");
  EXPECT_EQ(url->host, "idp.example.test");
  EXPECT_EQ(url->target, "/oauth2/token?x=1");
  EXPECT_TRUE(url->has_query);

  url = ParseHttpUrl("http://127.0.0.1:9000");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_FALSE(url->https);
  EXPECT_EQ(url->origin, "http://127.0.0.1:9000");
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->target, "/");
  EXPECT_FALSE(url->has_query);

  url = ParseHttpUrl("http://[::1]:9000?a=b");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->origin, "http://[::1]:9000");
  EXPECT_EQ(url->host, "[::1]");
  EXPECT_EQ(url->target, "/?a=b");
  EXPECT_TRUE(url->has_query);
}

TEST(ParseHttpUrlTest, RefusesWhatIsNotAPlainHttpUrl) {
  for (const char* bad : {"ftp://h/", "https//h/", "https://", "https:///path", "https://:443/",
                          "https://user@h/", "https://h/#frag", "https://h/ a", "https://h/\x7f",
                          "https://h/\xc3\xbc", "http://[::1/", "https://h/\n"}) {
    EXPECT_EQ(ParseHttpUrl(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ParseHttpUrl("https://h/" + std::string(kMaxUrlBytes, 'a')).ok());
  EXPECT_TRUE(ParseHttpUrl("https://h/" + std::string(kMaxUrlBytes - 10, 'a')).ok());
}

}  // namespace
}  // namespace sharedos::common::text
