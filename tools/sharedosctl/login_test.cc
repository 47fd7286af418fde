#include "tools/sharedosctl/login.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::sharedosctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

DeviceAuthorization Authorization(absl::Duration expires_in, absl::Duration interval) {
  DeviceAuthorization authorization;
  authorization.device_code = "dc";
  authorization.user_code = "ABCD-EFGH";
  authorization.verification_uri = "http://127.0.0.1/device";
  authorization.expires_in = expires_in;
  authorization.interval = interval;
  return authorization;
}

common::oauth::HttpAnswer Error(const std::string& code) {
  return {400, "{\"error\":\"" + code + "\"}"};
}

// A provider answering from a script; the clock moves by each wait.
struct ScriptedProvider {
  explicit ScriptedProvider(std::vector<common::oauth::HttpAnswer> script)
      : script(std::move(script)) {}
  DevicePolling Polling() {
    DevicePolling polling;
    polling.post = [this](const std::map<std::string, std::string>& fields) {
      seen_grant = fields.at("grant_type");
      seen_code = fields.at("device_code");
      common::oauth::HttpAnswer next = script.at(posts);
      ++posts;
      return absl::StatusOr<common::oauth::HttpAnswer>(next);
    };
    polling.sleep = [this](absl::Duration wait) {
      waits.push_back(wait);
      clock.AdvanceTime(wait);
    };
    polling.clock = &clock;
    return polling;
  }
  std::vector<common::oauth::HttpAnswer> script;
  size_t posts = 0;
  std::vector<absl::Duration> waits;
  std::string seen_grant, seen_code;
  common::SimulatedClock clock{absl::FromUnixSeconds(1000)};
};

TEST(PollForTokenTest, WaitsTheIntervalWhilePendingAndSlowsDownWhenAsked) {
  ScriptedProvider provider({Error("authorization_pending"),
                             Error("slow_down"),
                             Error("authorization_pending"),
                             {200, R"({"access_token":"eyJ.a.b","token_type":"Bearer"})"}});
  absl::StatusOr<std::string> token = PollForToken(
      Authorization(absl::Minutes(10), absl::Seconds(5)), "sharedosctl", provider.Polling());
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "eyJ.a.b");
  EXPECT_EQ(provider.seen_grant, "urn:ietf:params:oauth:grant-type:device_code");
  EXPECT_EQ(provider.seen_code, "dc");
  EXPECT_THAT(provider.waits, ElementsAre(absl::Seconds(5), absl::Seconds(5), absl::Seconds(10),
                                          absl::Seconds(10)));
}

TEST(PollForTokenTest, StopsWhenTheCodeExpiresWithoutPollingPastIt) {
  ScriptedProvider provider(
      std::vector<common::oauth::HttpAnswer>(10, Error("authorization_pending")));
  absl::StatusOr<std::string> token = PollForToken(
      Authorization(absl::Seconds(12), absl::Seconds(5)), "sharedosctl", provider.Polling());
  EXPECT_EQ(token.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(token.status().message(), HasSubstr("login again"));
  EXPECT_EQ(provider.posts, 2u) << "at 5 s and 10 s; at 15 s the code has expired";
}

TEST(PollForTokenTest, DeniedAndExpiredAreRefusals) {
  ScriptedProvider denied({Error("access_denied")});
  absl::StatusOr<std::string> token = PollForToken(
      Authorization(absl::Minutes(10), absl::Seconds(5)), "sharedosctl", denied.Polling());
  EXPECT_EQ(token.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(token.status().message(), HasSubstr("access_denied"));
  ScriptedProvider expired({Error("expired_token")});
  token = PollForToken(Authorization(absl::Minutes(10), absl::Seconds(5)), "sharedosctl",
                       expired.Polling());
  EXPECT_EQ(token.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(ParseDeviceAuthorizationTest, BoundsAndDefaults) {
  absl::StatusOr<DeviceAuthorization> parsed = ParseDeviceAuthorization(nlohmann::json::parse(
      R"({"device_code":"d","user_code":"U","verification_uri":"https://idp/device",
          "expires_in":86400})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->expires_in, kMaxDeviceCodeLifetime);
  EXPECT_EQ(parsed->interval, absl::Seconds(5));
  parsed = ParseDeviceAuthorization(nlohmann::json::parse(
      R"({"device_code":"d","user_code":"U","verification_uri":"u","expires_in":600,
          "interval":3600})"));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->interval, kMaxPollInterval);
  parsed = ParseDeviceAuthorization(
      nlohmann::json::parse(R"({"device_code":"d","verification_uri":"u","expires_in":600})"));
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(parsed.status().message(), HasSubstr("user_code"));
}

class TokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    mkdir(root_.c_str(), 0755);
    setenv("SHAREDOS_CONFIG_DIR", (root_ + "/sharedos").c_str(), 1);
  }
  static mode_t Mode(const std::string& path) {
    struct stat info;
    EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
    return info.st_mode & 0777;
  }
  std::string root_;
};

TEST_F(TokenFileTest, StoredOwnerOnlyAndFoundByLaterCommands) {
  absl::StatusOr<std::string> path = LoginTokenPath();
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(*path, root_ + "/sharedos/token");
  absl::StatusOr<std::optional<std::string>> none = ExistingLoginTokenFile();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(StoreLoginToken(*path, "eyJ.first").ok());
  ASSERT_TRUE(StoreLoginToken(*path, "eyJ.second").ok()) << "a new login replaces the token";
  EXPECT_EQ(Mode(root_ + "/sharedos"), 0700u);
  EXPECT_EQ(Mode(*path), 0600u);
  std::ifstream in(*path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "eyJ.second");
  absl::StatusOr<std::optional<std::string>> found = ExistingLoginTokenFile();
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->value_or(""), *path);
}

TEST_F(TokenFileTest, OpenDirectoryOrReadableTokenIsRefused) {
  absl::StatusOr<std::string> path = LoginTokenPath();
  ASSERT_TRUE(path.ok());
  ASSERT_EQ(mkdir((root_ + "/sharedos").c_str(), 0755), 0);
  chmod((root_ + "/sharedos").c_str(), 0755);
  absl::Status stored = StoreLoginToken(*path, "eyJ.t");
  EXPECT_EQ(stored.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(stored.message(), HasSubstr("chmod 700"));
  chmod((root_ + "/sharedos").c_str(), 0700);
  ASSERT_TRUE(StoreLoginToken(*path, "eyJ.t").ok());
  chmod(path->c_str(), 0644);
  absl::StatusOr<std::optional<std::string>> found = ExistingLoginTokenFile();
  EXPECT_EQ(found.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(found.status().message(), HasSubstr("chmod 600"));
}

TEST(LoginTokenPathTest, XdgThenHome) {
  unsetenv("SHAREDOS_CONFIG_DIR");
  setenv("XDG_CONFIG_HOME", "/x/config", 1);
  EXPECT_EQ(LoginTokenPath().value_or(""), "/x/config/sharedos/token");
  unsetenv("XDG_CONFIG_HOME");
  setenv("HOME", "/home/op", 1);
  EXPECT_EQ(LoginTokenPath().value_or(""), "/home/op/.config/sharedos/token");
}

}  // namespace
}  // namespace sharedos::sharedosctl
