#include "common/oidc/token_verifier.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/crypto/base64url.h"
#include "common/json/json_nesting.h"

namespace sharedos::common::oidc {
namespace {

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

// A NumericDate claim as a time; nullopt when absent, not a finite number or out of range.
std::optional<absl::Time> NumericDate(const nlohmann::json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return std::nullopt;
  const double seconds = it->get<double>();
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e11) return std::nullopt;
  return absl::FromUnixSeconds(static_cast<int64_t>(seconds));
}

absl::Status Refuse(Refusal reason, Refusal* out) {
  if (out != nullptr) *out = reason;
  return absl::UnauthenticatedError(kInvalidTokenMessage);
}

std::optional<nlohmann::json> ParseObject(absl::string_view encoded, size_t max_bytes) {
  if (encoded.size() > (max_bytes * 4) / 3 + 4) return std::nullopt;
  absl::StatusOr<std::string> decoded = Base64UrlDecode(encoded);
  if (!decoded.ok() || decoded->size() > max_bytes) return std::nullopt;
  if (!CheckJsonNesting(*decoded, "token", kMaxTokenJsonNesting).ok()) return std::nullopt;
  nlohmann::json value = nlohmann::json::parse(*decoded, nullptr, false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

}  // namespace

absl::string_view RefusalName(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone:
      return "none";
    case Refusal::kMalformed:
      return "malformed";
    case Refusal::kAlgorithm:
      return "algorithm";
    case Refusal::kUnknownKey:
      return "unknown_key";
    case Refusal::kKeyMismatch:
      return "key_mismatch";
    case Refusal::kSignature:
      return "signature";
    case Refusal::kIssuer:
      return "issuer";
    case Refusal::kAudience:
      return "audience";
    case Refusal::kExpired:
      return "expired";
    case Refusal::kNotYetValid:
      return "not_yet_valid";
    case Refusal::kSubject:
      return "subject";
    case Refusal::kNonce:
      return "nonce";
  }
  return "unknown";
}

bool LooksLikeJwt(absl::string_view token) {
  if (token.empty() || token.size() > kMaxTokenBytes) return false;
  int dots = 0;
  size_t part = 0;
  for (char c : token) {
    if (c == '.') {
      if (part == 0) return false;
      ++dots;
      part = 0;
    } else if (IsBase64UrlChar(c)) {
      ++part;
    } else {
      return false;
    }
  }
  return dots == 2 && part > 0;
}

absl::StatusOr<VerifiedToken> TokenVerifier::Verify(absl::string_view token,
                                                    absl::string_view expected_audience,
                                                    std::optional<absl::string_view> nonce,
                                                    Refusal* refusal) const {
  return VerifyImpl(token, {std::string(expected_audience)}, nonce, refusal);
}

absl::StatusOr<VerifiedToken> TokenVerifier::VerifyForAnyAudience(
    absl::string_view token, const std::vector<std::string>& accepted_audiences,
    Refusal* refusal) const {
  return VerifyImpl(token, accepted_audiences, std::nullopt, refusal);
}

absl::StatusOr<VerifiedToken> TokenVerifier::VerifyImpl(
    absl::string_view token, const std::vector<std::string>& accepted_audiences,
    std::optional<absl::string_view> nonce, Refusal* refusal) const {
  if (refusal != nullptr) *refusal = Refusal::kNone;
  if (!LooksLikeJwt(token)) return Refuse(Refusal::kMalformed, refusal);
  const std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  std::optional<nlohmann::json> header = ParseObject(parts[0], kMaxJoseHeaderBytes);
  if (!header.has_value()) return Refuse(Refusal::kMalformed, refusal);
  auto alg_it = header->find("alg");
  if (alg_it == header->end() || !alg_it->is_string()) {
    return Refuse(Refusal::kAlgorithm, refusal);
  }
  const std::string alg = alg_it->get<std::string>();
  bool allowed = IsSupportedAlgorithm(alg);
  if (allowed) {
    allowed = false;
    for (const std::string& a : config_.algorithms) allowed = allowed || a == alg;
  }
  if (!allowed) return Refuse(Refusal::kAlgorithm, refusal);
  // No JWS extension is understood, so none may be critical.
  if (header->contains("crit")) return Refuse(Refusal::kMalformed, refusal);
  auto kid_it = header->find("kid");
  if (kid_it == header->end() || !kid_it->is_string() || kid_it->get<std::string>().empty() ||
      kid_it->get<std::string>().size() > 256) {
    return Refuse(Refusal::kUnknownKey, refusal);
  }
  const std::string kid = kid_it->get<std::string>();
  absl::StatusOr<std::shared_ptr<const Jwk>> key = keys_.Find(kid);
  if (!key.ok()) {
    if (absl::IsNotFound(key.status())) return Refuse(Refusal::kUnknownKey, refusal);
    return absl::UnavailableError("the identity provider's keys are unavailable");
  }
  if (!(*key)->Accepts(alg)) return Refuse(Refusal::kKeyMismatch, refusal);
  absl::StatusOr<std::string> signature = Base64UrlDecode(parts[2]);
  const absl::string_view signing_input = token.substr(0, parts[0].size() + 1 + parts[1].size());
  if (!signature.ok() || !(*key)->Verify(alg, token, signing_input, *signature)) {
    return Refuse(Refusal::kSignature, refusal);
  }
  std::optional<nlohmann::json> claims = ParseObject(parts[1], kMaxTokenBytes);
  if (!claims.has_value()) return Refuse(Refusal::kMalformed, refusal);

  VerifiedToken verified;
  auto iss = claims->find("iss");
  if (iss == claims->end() || !iss->is_string() || iss->get<std::string>() != config_.issuer) {
    return Refuse(Refusal::kIssuer, refusal);
  }
  verified.issuer = config_.issuer;
  auto aud = claims->find("aud");
  if (aud != claims->end() && aud->is_string()) {
    verified.audiences.push_back(aud->get<std::string>());
  } else if (aud != claims->end() && aud->is_array() && aud->size() <= 32) {
    for (const nlohmann::json& a : *aud) {
      if (a.is_string()) verified.audiences.push_back(a.get<std::string>());
    }
  }
  bool audience_matches = false;
  for (const std::string& a : verified.audiences) {
    for (const std::string& accepted : accepted_audiences) {
      audience_matches = audience_matches || (!accepted.empty() && a == accepted);
    }
  }
  if (!audience_matches) {
    return Refuse(Refusal::kAudience, refusal);
  }
  const absl::Time now = clock_.Now();
  const std::optional<absl::Time> exp = NumericDate(*claims, "exp");
  if (!exp.has_value() || now > *exp + config_.clock_skew) {
    return Refuse(Refusal::kExpired, refusal);
  }
  verified.expires_at = *exp;
  for (const char* name : {"nbf", "iat"}) {
    if (!claims->contains(name)) continue;
    const std::optional<absl::Time> t = NumericDate(*claims, name);
    if (!t.has_value() || *t > now + config_.clock_skew) {
      return Refuse(Refusal::kNotYetValid, refusal);
    }
  }
  auto sub = claims->find("sub");
  if (sub == claims->end() || !sub->is_string() || sub->get<std::string>().empty() ||
      sub->get<std::string>().size() > 255) {
    return Refuse(Refusal::kSubject, refusal);
  }
  verified.subject = sub->get<std::string>();
  if (nonce.has_value()) {
    auto n = claims->find("nonce");
    if (nonce->empty() || n == claims->end() || !n->is_string() ||
        n->get<std::string>() != *nonce) {
      return Refuse(Refusal::kNonce, refusal);
    }
  }
  verified.algorithm = alg;
  verified.key_id = kid;
  verified.claims = *std::move(claims);
  return verified;
}

OidcVerifierStack::OidcVerifierStack(OidcConfig config, const Clock& clock,
                                     std::unique_ptr<HttpFetcher> fetcher)
    : config_(std::move(config)),
      fetcher_(fetcher != nullptr
                   ? std::move(fetcher)
                   : std::make_unique<HttplibFetcher>(config_.http_timeout, config_.ca_file)),
      discovery_(config_, *fetcher_, clock, config_.jwks.min_refresh_interval),
      keys_(config_, discovery_, *fetcher_, clock),
      verifier_(config_, keys_, clock) {}

}  // namespace sharedos::common::oidc
