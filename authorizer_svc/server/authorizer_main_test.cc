// The real authorizer_svc binary's command line: the deadline of a call to grantstore_svc is
// bounded (--grantstore_timeout 100ms..60s: outside refused at start-up naming the flag, the
// bounds themselves served). A refused start-up exits by itself; no sleeps.
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

namespace sharedos::authorizer::server {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::testing::Process;
using ::testing::HasSubstr;

constexpr char kBinary[] = "authorizer_svc/server/authorizer_svc";

class AuthorizerMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sharedos::testing::TempPath(
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(std::system(absl::StrCat("rm -rf '", dir_, "' && mkdir -p '", dir_, "'").c_str()), 0);
    ASSERT_THAT(
        sharedos::testing::WriteFile(
            dir_ + "/credentials.json",
            absl::StrCat(R"({"credentials": [{"name": "envelope", "role": "service", )",
                         R"("token_sha256": ")",
                         common::server::TokenDigestHex("authorizer-main-test-token"), R"("}]})")),
        IsOk());
    ASSERT_THAT(sharedos::testing::WriteFile(dir_ + "/grantstore.token", "unused-token\n"), IsOk());
    ASSERT_THAT(sharedos::testing::WriteFile(dir_ + "/lease.secret",
                                             "authorizer-main-test-lease-secret-0123456789"),
                IsOk());
  }

  // The flags every start needs, then `extra`. Nothing listens at the grant store's address:
  // the authorizer starts anyway (reporting NOT_SERVING until it answers).
  std::vector<std::string> Args(const std::string& extra) const {
    return {"--port=0",
            "--credentials=" + dir_ + "/credentials.json",
            "--grantstore_target=127.0.0.1:1",
            "--grantstore_token_file=" + dir_ + "/grantstore.token",
            "--lease_secret_file=" + dir_ + "/lease.secret",
            "--audit=discard",
            extra};
  }

  std::string dir_;
};

TEST_F(AuthorizerMainTest, GrantstoreTimeoutOutside100msTo60sIsRefusedNamingTheFlag) {
  for (const std::string value : {"50ms", "61s", "99ms"}) {
    auto process = Process::Start(kBinary, Args("--grantstore_timeout=" + value));
    ASSERT_TRUE(process.ok()) << process.status();
    absl::StatusOr<int> exit_code = process->WaitForExit(absl::Seconds(60));
    ASSERT_TRUE(exit_code.ok()) << value << ": " << exit_code.status();
    EXPECT_EQ(*exit_code, 2) << value << ": " << process->output();
    EXPECT_THAT(process->output(),
                HasSubstr("authorizer_svc: --grantstore_timeout: must be 100ms..60s"))
        << value;
  }
}

TEST_F(AuthorizerMainTest, GrantstoreTimeoutAtEitherBoundServes) {
  for (const std::string value : {"100ms", "60s"}) {
    auto process =
        Process::StartService(kBinary, Args("--grantstore_timeout=" + value), "authorizer_svc");
    ASSERT_TRUE(process.ok()) << value << ": " << process.status();
    EXPECT_EQ((*process)->Terminate(), 0) << value << ": " << (*process)->output();
  }
}

}  // namespace
}  // namespace sharedos::authorizer::server
