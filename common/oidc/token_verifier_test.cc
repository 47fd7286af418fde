// The verifier, the JWKS cache, the config and the claims mapping with keys generated here
// (libcjose for RSA and EC, OpenSSL for Ed25519) and provider documents served from memory.
#include "common/oidc/token_verifier.h"

#include <openssl/evp.h>

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cjose/cjose.h"
#include "common/crypto/base64url.h"
#include "common/oidc/claims_mapping.h"
#include "common/oidc/config.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::oidc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kIssuer[] = "https://idp.example.test";
constexpr char kJwksUri[] = "https://idp.example.test/jwks";
constexpr int64_t kNow = 1800000000;

class MemoryFetcher : public HttpFetcher {
 public:
  absl::StatusOr<std::string> Get(absl::string_view url, size_t max_bytes) const override {
    absl::MutexLock lock(&mu_);
    ++gets_[std::string(url)];
    if (down_) return absl::UnavailableError("down");
    auto it = bodies_.find(std::string(url));
    if (it == bodies_.end()) return absl::UnavailableError("404");
    if (it->second.size() > max_bytes) return absl::UnavailableError("too large");
    return it->second;
  }
  void Set(const std::string& url, const std::string& body) {
    absl::MutexLock lock(&mu_);
    bodies_[url] = body;
  }
  void SetDown(bool down) {
    absl::MutexLock lock(&mu_);
    down_ = down;
  }
  int gets(const std::string& url) {
    absl::MutexLock lock(&mu_);
    return gets_[url];
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::string> bodies_ ABSL_GUARDED_BY(mu_);
  mutable std::map<std::string, int> gets_ ABSL_GUARDED_BY(mu_);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
};

// A signing key and its public JWK.
struct Key {
  std::string alg, kid;
  cjose_jwk_t* cjose = nullptr;
  EVP_PKEY* ed25519 = nullptr;
  nlohmann::json public_jwk;

  static Key Rsa(const std::string& kid) {
    Key key;
    key.alg = "RS256";
    key.kid = kid;
    cjose_err err;
    key.cjose = cjose_jwk_create_RSA_random(2048, nullptr, 0, &err);
    key.FinishCjose();
    return key;
  }
  static Key Ec(const std::string& kid) {
    Key key;
    key.alg = "ES256";
    key.kid = kid;
    cjose_err err;
    key.cjose = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
    key.FinishCjose();
    return key;
  }
  static Key Ed(const std::string& kid) {
    Key key;
    key.alg = "EdDSA";
    key.kid = kid;
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
    EVP_PKEY_keygen_init(ctx);
    EVP_PKEY_keygen(ctx, &key.ed25519);
    EVP_PKEY_CTX_free(ctx);
    unsigned char raw[32];
    size_t length = sizeof(raw);
    EVP_PKEY_get_raw_public_key(key.ed25519, raw, &length);
    key.public_jwk = {{"kty", "OKP"},
                      {"crv", "Ed25519"},
                      {"kid", kid},
                      {"x", Base64UrlEncode(std::string(reinterpret_cast<char*>(raw), length))}};
    return key;
  }
  void FinishCjose() {
    cjose_err err;
    cjose_jwk_set_kid(cjose, kid.data(), kid.size(), &err);
    char* json = cjose_jwk_to_json(cjose, false, &err);
    public_jwk = nlohmann::json::parse(json);
    free(json);
  }

  // A compact JWS over `claims` with `header` fields added to {alg, kid}.
  std::string Sign(const nlohmann::json& claims,
                   const nlohmann::json& extra_header = nlohmann::json::object()) const {
    nlohmann::json header = {{"alg", alg}, {"kid", kid}};
    header.update(extra_header);
    const std::string input =
        absl::StrCat(Base64UrlEncode(header.dump()), ".", Base64UrlEncode(claims.dump()));
    if (ed25519 != nullptr) {
      EVP_MD_CTX* ctx = EVP_MD_CTX_new();
      unsigned char sig[64];
      size_t sig_length = sizeof(sig);
      EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, ed25519);
      EVP_DigestSign(ctx, sig, &sig_length, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size());
      EVP_MD_CTX_free(ctx);
      return absl::StrCat(input, ".",
                          Base64UrlEncode(std::string(reinterpret_cast<char*>(sig), sig_length)));
    }
    cjose_err err;
    cjose_header_t* hdr = cjose_header_new(&err);
    for (const auto& [name, value] : header.items()) {
      cjose_header_set(hdr, name.c_str(), value.get<std::string>().c_str(), &err);
    }
    const std::string payload = claims.dump();
    cjose_jws_t* jws = cjose_jws_sign(cjose, hdr, reinterpret_cast<const uint8_t*>(payload.data()),
                                      payload.size(), &err);
    const char* compact = nullptr;
    cjose_jws_export(jws, &compact, &err);
    std::string out = compact;
    cjose_jws_release(jws);
    cjose_header_release(hdr);
    return out;
  }
};

OidcConfig TestConfig() {
  auto config = ParseOidcConfig(absl::StrCat(R"({"issuer": ")", kIssuer, R"(",
    "audiences": ["sharedos"], "clock_skew_seconds": 60,
    "jwks": {"min_refresh_interval_seconds": 10, "refresh_interval_seconds": 3600, "max_keys": 4},
    "claims": {"principal": "sub", "rules": [
      {"group": "reviewers-a", "role": "reviewer", "namespaces": ["world-a"]},
      {"group": "admins", "role": "admin", "namespaces": ["*"]},
      {"group": "reviewers-b", "role": "reviewer", "namespaces": ["world-b"]}]}})"));
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

nlohmann::json Claims() {
  return {{"iss", kIssuer}, {"sub", "alice"}, {"aud", "sharedos"},        {"exp", kNow + 600},
          {"iat", kNow},    {"nbf", kNow},    {"groups", {"reviewers-a"}}};
}

class TokenVerifierTest : public ::testing::Test {
 protected:
  TokenVerifierTest() : clock_(absl::FromUnixSeconds(kNow)) {
    fetcher_ = new MemoryFetcher();
    fetcher_->Set(DiscoveryUrl(kIssuer),
                  nlohmann::json{{"issuer", kIssuer}, {"jwks_uri", kJwksUri}}.dump());
    Publish({&rsa_, &ec_, &ed_});
    stack_ = std::make_unique<OidcVerifierStack>(TestConfig(), clock_,
                                                 std::unique_ptr<HttpFetcher>(fetcher_));
  }

  void Publish(const std::vector<const Key*>& keys) {
    nlohmann::json set = {{"keys", nlohmann::json::array()}};
    for (const Key* key : keys) set["keys"].push_back(key->public_jwk);
    fetcher_->Set(kJwksUri, set.dump());
  }

  Refusal Refused(const std::string& token, std::optional<absl::string_view> nonce = {}) {
    Refusal refusal = Refusal::kNone;
    auto verified = stack_->verifier().Verify(token, "sharedos", nonce, &refusal);
    EXPECT_FALSE(verified.ok());
    if (!verified.ok()) {
      EXPECT_EQ(verified.status().code(), absl::StatusCode::kUnauthenticated);
      EXPECT_EQ(verified.status().message(), kInvalidTokenMessage);
    }
    return refusal;
  }

  SimulatedClock clock_;
  MemoryFetcher* fetcher_;  // owned by stack_
  Key rsa_ = Key::Rsa("rsa-1");
  Key ec_ = Key::Ec("ec-1");
  Key ed_ = Key::Ed("ed-1");
  std::unique_ptr<OidcVerifierStack> stack_;
};

TEST_F(TokenVerifierTest, AcceptsEachAllowedAlgorithm) {
  for (const Key* key : {&rsa_, &ec_, &ed_}) {
    auto verified = stack_->verifier().Verify(key->Sign(Claims()), "sharedos");
    ASSERT_TRUE(verified.ok()) << key->alg << ": " << verified.status();
    EXPECT_EQ(verified->subject, "alice");
    EXPECT_EQ(verified->algorithm, key->alg);
    EXPECT_EQ(verified->key_id, key->kid);
    EXPECT_EQ(verified->expires_at, absl::FromUnixSeconds(kNow + 600));
  }
}

TEST_F(TokenVerifierTest, ExpiryAndNotBeforeHoldWithinTheSkewOnly) {
  nlohmann::json claims = Claims();
  claims["exp"] = kNow - 59;  // within 60 s of skew
  EXPECT_TRUE(stack_->verifier().Verify(rsa_.Sign(claims), "sharedos").ok());
  claims["exp"] = kNow - 61;
  EXPECT_EQ(Refused(rsa_.Sign(claims)), Refusal::kExpired);
  claims.erase("exp");
  EXPECT_EQ(Refused(rsa_.Sign(claims)), Refusal::kExpired);
  claims = Claims();
  claims["nbf"] = kNow + 61;
  EXPECT_EQ(Refused(rsa_.Sign(claims)), Refusal::kNotYetValid);
  claims["nbf"] = kNow;
  claims["iat"] = kNow + 3600;
  EXPECT_EQ(Refused(rsa_.Sign(claims)), Refusal::kNotYetValid);
}

TEST_F(TokenVerifierTest, IssuerAudienceSubjectAndNonceAreChecked) {
  nlohmann::json claims = Claims();
  claims["iss"] = "https://idp.example.test/";  // not byte for byte
  EXPECT_EQ(Refused(rsa_.Sign(claims)), Refusal::kIssuer);
  claims = Claims();
  claims["aud"] = {"other", "also-other"};
  EXPECT_EQ(Refused(rsa_.Sign(claims)), Refusal::kAudience);
  claims["aud"] = {"other", "sharedos"};
  EXPECT_TRUE(stack_->verifier().Verify(rsa_.Sign(claims), "sharedos").ok());
  claims.erase("sub");
  EXPECT_EQ(Refused(rsa_.Sign(claims)), Refusal::kSubject);
  claims = Claims();
  claims["nonce"] = "n-1";
  EXPECT_TRUE(stack_->verifier().Verify(rsa_.Sign(claims), "sharedos", "n-1").ok());
  EXPECT_EQ(Refused(rsa_.Sign(claims), "n-2"), Refusal::kNonce);
  EXPECT_EQ(Refused(rsa_.Sign(Claims()), "n-1"), Refusal::kNonce);
}

TEST_F(TokenVerifierTest, AlgorithmConfusionIsImpossible) {
  const std::string token = rsa_.Sign(Claims());
  const std::string payload = token.substr(token.find('.') + 1);
  for (const char* alg : {"none", "HS256", "HS384", "HS512", "RS1", ""}) {
    const std::string header =
        Base64UrlEncode(nlohmann::json{{"alg", alg}, {"kid", "rsa-1"}}.dump());
    EXPECT_EQ(Refused(absl::StrCat(header, ".", payload)), Refusal::kAlgorithm) << alg;
  }
  // An ES256 token naming the RSA key, an RS256 token naming the EC key: the key's type decides.
  Key ec_as_rsa = ec_;
  ec_as_rsa.kid = "rsa-1";
  EXPECT_EQ(Refused(ec_as_rsa.Sign(Claims())), Refusal::kKeyMismatch);
  EXPECT_EQ(Refused(rsa_.Sign(Claims(), {{"kid", "ec-1"}})), Refusal::kKeyMismatch);
}

TEST_F(TokenVerifierTest, ANotConfiguredAlgorithmIsRefused) {
  auto config = ParseOidcConfig(absl::StrCat(R"({"issuer": ")", kIssuer, R"(",
    "audiences": ["sharedos"], "algorithms": ["ES256"],
    "claims": {"rules": [{"group": "g", "role": "reviewer", "namespaces": ["w"]}]}})"));
  ASSERT_TRUE(config.ok()) << config.status();
  auto* fetcher = new MemoryFetcher();
  fetcher->Set(DiscoveryUrl(kIssuer),
               nlohmann::json{{"issuer", kIssuer}, {"jwks_uri", kJwksUri}}.dump());
  fetcher->Set(kJwksUri, nlohmann::json{{"keys", {rsa_.public_jwk, ec_.public_jwk}}}.dump());
  OidcVerifierStack stack(*config, clock_, std::unique_ptr<HttpFetcher>(fetcher));
  Refusal refusal = Refusal::kNone;
  EXPECT_FALSE(stack.verifier().Verify(rsa_.Sign(Claims()), "sharedos", {}, &refusal).ok());
  EXPECT_EQ(refusal, Refusal::kAlgorithm);
  EXPECT_TRUE(stack.verifier().Verify(ec_.Sign(Claims()), "sharedos").ok());
}

TEST_F(TokenVerifierTest, TamperedAndMalformedTokensAreRefused) {
  const std::string token = rsa_.Sign(Claims());
  const size_t first = token.find('.'), second = token.rfind('.');
  nlohmann::json claims = Claims();
  claims["groups"] = {"admins"};
  EXPECT_EQ(Refused(absl::StrCat(token.substr(0, first), ".", Base64UrlEncode(claims.dump()),
                                 token.substr(second))),
            Refusal::kSignature);
  EXPECT_EQ(Refused(token.substr(0, second)), Refusal::kMalformed);
  EXPECT_EQ(Refused(token + ".x"), Refusal::kMalformed);
  EXPECT_EQ(Refused(std::string(kMaxTokenBytes + 1, 'a')), Refusal::kMalformed);
  EXPECT_EQ(Refused("a.b.c"), Refusal::kMalformed);
  // Claims nested deeper than the bound.
  std::string deep = std::string(40, '[') + std::string(40, ']');
  EXPECT_EQ(Refused(absl::StrCat(token.substr(0, first), ".",
                                 Base64UrlEncode(absl::StrCat(R"({"x":)", deep, "}")),
                                 token.substr(second))),
            Refusal::kSignature);
}

TEST_F(TokenVerifierTest, AnUnknownKidRefetchesAtMostOncePerInterval) {
  ASSERT_TRUE(stack_->verifier().Verify(rsa_.Sign(Claims()), "sharedos").ok());
  EXPECT_EQ(fetcher_->gets(kJwksUri), 1);
  Key unknown = Key::Rsa("rsa-unknown");
  EXPECT_EQ(Refused(unknown.Sign(Claims())), Refusal::kUnknownKey);
  EXPECT_EQ(fetcher_->gets(kJwksUri), 1);  // fetched less than 10 s ago
  clock_.AdvanceTime(absl::Seconds(11));
  EXPECT_EQ(Refused(unknown.Sign(Claims())), Refusal::kUnknownKey);
  EXPECT_EQ(fetcher_->gets(kJwksUri), 2);
  for (int i = 0; i < 20; ++i) Refused(unknown.Sign(Claims()));
  EXPECT_EQ(fetcher_->gets(kJwksUri), 2);
  // The provider rotates: the new kid is fetched once the interval has passed.
  Key rotated = Key::Rsa("rsa-2");
  Publish({&rotated, &rsa_});
  clock_.AdvanceTime(absl::Seconds(11));
  EXPECT_TRUE(stack_->verifier().Verify(rotated.Sign(Claims()), "sharedos").ok());
  EXPECT_EQ(fetcher_->gets(kJwksUri), 3);
}

TEST_F(TokenVerifierTest, CachedKeysServeWhileTheProviderIsDownAndUnknownKidsAreUnavailable) {
  ASSERT_TRUE(stack_->verifier().Verify(rsa_.Sign(Claims()), "sharedos").ok());
  fetcher_->SetDown(true);
  clock_.AdvanceTime(absl::Hours(2));  // past the refresh interval: the refetch fails
  nlohmann::json claims = Claims();
  claims["exp"] = kNow + 3 * 3600;
  EXPECT_TRUE(stack_->verifier().Verify(rsa_.Sign(claims), "sharedos").ok());
  Key unknown = Key::Rsa("rsa-unknown");
  auto verified = stack_->verifier().Verify(unknown.Sign(claims), "sharedos");
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(TokenVerifierTest, NoKeyEverFetchedIsUnavailable) {
  fetcher_->SetDown(true);
  auto verified = stack_->verifier().Verify(rsa_.Sign(Claims()), "sharedos");
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(TokenVerifierTest, ADiscoveryDocumentOfAnotherIssuerIsUnusable) {
  fetcher_->Set(DiscoveryUrl(kIssuer),
                nlohmann::json{{"issuer", "https://evil.example"}, {"jwks_uri", kJwksUri}}.dump());
  auto verified = stack_->verifier().Verify(rsa_.Sign(Claims()), "sharedos");
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kUnavailable);
}

TEST(JwksTest, KeysSharedOsDoesNotUseAreSkippedAndTheSetIsBounded) {
  Key rsa = Key::Rsa("rsa-1");
  nlohmann::json priv = rsa.public_jwk;
  priv["kid"] = "with-private";
  priv["d"] = "AAAA";
  nlohmann::json enc = rsa.public_jwk;
  enc["kid"] = "enc";
  enc["use"] = "enc";
  nlohmann::json oct = {{"kty", "oct"}, {"kid", "oct"}, {"k", "c2VjcmV0"}};
  JwksCacheOptions options;
  auto keys = ParseJwks(nlohmann::json{{"keys", {rsa.public_jwk, priv, enc, oct}}}.dump(), options);
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->size(), 1u);
  EXPECT_EQ(keys->count("rsa-1"), 1u);
  options.max_keys = 2;
  EXPECT_EQ(ParseJwks(nlohmann::json{{"keys", {oct, oct, oct}}}.dump(), options).status().code(),
            absl::StatusCode::kUnavailable);
  options.max_bytes = 10;
  EXPECT_EQ(ParseJwks(R"({"keys": []})", options).status().code(), absl::StatusCode::kUnavailable);
}

TEST(ConfigTest, DefaultsAndBounds) {
  auto config = ParseOidcConfig(R"({"issuer": "https://idp.example", "audiences": ["a"],
    "claims": {"rules": [{"group": "g", "role": "admin", "namespaces": ["*"]}]}})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_THAT(config->algorithms, ElementsAre("RS256", "ES256", "EdDSA"));
  EXPECT_EQ(config->clock_skew, absl::Seconds(60));
  EXPECT_EQ(config->claims.principal_claim, "sub");
  EXPECT_EQ(config->claims.groups_claim, "groups");
  EXPECT_FALSE(config->allow_loopback_http);
}

TEST(ConfigTest, RefusesABadFileNamingTheField) {
  const std::string rules =
      R"("claims": {"rules": [{"group": "g", "role": "admin", "namespaces": ["*"]}]})";
  struct Case {
    std::string json, field;
  } cases[] = {
      {absl::StrCat(R"({"issuer": "https://i", "audiences": ["a"], "algorithms": ["HS256"], )",
                    rules, "}"),
       "algorithms[0]"},
      {absl::StrCat(R"({"issuer": "https://i", "audiences": ["a"], "algorithms": ["none"], )",
                    rules, "}"),
       "algorithms[0]"},
      {absl::StrCat(R"({"issuer": "http://idp.example", "audiences": ["a"], )", rules, "}"),
       "issuer"},
      {absl::StrCat(R"({"issuer": "http://127.0.0.1:9", "audiences": ["a"], )", rules, "}"),
       "issuer"},
      {absl::StrCat(R"({"issuer": "https://i", "audiences": [], )", rules, "}"), "audiences"},
      {absl::StrCat(R"({"issuer": "https://i", "audiences": ["a"], "clock_skew_seconds": 301, )",
                    rules, "}"),
       "clock_skew_seconds"},
      {absl::StrCat(R"({"issuer": "https://i", "audiences": ["a"], "jwks": {"max_keys": 0}, )",
                    rules, "}"),
       "jwks.max_keys"},
      {absl::StrCat(R"({"issuer": "https://i", "audiences": ["a"], "surprise": 1, )", rules, "}"),
       "surprise"},
      {R"({"issuer": "https://i", "audiences": ["a"], "claims": {"principal": "name",
          "rules": [{"group": "g", "role": "admin", "namespaces": ["*"]}]}})",
       "claims.principal"},
      {R"({"issuer": "https://i", "audiences": ["a"], "claims": {
          "rules": [{"group": "g", "role": "host", "namespaces": ["*"]}]}})",
       "claims.rules[0].role"},
      {R"({"issuer": "https://i", "audiences": ["a"]})", "claims"},
      {"[1]", "(file)"},
  };
  for (const Case& c : cases) {
    auto config = ParseOidcConfig(c.json);
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(config.status().message(), HasSubstr(absl::StrCat(c.field, ":"))) << c.json;
  }
  // Loopback http only when allowed.
  EXPECT_TRUE(ParseOidcConfig(absl::StrCat(R"({"issuer": "http://127.0.0.1:9",
      "allow_loopback_http": true, "audiences": ["a"], )",
                                           rules, "}"))
                  .ok());
}

TEST(ConfigTest, ProviderUrlsAreHttpsOrLoopbackHttpWhenAllowed) {
  OidcConfig config;
  EXPECT_TRUE(IsAllowedProviderUrl(config, "https://idp.example/oauth2/v1/keys"));
  EXPECT_TRUE(IsAllowedProviderUrl(config, "https://idp.example:8443?x=1"));
  for (const char* refused :
       {"http://127.0.0.1:9/jwks", "ftp://idp.example/", "https://user@idp.example/",
        "https://idp.example/#keys", "https:///jwks", "https://idp.example/ jwks"}) {
    EXPECT_FALSE(IsAllowedProviderUrl(config, refused)) << refused;
  }
  config.allow_loopback_http = true;
  for (const char* loopback :
       {"http://127.0.0.1:9/jwks", "http://localhost:9/", "http://[::1]:9/", "http://127.1.2.3/"}) {
    EXPECT_TRUE(IsAllowedProviderUrl(config, loopback)) << loopback;
  }
  for (const char* remote : {"http://idp.example/", "http://127.0.0.1.example/", "http://[::2]:9/",
                             "http://10.0.0.1/"}) {
    EXPECT_FALSE(IsAllowedProviderUrl(config, remote)) << remote;
  }
}

TEST(ClaimsMappingTest, MapsThePrincipalRoleAndScope) {
  const OidcConfig config = TestConfig();
  VerifiedToken token;
  token.issuer = kIssuer;
  token.subject = "alice";
  token.claims = Claims();
  token.claims["groups"] = {"reviewers-b", "reviewers-a"};
  auto principal = MapToPrincipal(config.claims, token);
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->address, "human:alice");
  EXPECT_EQ(principal->role, server::Role::kReviewer);
  EXPECT_THAT(principal->scope.namespaces, ElementsAre("world-a", "world-b"));
  EXPECT_EQ(principal->idp_issuer, kIssuer);
  EXPECT_EQ(principal->idp_subject, "alice");
  // The first matching rule's role: admins precede reviewers-b.
  token.claims["groups"] = {"reviewers-b", "admins"};
  principal = MapToPrincipal(config.claims, token);
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->role, server::Role::kAdmin);
  EXPECT_THAT(principal->scope.namespaces, ElementsAre("*"));
  // No matching rule: authenticated, but no SharedOS role.
  token.claims["groups"] = {"somebody-else"};
  EXPECT_EQ(MapToPrincipal(config.claims, token).status().code(),
            absl::StatusCode::kPermissionDenied);
  token.claims.erase("groups");
  EXPECT_EQ(MapToPrincipal(config.claims, token).status().code(),
            absl::StatusCode::kPermissionDenied);
  // A principal value that is no address id.
  token.claims["groups"] = {"reviewers-a"};
  token.claims["sub"] = "evil:admin";
  EXPECT_EQ(MapToPrincipal(config.claims, token).status().code(),
            absl::StatusCode::kUnauthenticated);
  // By email.
  OidcConfig by_email = config;
  by_email.claims.principal_claim = "email";
  token.claims["sub"] = "alice";
  token.claims["email"] = "alice@example.test";
  principal = MapToPrincipal(by_email.claims, token);
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->address, "human:alice@example.test");
}

}  // namespace
}  // namespace sharedos::common::oidc
