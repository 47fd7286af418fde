// The real envelope_svc binary's command line: the deadline of a call to the authorizer is
// bounded (--authorizer_timeout 100ms..60s: outside refused at start-up naming the flag, the
// bounds themselves served), and the "comma-separated or repeated" list flags keep every
// occurrence, in order (a bad value in any occurrence is refused naming the flag). Each case
// starts the binary; a refused start-up exits by itself (no sleeps: the process is read until it
// ends or reports its address).
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/server/auth.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace sharedos::envelope::server {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::testing::Process;
using ::testing::HasSubstr;

constexpr char kBinary[] = "envelope_svc/server/envelope_svc";
constexpr char kHostToken[] = "envelope-main-test-host-token";

class EnvelopeMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sharedos::testing::TempPath(
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(std::system(absl::StrCat("rm -rf '", dir_, "' && mkdir -p '", dir_, "'").c_str()), 0);
    ASSERT_THAT(sharedos::testing::WriteFile(
                    dir_ + "/credentials.json",
                    absl::StrCat(R"({"credentials": [{"name": "host-a", "role": "host", )",
                                 R"("token_sha256": ")", common::server::TokenDigestHex(kHostToken),
                                 R"("}]})")),
                IsOk());
    ASSERT_THAT(sharedos::testing::WriteFile(dir_ + "/authorizer.token", "unused-token\n"), IsOk());
  }

  // The flags every start needs, then `extra`. Nothing listens at the authorizer's address: the
  // envelope starts anyway (reporting NOT_SERVING until it answers).
  std::vector<std::string> Args(const std::vector<std::string>& extra,
                                bool with_registry = true) const {
    std::vector<std::string> args = {"--port=0", "--credentials=" + dir_ + "/credentials.json",
                                     "--authorizer_target=127.0.0.1:1",
                                     "--authorizer_token_file=" + dir_ + "/authorizer.token",
                                     "--audit=discard"};
    if (with_registry) args.push_back("--registry=" + StandardTools());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  static std::string StandardTools() {
    return sharedos::testing::RunfilePath("envelope_svc/config/standard_tools.textproto");
  }

  // Starts the binary and waits for it to end by itself: its exit code and output.
  static std::pair<int, std::string> RunRefused(const std::vector<std::string>& args) {
    absl::StatusOr<Process> process = Process::Start(kBinary, args);
    if (!process.ok()) return {-1, std::string(process.status().message())};
    absl::StatusOr<int> exit_code = process->WaitForExit(absl::Seconds(60));
    if (!exit_code.ok()) {
      process->Kill();
      return {-1, std::string(exit_code.status().message())};
    }
    return {*exit_code, process->output()};
  }

  // Starts the binary, expects it to report its address, then stops it (exit code 0).
  static void ExpectServes(const std::vector<std::string>& args) {
    auto process = Process::StartService(kBinary, args, "envelope_svc");
    ASSERT_TRUE(process.ok()) << process.status();
    EXPECT_EQ((*process)->Terminate(), 0) << (*process)->output();
  }

  std::string dir_;
};

TEST_F(EnvelopeMainTest, AuthorizerTimeoutOutside100msTo60sIsRefusedNamingTheFlag) {
  for (const std::string value : {"50ms", "61s", "99ms"}) {
    auto [exit_code, output] = RunRefused(Args({"--authorizer_timeout=" + value}));
    EXPECT_EQ(exit_code, 2) << value << ": " << output;
    EXPECT_THAT(output, HasSubstr("envelope_svc: --authorizer_timeout: must be 100ms..60s"))
        << value;
  }
}

TEST_F(EnvelopeMainTest, AuthorizerTimeoutAtEitherBoundServes) {
  ExpectServes(Args({"--authorizer_timeout=100ms"}));
  ExpectServes(Args({"--authorizer_timeout=60s"}));
}

TEST_F(EnvelopeMainTest, EveryRegistryOccurrenceIsReadInOrder) {
  // The first occurrence is read although the last one alone would serve, and before the second.
  auto [exit_code, output] =
      RunRefused(Args({"--registry=" + dir_ + "/first.textproto", "--registry",
                       dir_ + "/second.textproto", "--registry=" + StandardTools()},
                      /*with_registry=*/false));
  EXPECT_EQ(exit_code, 2) << output;
  EXPECT_THAT(output, HasSubstr(absl::StrCat("envelope_svc: --registry: ", dir_,
                                             "/first.textproto: cannot be read")));
}

TEST_F(EnvelopeMainTest, EveryProviderOccurrenceIsKeptAndABadOneRefusedNamingTheFlag) {
  ASSERT_THAT(sharedos::testing::WriteFile(dir_ + "/provider.token", "provider-token\n"), IsOk());
  const std::string token = "--provider_token_file=" + dir_ + "/provider.token";
  // Two occurrences naming one id: both were kept.
  auto [twice_code, twice] =
      RunRefused(Args({token, "--provider=notes=127.0.0.1:1", "--provider=notes=127.0.0.1:2"}));
  EXPECT_EQ(twice_code, 2) << twice;
  EXPECT_THAT(twice, HasSubstr("envelope_svc: --provider: \"notes\" given twice"));
  // A bad value in an earlier occurrence is refused, naming the flag.
  auto [bad_code, bad] = RunRefused(
      Args({token, "--resource_provider=calendar", "--resource_provider=mail=127.0.0.1:1"}));
  EXPECT_EQ(bad_code, 2) << bad;
  EXPECT_THAT(bad, HasSubstr("envelope_svc: --resource_provider: \"calendar\" is not <resource "
                             "namespace>=<host:port>"));
  // Distinct ids over several occurrences (both forms absl parses) serve.
  ExpectServes(Args({token, "--provider=notes=127.0.0.1:1", "--provider",
                     "mail=127.0.0.1:2,"
                     "docs=127.0.0.1:3"}));
}

}  // namespace
}  // namespace sharedos::envelope::server
