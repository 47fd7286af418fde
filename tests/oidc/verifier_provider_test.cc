// The library's verifier (common/oidc) against a real OpenID provider (tests/oidc/provider.mjs):
// discovery, JWKS over HTTP, the provider's own access tokens accepted, and each kind of bad token
// refused for its own reason; key rotation without restart; fail closed when the provider is gone.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/crypto/base64url.h"
#include "common/oidc/claims_mapping.h"
#include "common/oidc/config.h"
#include "common/oidc/token_verifier.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/oidc/oidc_provider_process.h"

namespace sharedos::common::oidc {
namespace {

using ::sharedos::testing::OidcProviderProcess;
using ::testing::ElementsAre;

constexpr char kAudience[] = "urn:sharedos:grpc";

OidcConfig ConfigFor(const std::string& issuer) {
  absl::StatusOr<OidcConfig> config = ParseOidcConfig(
      absl::StrCat(R"({
    "issuer": ")",
                   issuer, R"(", "allow_loopback_http": true, "audiences": ["urn:sharedos:grpc"],
    "jwks": {"min_refresh_interval_seconds": 0},
    "claims": {"principal": "sub", "rules": [
      {"group": "sharedos-reviewers-world-1", "role": "reviewer", "namespaces": ["world-1"]},
      {"group": "sharedos-reviewers-world-2", "role": "reviewer", "namespaces": ["world-2"]},
      {"group": "sharedos-admins", "role": "admin", "namespaces": ["*"]}]}})"));
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

std::string EncodeJson(const nlohmann::json& json) { return Base64UrlEncode(json.dump()); }

nlohmann::json DecodePart(const std::string& token, int index) {
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  return nlohmann::json::parse(*Base64UrlDecode(parts[index]));
}

class VerifierProviderTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    OidcProviderProcess::Options options;
    options.alg = GetParam();
    auto provider = OidcProviderProcess::Start(options);
    ASSERT_TRUE(provider.ok()) << provider.status();
    provider_ = *std::move(provider);
    stack_ = std::make_unique<OidcVerifierStack>(ConfigFor(provider_->issuer()), RealClock());
  }

  absl::StatusOr<VerifiedToken> Verify(const std::string& token, Refusal* refusal = nullptr) {
    return stack_->verifier().Verify(token, kAudience, std::nullopt, refusal);
  }

  void ExpectRefused(const std::string& token, Refusal expected) {
    Refusal refusal = Refusal::kNone;
    absl::StatusOr<VerifiedToken> verified = Verify(token, &refusal);
    ASSERT_FALSE(verified.ok());
    EXPECT_EQ(verified.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(verified.status().message(), kInvalidTokenMessage);
    EXPECT_EQ(RefusalName(refusal), RefusalName(expected));
  }

  std::unique_ptr<OidcProviderProcess> provider_;
  std::unique_ptr<OidcVerifierStack> stack_;
};

TEST_P(VerifierProviderTest, AcceptsTheProvidersUserAccessTokenAndMapsItsGroups) {
  auto token = provider_->UserAccessToken("alice");
  ASSERT_TRUE(token.ok()) << token.status();
  absl::StatusOr<VerifiedToken> verified = Verify(*token);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->issuer, provider_->issuer());
  EXPECT_EQ(verified->subject, "alice");
  EXPECT_EQ(verified->algorithm, GetParam());
  auto principal = MapToPrincipal(stack_->config().claims, *verified);
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->address, "human:alice");
  EXPECT_EQ(principal->role, server::Role::kReviewer);
  EXPECT_THAT(principal->scope.namespaces, ElementsAre("world-1"));
  EXPECT_EQ(principal->idp_issuer, provider_->issuer());
  EXPECT_EQ(principal->idp_subject, "alice");
}

TEST_P(VerifierProviderTest, AcceptsAClientCredentialsTokenFromTheTokenEndpoint) {
  auto token = provider_->ClientCredentialsToken();
  ASSERT_TRUE(token.ok()) << token.status();
  absl::StatusOr<VerifiedToken> verified = Verify(*token);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->subject, OidcProviderProcess::kTestsClientId);
  // No groups: no SharedOS role.
  EXPECT_EQ(MapToPrincipal(stack_->config().claims, *verified).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_P(VerifierProviderTest, RefusesAnExpiredToken) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  auto token = provider_->Sign({{"iss", provider_->issuer()},
                                {"sub", "alice"},
                                {"aud", kAudience},
                                {"iat", now - 7200},
                                {"exp", now - 3600}});
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectRefused(*token, Refusal::kExpired);
}

TEST_P(VerifierProviderTest, RefusesATokenForAnotherAudience) {
  auto token = provider_->UserAccessToken("alice", "urn:some:other-api");
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectRefused(*token, Refusal::kAudience);
}

TEST_P(VerifierProviderTest, RefusesATokenOfAnotherIssuer) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  auto token = provider_->Sign({{"iss", "http://127.0.0.1:1"},
                                {"sub", "alice"},
                                {"aud", kAudience},
                                {"iat", now},
                                {"exp", now + 600}});
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectRefused(*token, Refusal::kIssuer);
}

TEST_P(VerifierProviderTest, RefusesAlgNone) {
  auto token = provider_->UserAccessToken("alice");
  ASSERT_TRUE(token.ok()) << token.status();
  nlohmann::json header = DecodePart(*token, 0);
  header["alg"] = "none";
  std::vector<std::string> parts = absl::StrSplit(*token, '.');
  // With a signature part (to reach the algorithm check) and without (RFC 7519's unsecured form).
  ExpectRefused(absl::StrCat(EncodeJson(header), ".", parts[1], ".", parts[2]),
                Refusal::kAlgorithm);
  ExpectRefused(absl::StrCat(EncodeJson(header), ".", parts[1], "."), Refusal::kMalformed);
}

TEST_P(VerifierProviderTest, RefusesHs256SignedWithTheProvidersPublicKey) {
  auto token = provider_->UserAccessToken("alice");
  ASSERT_TRUE(token.ok()) << token.status();
  auto jwks = provider_->Jwks();
  ASSERT_TRUE(jwks.ok()) << jwks.status();
  nlohmann::json header = DecodePart(*token, 0);
  header["alg"] = "HS256";
  std::vector<std::string> parts = absl::StrSplit(*token, '.');
  const std::string input = absl::StrCat(EncodeJson(header), ".", parts[1]);
  // The "secret" an algorithm-confusion attack uses: the public key as the verifier holds it.
  const std::string secret = (*jwks)["keys"][0].dump();
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &mac_length);
  ExpectRefused(
      absl::StrCat(input, ".",
                   Base64UrlEncode(std::string(reinterpret_cast<char*>(mac), mac_length))),
      Refusal::kAlgorithm);
}

TEST_P(VerifierProviderTest, RefusesAnUnknownKid) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  auto token = provider_->Sign({{"iss", provider_->issuer()},
                                {"sub", "alice"},
                                {"aud", kAudience},
                                {"iat", now},
                                {"exp", now + 600}},
                               {{"kid", "no-such-provider-key"}});
  ASSERT_TRUE(token.ok()) << token.status();
  ExpectRefused(*token, Refusal::kUnknownKey);
}

TEST_P(VerifierProviderTest, RefusesATamperedPayload) {
  auto token = provider_->UserAccessToken("bob");
  ASSERT_TRUE(token.ok()) << token.status();
  ASSERT_TRUE(Verify(*token).ok());
  nlohmann::json payload = DecodePart(*token, 1);
  payload["groups"] = {"sharedos-admins"};
  std::vector<std::string> parts = absl::StrSplit(*token, '.');
  ExpectRefused(absl::StrCat(parts[0], ".", EncodeJson(payload), ".", parts[2]),
                Refusal::kSignature);
}

TEST_P(VerifierProviderTest, AcceptsARotatedKeyWithoutRestart) {
  auto before = provider_->UserAccessToken("alice");
  ASSERT_TRUE(before.ok()) << before.status();
  auto verified_before = Verify(*before);
  ASSERT_TRUE(verified_before.ok()) << verified_before.status();
  const int fetches = stack_->keys().fetch_count();

  auto kid = provider_->RotateKey();
  ASSERT_TRUE(kid.ok()) << kid.status();
  ASSERT_NE(*kid, verified_before->key_id);
  auto after = provider_->UserAccessToken("alice");
  ASSERT_TRUE(after.ok()) << after.status();
  auto verified_after = Verify(*after);
  ASSERT_TRUE(verified_after.ok()) << verified_after.status();
  EXPECT_EQ(verified_after->key_id, *kid);
  EXPECT_EQ(stack_->keys().fetch_count(), fetches + 1);  // one refetch for the new kid
  EXPECT_TRUE(Verify(*before).ok());                     // the old key is still published
}

TEST_P(VerifierProviderTest, FailsClosedWhenTheProviderIsUnreachableWithNoCachedKey) {
  auto token = provider_->UserAccessToken("alice");
  ASSERT_TRUE(token.ok()) << token.status();
  provider_->Stop();
  absl::StatusOr<VerifiedToken> verified = Verify(*token);
  ASSERT_FALSE(verified.ok());
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kUnavailable);
}

TEST_P(VerifierProviderTest, CachedKeysServeWhileTheProviderIsDown) {
  auto token = provider_->UserAccessToken("alice");
  ASSERT_TRUE(token.ok()) << token.status();
  ASSERT_TRUE(Verify(*token).ok());
  provider_->Stop();
  EXPECT_TRUE(Verify(*token).ok());
  // A kid the cache does not hold cannot be checked: UNAVAILABLE, never accepted.
  nlohmann::json header = DecodePart(*token, 0);
  header["kid"] = "rotated-while-down";
  std::vector<std::string> parts = absl::StrSplit(*token, '.');
  EXPECT_EQ(Verify(absl::StrCat(EncodeJson(header), ".", parts[1], ".", parts[2])).status().code(),
            absl::StatusCode::kUnavailable);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, VerifierProviderTest,
                         ::testing::Values("RS256", "ES256", "EdDSA"));

}  // namespace
}  // namespace sharedos::common::oidc
