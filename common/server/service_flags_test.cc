#include "common/server/service_flags.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, host);
ABSL_DECLARE_FLAG(int, port);
ABSL_DECLARE_FLAG(std::string, credentials);
ABSL_DECLARE_FLAG(std::string, tls_cert);
ABSL_DECLARE_FLAG(std::string, tls_key);
ABSL_DECLARE_FLAG(std::string, tls_client_ca);
ABSL_DECLARE_FLAG(std::string, tls_ca);
ABSL_DECLARE_FLAG(std::string, tls_server_name);

namespace sharedos::common::server {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

class ServiceFlagsTest : public ::testing::Test {
 protected:
  std::string Credentials() {
    const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/credentials.json";
    std::ofstream(path, std::ios::trunc)
        << R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")"
        << TokenDigestHex("admin-token") << R"("}]})";
    return path;
  }

  absl::FlagSaver saver_;
};

TEST_F(ServiceFlagsTest, ReadsTheListenerAndTheCredentials) {
  absl::SetFlag(&FLAGS_host, "::1");
  absl::SetFlag(&FLAGS_port, 4321);
  absl::SetFlag(&FLAGS_tls_cert, "cert.pem");
  absl::SetFlag(&FLAGS_tls_key, "key.pem");
  absl::SetFlag(&FLAGS_tls_client_ca, "ca.pem");
  absl::SetFlag(&FLAGS_tls_ca, "peers-ca.pem");
  absl::SetFlag(&FLAGS_tls_server_name, "services.example");
  absl::SetFlag(&FLAGS_credentials, Credentials());
  absl::StatusOr<ServiceFlags> flags = ReadServiceFlags();
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->server.host, "::1");
  EXPECT_EQ(flags->server.port, 4321);
  EXPECT_EQ(flags->server.tls.cert_file, "cert.pem");
  EXPECT_EQ(flags->server.tls.key_file, "key.pem");
  EXPECT_EQ(flags->server.tls.client_ca_file, "ca.pem");
  EXPECT_EQ(flags->channel_tls.ca_file, "peers-ca.pem");
  EXPECT_EQ(flags->channel_tls.server_name, "services.example");
  EXPECT_TRUE(flags->server.listen);
  auto admin = flags->authenticator->Authenticate("Bearer admin-token");
  ASSERT_TRUE(admin.ok()) << admin.status();
  EXPECT_EQ(admin->name, "ops");
}

TEST_F(ServiceFlagsTest, TheDefaultsListenOnLoopbackOnAFreePort) {
  absl::SetFlag(&FLAGS_credentials, Credentials());
  absl::StatusOr<ServiceFlags> flags = ReadServiceFlags();
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->server.host, "127.0.0.1");
  EXPECT_EQ(flags->server.port, 0);
  EXPECT_EQ(flags->server.tls.cert_file, "");
  EXPECT_EQ(flags->channel_tls.ca_file, "");
}

TEST_F(ServiceFlagsTest, ErrorsNameTheFlagOrTheFile) {
  EXPECT_THAT(ReadServiceFlags(),
              StatusIs(absl::StatusCode::kInvalidArgument, "--credentials: required"));
  absl::SetFlag(&FLAGS_credentials, "/nonexistent/credentials.json");
  EXPECT_THAT(ReadServiceFlags(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "credentials file: cannot read /nonexistent/credentials.json"));
}

TEST_F(ServiceFlagsTest, RunServiceRefusesABadStartUpWithExitCodeTwo) {
  char name[] = "probe_svc";
  char* argv[] = {name};
  const ServiceBinary binary{"probe_svc", "probe_svc: a probe.", {}};
  int builds = 0;
  auto build = [&](const ServiceFlags&) -> absl::StatusOr<std::unique_ptr<Servable>> {
    ++builds;
    return absl::InvalidArgumentError("--registry: required");
  };
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunService(1, argv, binary, build), 2);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "probe_svc: --credentials: required\n");
  EXPECT_EQ(builds, 0);

  absl::SetFlag(&FLAGS_credentials, Credentials());
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunService(1, argv, binary, build), 2);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "probe_svc: --registry: required\n");
  EXPECT_EQ(builds, 1);
}

TEST_F(ServiceFlagsTest, AServiceSaysWhoMayCallIt) {
  char name[] = "probe_svc";
  char* argv[] = {name};
  ParseServiceCommandLine(1, argv,
                          {"probe_svc", "probe_svc: a probe.", {{"credentials", "Only hosts."}}});
  EXPECT_EQ(absl::FindCommandLineFlag("credentials")->Help(), "Only hosts.");
  EXPECT_EQ(absl::FindCommandLineFlag("tls_key")->Help(), "PEM private key of --tls_cert.");
  EXPECT_THAT(absl::FindCommandLineFlag("port")->Help(), HasSubstr("0 picks a free port"));
}

}  // namespace
}  // namespace sharedos::common::server
