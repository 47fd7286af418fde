// health_probe against a real sharedosd: SERVING over TLS verified against the deployment's CA
// and in plaintext on loopback; a foreign CA and a closed port are refused; the binary's exit
// codes are what a HEALTHCHECK and a Kubernetes exec probe read (0 serving, 1 not, 2 usage).
#include "tools/health_probe/health_probe.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tests/testing/test_certificates.h"

namespace sharedos::health_probe {
namespace {

using ::sharedos::testing::SharedosdDeployment;
using ::sharedos::testing::TestCertificateAuthority;
using ::testing::HasSubstr;

class HealthProbeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(sharedos::testing::TempPath("health-probe"));
    ASSERT_EQ(mkdir(dir_->c_str(), 0700), 0);
    auto ca = TestCertificateAuthority::Create(*dir_, "deployment");
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = ca->release();
    auto other = TestCertificateAuthority::Create(*dir_, "other");
    ASSERT_TRUE(other.ok()) << other.status();
    other_ca_ = other->release();
    auto server = ca_->IssueLoopback("server");
    ASSERT_TRUE(server.ok()) << server.status();
    SharedosdDeployment::Options options;
    options.data_dir = *dir_ + "/data";
    options.args = {"--tls_cert=" + server->cert_file, "--tls_key=" + server->key_file};
    auto started = SharedosdDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    sharedosd_ = started->release();
  }
  static void TearDownTestSuite() {
    delete sharedosd_;
    delete ca_;
    delete other_ca_;
    delete dir_;
  }

  Options Tls(const TestCertificateAuthority& ca) {
    Options options;
    options.target = sharedosd_->address();
    options.tls.ca_file = ca.ca_file();
    return options;
  }

  // The binary's exit code for `args`, its output in *out.
  static int Run(const std::string& args, std::string* out) {
    const std::string log = *dir_ + "/probe.out";
    const std::string command =
        absl::StrCat(sharedos::testing::RunfilePath("tools/health_probe/health_probe"), " ", args,
                     " > ", log, " 2>&1");
    const int status = std::system(command.c_str());
    std::ifstream in(log);
    *out = std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static std::string* dir_;
  static TestCertificateAuthority* ca_;
  static TestCertificateAuthority* other_ca_;
  static SharedosdDeployment* sharedosd_;
};

std::string* HealthProbeTest::dir_ = nullptr;
TestCertificateAuthority* HealthProbeTest::ca_ = nullptr;
TestCertificateAuthority* HealthProbeTest::other_ca_ = nullptr;
SharedosdDeployment* HealthProbeTest::sharedosd_ = nullptr;

TEST_F(HealthProbeTest, ServingOverTlsVerifiedAgainstTheCa) {
  auto status = Check(Tls(*ca_));
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(*status, "SERVING");
}

TEST_F(HealthProbeTest, AServiceTheServerDoesNotKnowIsNotFound) {
  Options options = Tls(*ca_);
  options.service = "no.such.Service";
  EXPECT_EQ(Check(options).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(HealthProbeTest, AServerCertificateOfAnotherCaIsRefused) {
  EXPECT_EQ(Check(Tls(*other_ca_)).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(HealthProbeTest, PlaintextToATlsListenerIsRefused) {
  Options options;
  options.target = sharedosd_->address();
  options.timeout = absl::Seconds(2);
  EXPECT_FALSE(Check(options).ok());
}

TEST_F(HealthProbeTest, PlaintextOffLoopbackIsRefusedNamingTheFlag) {
  Options options;
  options.target = "sharedos.example:50051";
  auto status = Check(options);
  EXPECT_EQ(status.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.status().message(), HasSubstr("--target"));
}

TEST_F(HealthProbeTest, BinaryExitsZeroServingOneRefusedTwoOnUsage) {
  std::string out;
  EXPECT_EQ(
      Run(absl::StrCat("--target=", sharedosd_->address(), " --tls_ca=", ca_->ca_file()), &out), 0)
      << out;
  EXPECT_THAT(out, HasSubstr("SERVING"));
  EXPECT_EQ(Run(absl::StrCat("--target=", sharedosd_->address(), " --tls_ca=", other_ca_->ca_file(),
                             " --timeout=3s"),
                &out),
            1)
      << out;
  EXPECT_THAT(out, HasSubstr("UNAVAILABLE"));
  EXPECT_EQ(Run("--target=127.0.0.1:1 --timeout=2s", &out), 1) << out;
  EXPECT_EQ(Run("--target=127.0.0.1:1 --timeout=2s --mode=live", &out), 1) << out;
  EXPECT_EQ(Run(absl::StrCat("--target=", sharedosd_->address(), " --tls_ca=", ca_->ca_file(),
                             " --mode=live"),
                &out),
            0)
      << out;
  EXPECT_EQ(Run("--target=127.0.0.1:1 --no_such_flag=1", &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("--no_such_flag"));
}

TEST(HealthProbeModeTest, ReadyNeedsServingLiveAnyAnswer) {
  Options ready;
  Options live;
  live.live = true;
  EXPECT_TRUE(Healthy(ready, std::string("SERVING")));
  EXPECT_FALSE(Healthy(ready, std::string("NOT_SERVING")));
  EXPECT_TRUE(Healthy(live, std::string("NOT_SERVING")));
  EXPECT_FALSE(Healthy(live, absl::UnavailableError("down")));
  EXPECT_FALSE(Healthy(ready, absl::UnavailableError("down")));
  auto parsed = ParseArgs({"--target=a:1", "--mode=live"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(parsed->live);
  EXPECT_THAT(ParseArgs({"--target=a:1", "--mode=dead"}).status().message(), HasSubstr("--mode"));
}

TEST(HealthProbeArgsTest, EveryBadInputIsInvalidArgumentNamingTheFlag) {
  EXPECT_THAT(ParseArgs({}).status().message(), HasSubstr("--target: required"));
  EXPECT_THAT(ParseArgs({"--target=a:1", "--timeout=0s"}).status().message(),
              HasSubstr("--timeout"));
  EXPECT_THAT(ParseArgs({"--target=a:1", "--timeout=61s"}).status().message(),
              HasSubstr("--timeout"));
  EXPECT_THAT(ParseArgs({"--target="}).status().message(), HasSubstr("--target"));
  EXPECT_THAT(ParseArgs({"--target=" + std::string(4097, 'a')}).status().message(),
              HasSubstr("--target"));
  EXPECT_THAT(ParseArgs({"target"}).status().message(), HasSubstr("expected --flag=value"));
  EXPECT_THAT(ParseArgs({"--target=a:1", "--" + std::string(5000, 'x') + "=1"}).status().message(),
              ::testing::SizeIs(::testing::Lt(100)));
  auto parsed = ParseArgs({"--target=a:1", "--service=s", "--timeout=2s", "--tls_ca=ca.pem",
                           "--tls_server_name=audit"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->target, "a:1");
  EXPECT_EQ(parsed->service, "s");
  EXPECT_EQ(parsed->timeout, absl::Seconds(2));
  EXPECT_EQ(parsed->tls.ca_file, "ca.pem");
  EXPECT_EQ(parsed->tls.server_name, "audit");
}

}  // namespace
}  // namespace sharedos::health_probe
