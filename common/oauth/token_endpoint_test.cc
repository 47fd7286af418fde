#include "common/oauth/token_endpoint.h"

#include <map>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace sharedos::common::oauth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseAnswerTest, ObjectFromASuccess) {
  absl::StatusOr<nlohmann::json> answer =
      ParseAnswer({200, R"({"id_token":"i.d.t","access_token":"a.t","expires_in":60})"});
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(StringMember(*answer, "id_token"), "i.d.t");
  EXPECT_EQ(StringMember(*answer, "access_token"), "a.t");
  EXPECT_EQ(StringMember(*answer, "expires_in"), "") << "not a string";
}

TEST(ParseAnswerTest, ProvidersRefusalNamesItsErrorPrintably) {
  std::string code;
  absl::StatusOr<nlohmann::json> refused = ParseAnswer(
      {400, R"({"error":"invalid_grant","error_description":"grant request is invalid\u0007"})"},
      &code);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(code, "invalid_grant");
  EXPECT_THAT(refused.status().message(), HasSubstr("invalid_grant (grant request is invalid?)"));
  const std::string long_code(5000, 'x');
  refused = ParseAnswer({400, "{\"error\":\"" + long_code + "\"}"});
  EXPECT_LT(refused.status().message().size(), 300u);
}

TEST(ParseAnswerTest, GarbageIsUnavailable) {
  EXPECT_EQ(ParseAnswer({500, "<html>"}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ParseAnswer({200, "not json"}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ParseAnswer({200, "[1]"}).status().code(), absl::StatusCode::kUnavailable);
}

// A real HTTP server on loopback answers the POST.
class PostFormTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Post("/token", [this](const httplib::Request& request, httplib::Response& response) {
      seen_body_ = request.body;
      seen_authorization_ = request.get_header_value("Authorization");
      seen_type_ = request.get_header_value("Content-Type");
      response.set_content(R"({"id_token":"i","access_token":"a"})", "application/json");
    });
    server_.Post("/huge", [](const httplib::Request&, httplib::Response& response) {
      response.set_content(std::string(kMaxAnswerBytes + 1, 'x'), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::string seen_body_, seen_authorization_, seen_type_;
};

TEST_F(PostFormTest, SendsFormEncodedFieldsWithBasicClientAuthentication) {
  absl::StatusOr<HttpAnswer> answer =
      PostForm(Url("/token"), {{"grant_type", "authorization_code"}, {"code", "a b&c"}},
               "sharedos-console", "s3cret:x", "", absl::Seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(seen_body_, "code=a%20b%26c&grant_type=authorization_code");
  EXPECT_EQ(seen_type_, "application/x-www-form-urlencoded");
  // base64("sharedos-console:s3cret%3Ax")
  EXPECT_EQ(seen_authorization_, "Basic c2hhcmVkb3MtY29uc29sZTpzM2NyZXQlM0F4");
  EXPECT_TRUE(ParseAnswer(*answer).ok());
}

TEST_F(PostFormTest, OverlongAnswerIsRefused) {
  absl::StatusOr<HttpAnswer> answer = PostForm(Url("/huge"), {}, "", "", "", absl::Seconds(5));
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(answer.status().message(), HasSubstr("bytes"));
}

TEST_F(PostFormTest, UnreachableProviderIsUnavailableWithoutTheSecret) {
  const std::string url = Url("/token");
  server_.stop();
  thread_.join();
  thread_ = std::thread([] {});
  absl::StatusOr<HttpAnswer> answer =
      PostForm(url, {{"code", "c"}}, "sharedos-console", "s3cret", "", absl::Seconds(2));
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(answer.status().message(), Not(HasSubstr("s3cret")));
}

TEST(PostFormUrlTest, MalformedUrlsAreRefused) {
  EXPECT_EQ(PostForm("ftp://x/token", {}, "", "", "", absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PostForm("https:///token", {}, "", "", "", absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sharedos::common::oauth
