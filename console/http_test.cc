#include "console/http.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::console {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(CookieValueTest, FindsTheNamedCookieAmongOthers) {
  EXPECT_THAT(CookieValue("a=1; sos_session=xyz; b=2", "sos_session"),
              Optional(std::string("xyz")));
  EXPECT_THAT(CookieValue("sos_session=xyz", "sos_session"), Optional(std::string("xyz")));
  EXPECT_EQ(CookieValue("a=1; b=2", "sos_session"), std::nullopt);
  EXPECT_EQ(CookieValue("", "sos_session"), std::nullopt);
  // A prefix of another cookie's name is not that cookie.
  EXPECT_EQ(CookieValue("xsos_session=1", "sos_session"), std::nullopt);
}

TEST(CookieValueTest, ACookieNamedTwiceIsAmbiguousAndRefused) {
  EXPECT_EQ(CookieValue("sos_session=a; sos_session=b", "sos_session"), std::nullopt);
}

TEST(SetCookieTest, HttpOnlySameSiteStrictAndSecureOnlyOverHttps) {
  const std::string plain = SetCookie("sos_session", "v", absl::Minutes(30), false);
  EXPECT_EQ(plain, "sos_session=v; Path=/; Max-Age=1800; HttpOnly; SameSite=Strict");
  const std::string secure = SetCookie("sos_session", "v", absl::Minutes(30), true);
  EXPECT_THAT(secure, HasSubstr("; HttpOnly; SameSite=Strict; Secure"));
  EXPECT_THAT(SetCookie("sos_session", "", absl::ZeroDuration(), false), HasSubstr("Max-Age=0"));
}

// The OpenID sign-in's binding cookie must come back with the provider's cross-site redirect.
TEST(SetCookieTest, LaxWhenAskedStillHttpOnlyAndSecureOverHttps) {
  EXPECT_EQ(SetCookie("sos_oidc", "b", absl::Minutes(10), true, /*lax=*/true),
            "sos_oidc=b; Path=/; Max-Age=600; HttpOnly; SameSite=Lax; Secure");
}

TEST(ParseFormTest, DecodesFields) {
  auto form = ParseForm("id=esc-1&purposes=a%2Cb+c&max_uses=1&empty=", FormLimits());
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_THAT(*form, UnorderedElementsAre(Pair("id", "esc-1"), Pair("purposes", "a,b c"),
                                          Pair("max_uses", "1"), Pair("empty", "")));
}

TEST(ParseFormTest, RefusesOversizedBodyNamingTheForm) {
  FormLimits limits;
  limits.max_body_bytes = 10;
  auto form = ParseForm("id=0123456789", limits);
  EXPECT_EQ(form.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(form.status().message(), HasSubstr("form: at most 10 bytes"));
}

TEST(ParseFormTest, RefusesALongValueNamingItsField) {
  FormLimits limits;
  limits.max_value_bytes = 4;
  auto form = ParseForm("id=1&secret=12345", limits);
  EXPECT_EQ(form.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(form.status().message(), HasSubstr("secret: at most 4 bytes"));
}

TEST(ParseFormTest, TheNoteHasItsOwnLargerBound) {
  FormLimits limits;
  limits.max_value_bytes = 4;
  limits.max_note_bytes = 8;
  auto form = ParseForm("id=1&note=12345678", limits);
  ASSERT_TRUE(form.ok()) << form.status();
  EXPECT_EQ(form->at("note"), "12345678");
  form = ParseForm("id=1&note=123456789", limits);
  EXPECT_EQ(form.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(form.status().message(), HasSubstr("note: at most 8 bytes"));
  // The defaults admit a note at its bound (1000 three-byte characters) and no other long value.
  const std::string note_at_bound = [] {
    std::string encoded;
    for (int i = 0; i < 1000; ++i) encoded += "%E2%80%94";
    return encoded;
  }();
  EXPECT_TRUE(ParseForm("note=" + note_at_bound, FormLimits()).ok());
  EXPECT_FALSE(ParseForm("id=" + note_at_bound, FormLimits()).ok());
}

TEST(ParseFormTest, RefusesTooManyFields) {
  FormLimits limits;
  limits.max_fields = 2;
  auto form = ParseForm("a=1&b=2&c=3", limits);
  EXPECT_EQ(form.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(form.status().message(), HasSubstr("at most 2 fields"));
}

TEST(ParseFormTest, RefusesARepeatedFieldNamingIt) {
  auto form = ParseForm("csrf=a&csrf=b", FormLimits());
  EXPECT_EQ(form.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(form.status().message(), HasSubstr("csrf: given more than once"));
}

TEST(ParseFormTest, RefusesBadEncodingAndForeignNames) {
  EXPECT_THAT(ParseForm("id=%zz", FormLimits()).status().message(),
              HasSubstr("id: bad percent-encoding"));
  EXPECT_THAT(ParseForm("id=%4", FormLimits()).status().message(),
              HasSubstr("id: bad percent-encoding"));
  EXPECT_EQ(ParseForm("ID%00=1", FormLimits()).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HtmlEscapeTest, EscapesMarkupAndQuotes) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

}  // namespace
}  // namespace sharedos::console
