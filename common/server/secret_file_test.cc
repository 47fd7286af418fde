#include "common/server/secret_file.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;

std::string WriteFile(const std::string& name, const std::string& content) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  return path;
}

TEST(ReadSecretFileTest, ReadsTheFirstLineTrimmedOrTheWholeFile) {
  const std::string path = WriteFile("token", "  token-1 \nsecond line\n");
  EXPECT_THAT(ReadSecretFile(path, SecretPart::kFirstLine), IsOkAndHolds(Eq("token-1")));
  EXPECT_THAT(ReadSecretFile(path, SecretPart::kWholeFile),
              IsOkAndHolds(Eq("  token-1 \nsecond line\n")));
  EXPECT_THAT(ReadSecretFile(path, SecretPart::kWholeFileTrimmed),
              IsOkAndHolds(Eq("token-1 \nsecond line")));
}

TEST(ReadSecretFileTest, AnEmptyFileHoldsAnEmptySecret) {
  const std::string path = WriteFile("empty", "");
  EXPECT_THAT(ReadSecretFile(path, SecretPart::kFirstLine), IsOkAndHolds(Eq("")));
  EXPECT_THAT(ReadSecretFile(path, SecretPart::kWholeFile), IsOkAndHolds(Eq("")));
}

TEST(ReadSecretFileTest, AMissingFileIsNamedByWhatAndPath) {
  EXPECT_THAT(ReadSecretFile("/nonexistent/token", SecretPart::kFirstLine),
              StatusIs(absl::StatusCode::kFailedPrecondition, "cannot read /nonexistent/token"));
  EXPECT_THAT(ReadSecretFile("/nonexistent/key.pem", SecretPart::kWholeFile, "tls_key_file"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "tls_key_file: cannot read /nonexistent/key.pem"));
}

TEST(ReadFlagSecretTest, ErrorsNameTheFlagAndNeverTheContent) {
  EXPECT_THAT(ReadFlagSecret("lease_secret_file", "", SecretPart::kWholeFile),
              StatusIs(absl::StatusCode::kInvalidArgument, "--lease_secret_file: required"));
  EXPECT_THAT(
      ReadFlagSecret("lease_secret_file", "/nonexistent", SecretPart::kWholeFile),
      StatusIs(absl::StatusCode::kFailedPrecondition, "--lease_secret_file: cannot be read"));
  const std::string path = WriteFile("lease", "0123456789abcdef0123456789abcdef\n");
  EXPECT_THAT(ReadFlagSecret("lease_secret_file", path, SecretPart::kWholeFile),
              IsOkAndHolds(Eq("0123456789abcdef0123456789abcdef\n")));
}

TEST(ReadFlagTokenTest, ABlankFirstLineIsEmpty) {
  EXPECT_THAT(ReadFlagToken("grantstore_token_file", WriteFile("blank", "  \ntoken\n")),
              StatusIs(absl::StatusCode::kInvalidArgument, "--grantstore_token_file: empty"));
  EXPECT_THAT(ReadFlagToken("grantstore_token_file", WriteFile("good", "secret-token\n")),
              IsOkAndHolds(Eq("secret-token")));
  auto missing = ReadFlagToken("grantstore_token_file", "/nonexistent/secret-token");
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kFailedPrecondition,
                                "--grantstore_token_file: cannot be read"));
  EXPECT_THAT(std::string(missing.status().message()), Not(HasSubstr("secret-token")));
}

}  // namespace
}  // namespace sharedos::common::server
