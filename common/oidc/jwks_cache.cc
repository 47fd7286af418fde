#include "common/oidc/jwks_cache.h"

#include <openssl/evp.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cjose/cjose.h"
#include "common/crypto/base64url.h"
#include "common/json/json_nesting.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::oidc {
namespace {

std::string StringField(const nlohmann::json& key, const char* name) {
  auto it = key.find(name);
  if (it == key.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

// The key type and curve an allowed algorithm verifies with.
bool AlgorithmUses(absl::string_view alg, absl::string_view kty, absl::string_view crv) {
  if (alg == "RS256" || alg == "RS384" || alg == "RS512" || alg == "PS256" || alg == "PS384" ||
      alg == "PS512") {
    return kty == "RSA";
  }
  if (alg == "ES256") return kty == "EC" && crv == "P-256";
  if (alg == "ES384") return kty == "EC" && crv == "P-384";
  if (alg == "EdDSA") return kty == "OKP" && crv == "Ed25519";
  return false;
}

}  // namespace

Jwk::~Jwk() {
  if (cjose_key_ != nullptr) cjose_jwk_release(static_cast<cjose_jwk_t*>(cjose_key_));
  if (ed25519_key_ != nullptr) EVP_PKEY_free(static_cast<EVP_PKEY*>(ed25519_key_));
}

bool Jwk::Accepts(absl::string_view alg) const {
  if (!IsSupportedAlgorithm(alg)) return false;
  if (!alg_.empty() && alg_ != alg) return false;
  return AlgorithmUses(alg, kty_, crv_);
}

bool Jwk::Verify(absl::string_view alg, absl::string_view compact, absl::string_view signing_input,
                 absl::string_view signature) const {
  if (!Accepts(alg)) return false;
  if (kty_ == "OKP") {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    if (ctx == nullptr) return false;
    bool ok = EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr,
                                   static_cast<EVP_PKEY*>(ed25519_key_)) == 1 &&
              EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                               signature.size(),
                               reinterpret_cast<const unsigned char*>(signing_input.data()),
                               signing_input.size()) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
  }
  cjose_err err;
  cjose_jws_t* jws = cjose_jws_import(compact.data(), compact.size(), &err);
  if (jws == nullptr) return false;
  const bool ok = cjose_jws_verify(jws, static_cast<const cjose_jwk_t*>(cjose_key_), &err);
  cjose_jws_release(jws);
  return ok;
}

std::unique_ptr<Jwk> Jwk::FromJson(const std::string& key_json) {
  const nlohmann::json key = nlohmann::json::parse(key_json, nullptr, false);
  if (key.is_discarded() || !key.is_object()) return nullptr;
  std::unique_ptr<Jwk> jwk(new Jwk());
  jwk->kid_ = StringField(key, "kid");
  jwk->kty_ = StringField(key, "kty");
  jwk->alg_ = StringField(key, "alg");
  jwk->crv_ = StringField(key, "crv");
  const std::string use = StringField(key, "use");
  if (jwk->kid_.empty() || jwk->kid_.size() > 256) return nullptr;
  if (!use.empty() && use != "sig") return nullptr;
  if (!jwk->alg_.empty() && !IsSupportedAlgorithm(jwk->alg_)) return nullptr;
  // A published private key (or a symmetric one) is not a verification key.
  for (const char* secret : {"d", "p", "q", "dp", "dq", "qi", "k"}) {
    if (key.contains(secret)) return nullptr;
  }
  if (jwk->kty_ == "RSA") {
    absl::StatusOr<std::string> n = Base64UrlDecode(StringField(key, "n"));
    if (!n.ok() || n->size() < 256) return nullptr;  // < 2048 bits
  } else if (jwk->kty_ == "EC") {
    if (jwk->crv_ != "P-256" && jwk->crv_ != "P-384") return nullptr;
  } else if (jwk->kty_ == "OKP") {
    if (jwk->crv_ != "Ed25519") return nullptr;
    absl::StatusOr<std::string> x = Base64UrlDecode(StringField(key, "x"));
    if (!x.ok() || x->size() != 32) return nullptr;
    jwk->ed25519_key_ = EVP_PKEY_new_raw_public_key(
        EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(x->data()), x->size());
    if (jwk->ed25519_key_ == nullptr) return nullptr;
    return jwk;
  } else {
    return nullptr;
  }
  cjose_err err;
  cjose_jwk_t* imported = cjose_jwk_import(key_json.data(), key_json.size(), &err);
  if (imported == nullptr) return nullptr;
  jwk->cjose_key_ = imported;
  const cjose_jwk_kty_t kty = cjose_jwk_get_kty(imported, &err);
  if ((jwk->kty_ == "RSA" && kty != CJOSE_JWK_KTY_RSA) ||
      (jwk->kty_ == "EC" && kty != CJOSE_JWK_KTY_EC)) {
    return nullptr;
  }
  return jwk;
}

absl::StatusOr<std::map<std::string, std::shared_ptr<const Jwk>>> ParseJwks(
    absl::string_view text, const JwksCacheOptions& options) {
  if (text.size() > options.max_bytes) {
    return absl::UnavailableError(
        absl::StrCat("provider JWKS larger than ", options.max_bytes, " bytes"));
  }
  if (!CheckJsonNesting(text, "jwks", kMaxTokenJsonNesting).ok()) {
    return absl::UnavailableError("provider JWKS nested too deep");
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array()) {
    return absl::UnavailableError("provider JWKS is not a key set");
  }
  if (doc["keys"].size() > options.max_keys) {
    return absl::UnavailableError(
        absl::StrCat("provider JWKS has more than ", options.max_keys, " keys"));
  }
  std::map<std::string, std::shared_ptr<const Jwk>> keys;
  for (const nlohmann::json& item : doc["keys"]) {
    std::unique_ptr<Jwk> jwk = Jwk::FromJson(item.dump());
    if (jwk == nullptr) continue;
    const std::string kid = jwk->kid();
    keys.emplace(kid, std::shared_ptr<const Jwk>(std::move(jwk)));
  }
  return keys;
}

absl::Status JwksCache::RefreshLocked(absl::Time now) const {
  last_attempt_ = now;
  ++fetch_count_;
  absl::Status status;
  absl::StatusOr<ProviderMetadata> metadata = discovery_.Get();
  if (!metadata.ok()) {
    status = absl::UnavailableError(metadata.status().message());
  } else {
    absl::StatusOr<std::string> body = fetcher_.Get(metadata->jwks_uri, config_.jwks.max_bytes);
    if (!body.ok()) {
      status = absl::UnavailableError(body.status().message());
    } else {
      auto keys = ParseJwks(*body, config_.jwks);
      if (!keys.ok()) {
        status = keys.status();
      } else {
        keys_ = *std::move(keys);
        have_keys_ = true;
        last_success_ = now;
      }
    }
  }
  last_error_ = status;
  return status;
}

absl::StatusOr<std::shared_ptr<const Jwk>> JwksCache::Find(absl::string_view kid) const {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  const bool may_fetch = now - last_attempt_ >= config_.jwks.min_refresh_interval;
  bool fetched = false;
  if (may_fetch && (!have_keys_ || now - last_success_ >= config_.jwks.refresh_interval)) {
    (void)RefreshLocked(now);  // on failure the cached keys still serve
    fetched = true;
  }
  auto it = keys_.find(std::string(kid));
  if (it != keys_.end()) return it->second;
  if (!fetched && may_fetch) {
    (void)RefreshLocked(now);  // an unknown kid: the provider may have rotated its keys
    it = keys_.find(std::string(kid));
    if (it != keys_.end()) return it->second;
  }
  if (!have_keys_ || !last_error_.ok()) {
    return absl::UnavailableError(
        absl::StrCat("provider keys unavailable: ", last_error_.message()));
  }
  return absl::NotFoundError("no provider key with that kid");
}

int JwksCache::fetch_count() const {
  absl::MutexLock lock(&mu_);
  return fetch_count_;
}

}  // namespace sharedos::common::oidc
