// sharedosd serving TLS off loopback (--host=0.0.0.0 with --tls_cert and --tls_key), driven by the
// real sharedosctl with --tls_ca: a client trusting the CA is served; one without --tls_ca or
// trusting another CA is refused; a certificate rotated on disk is picked up without restart;
// the MCP front door serves HTTPS.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"
#include "tests/testing/test_certificates.h"

namespace sharedos {
namespace {

using ::sharedos::testing::Process;
using ::sharedos::testing::TestCertificateAuthority;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = sharedos::testing::CommandResult;

class SharedosdTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = sharedos::testing::TempPath("sharedosd-tls");
    auto ca = TestCertificateAuthority::Create(dir_.substr(0, dir_.rfind('/')), "deployment");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *std::move(ca);
    auto other = TestCertificateAuthority::Create(dir_.substr(0, dir_.rfind('/')), "other");
    ASSERT_TRUE(other.ok()) << other.status();
    other_ca_ = *std::move(other);
    auto server = ca_->IssueLoopback("sharedosd");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *server;
    auto process =
        Process::Start("sharedosd/sharedosd",
                       {"--host=0.0.0.0", "--port=0", "--mcp_port=0", "--mcp_host=127.0.0.1",
                        "--data_dir=" + dir_, "--tls_cert=" + server_.cert_file,
                        "--tls_key=" + server_.key_file, "--tls_reload_interval=1s"});
    ASSERT_TRUE(process.ok()) << process.status();
    daemon_ = std::make_unique<Process>(*std::move(process));
    auto address = daemon_->WaitForLine("sharedosd listening on ", absl::Seconds(30));
    ASSERT_TRUE(address.ok()) << address.status();
    ASSERT_THAT(*address, StartsWith("0.0.0.0:"));
    target_ = "127.0.0.1:" + address->substr(address->rfind(':') + 1);
    auto mcp = daemon_->WaitForLine("sharedosd mcp listening on ", absl::Seconds(30));
    ASSERT_TRUE(mcp.ok()) << mcp.status();
    mcp_url_ = *mcp;
  }

  void TearDown() override {
    if (daemon_) {
      EXPECT_EQ(daemon_->Terminate(), 0) << daemon_->output();
    }
  }

  // Runs sharedosctl to completion against this daemon with `flags` before the command.
  Result Ctl(const std::vector<std::string>& flags, const std::vector<std::string>& command) {
    std::vector<std::string> args = {"--target=" + target_, "--token_file=" + dir_ + "/admin.token",
                                     "--timeout=5s"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), command.begin(), command.end());
    return sharedos::testing::RunToCompletion("tools/sharedosctl/sharedosctl", args);
  }

  std::string dir_, target_, mcp_url_;
  std::unique_ptr<TestCertificateAuthority> ca_, other_ca_;
  sharedos::testing::TestCertificate server_;
  std::unique_ptr<Process> daemon_;
};

TEST_F(SharedosdTlsTest, SharedosctlWithTheCaIsServedAndOthersAreRefused) {
  Result verified = Ctl({"--tls_ca=" + ca_->ca_file()}, {"audit", "verify"});
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  Result plaintext = Ctl({}, {"audit", "verify"});
  EXPECT_NE(plaintext.exit_code, 0) << plaintext.output;
  EXPECT_THAT(plaintext.output, HasSubstr("UNAVAILABLE"));
  Result untrusting = Ctl({"--tls_ca=" + other_ca_->ca_file()}, {"audit", "verify"});
  EXPECT_NE(untrusting.exit_code, 0) << untrusting.output;
  EXPECT_THAT(untrusting.output, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(mcp_url_, StartsWith("https://127.0.0.1:"));
}

TEST_F(SharedosdTlsTest, SharedosctlRefusesPlaintextOffLoopbackNamingTheFlag) {
  target_ = "sharedos.example:50051";
  Result refused = Ctl({}, {"audit", "verify"});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_THAT(refused.output,
              HasSubstr("--target: plaintext is allowed only on loopback; give --tls_ca to reach "
                        "sharedos.example:50051"));
}

TEST_F(SharedosdTlsTest, ARotatedCertificateIsPickedUpWithoutRestart) {
  ASSERT_EQ(Ctl({"--tls_ca=" + ca_->ca_file()}, {"audit", "verify"}).exit_code, 0);
  ASSERT_TRUE(other_ca_->IssueLoopback("sharedosd").ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  Result rotated;
  do {
    absl::SleepFor(absl::Milliseconds(300));
    rotated = Ctl({"--tls_ca=" + other_ca_->ca_file()}, {"audit", "verify"});
  } while (rotated.exit_code != 0 && absl::Now() < deadline);
  EXPECT_EQ(rotated.exit_code, 0) << rotated.output;
  Result old = Ctl({"--tls_ca=" + ca_->ca_file()}, {"audit", "verify"});
  EXPECT_NE(old.exit_code, 0) << old.output;
}

}  // namespace
}  // namespace sharedos
