#include "envelope_svc/mcp/execution_token.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_json.h"

namespace sharedos::envelope::mcp {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kPrefix = "x1";
constexpr absl::string_view kMacDomain = "sharedos.envelope.mcp.v1\n";

absl::Status Malformed() { return absl::UnauthenticatedError("execution token: malformed"); }

const std::string* StringAt(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

}  // namespace

std::string ExecutionTokenCodec::Mac(absl::string_view payload) const {
  return common::HmacSha256(secret_, absl::StrCat(kMacDomain, payload));
}

std::string ExecutionTokenCodec::Mint(const ExecutionTokenClaims& claims) const {
  const Json payload = {
      {"executionId", claims.execution_id}, {"turnId", claims.turn_id},
      {"namespaceId", claims.namespace_id}, {"actor", claims.actor},
      {"catalogHash", claims.catalog_hash}, {"expiresAtMs", absl::ToUnixMillis(claims.expires_at)}};
  const std::string text = common::CanonicalJson(payload);
  return absl::StrCat(kPrefix, ".", common::Base64UrlEncode(text), ".",
                      common::Base64UrlEncode(Mac(text)));
}

absl::StatusOr<ExecutionTokenClaims> ExecutionTokenCodec::Verify(absl::string_view token,
                                                                 absl::Time now) const {
  const std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  if (parts.size() != 3 || parts[0] != kPrefix) return Malformed();
  absl::StatusOr<std::string> text = common::Base64UrlDecode(parts[1]);
  absl::StatusOr<std::string> mac = common::Base64UrlDecode(parts[2]);
  if (!text.ok() || !mac.ok()) return Malformed();
  // Nothing of the payload is read before its MAC verifies.
  if (!common::ConstantTimeEquals(*mac, Mac(*text))) {
    return absl::UnauthenticatedError("execution token: integrity check failed");
  }
  const Json payload = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!payload.is_object()) return Malformed();
  ExecutionTokenClaims claims;
  const std::string* execution_id = StringAt(payload, "executionId");
  const std::string* turn_id = StringAt(payload, "turnId");
  const std::string* namespace_id = StringAt(payload, "namespaceId");
  const std::string* actor = StringAt(payload, "actor");
  const std::string* catalog_hash = StringAt(payload, "catalogHash");
  auto expires = payload.find("expiresAtMs");
  if (execution_id == nullptr || turn_id == nullptr || namespace_id == nullptr ||
      actor == nullptr || catalog_hash == nullptr || expires == payload.end() ||
      !expires->is_number_integer()) {
    return Malformed();
  }
  claims.execution_id = *execution_id;
  claims.turn_id = *turn_id;
  claims.namespace_id = *namespace_id;
  claims.actor = *actor;
  claims.catalog_hash = *catalog_hash;
  claims.expires_at = absl::FromUnixMillis(expires->get<int64_t>());
  if (now >= claims.expires_at) return absl::UnauthenticatedError("execution token: expired");
  return claims;
}

}  // namespace sharedos::envelope::mcp
