#include "authorizer_svc/core/lease_id.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "capability/errors.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_json.h"
#include "common/json/protocol_json.h"

namespace sharedos::authorizer::core {
namespace {

using Json = nlohmann::json;
using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::Address;

constexpr absl::string_view kPrefix = "l1";
constexpr absl::string_view kMacDomain = "sharedos.authorizer.lease.v1\n";

Json KeyJson(const AccessContext& context, absl::string_view turn_id) {
  return Json{{"namespaceId", context.namespace_id()},
              {"actor", common::AddressToJson(context.actor())},
              {"authority", common::AddressToJson(context.authority())},
              {"owner", common::AddressToJson(context.owner())},
              {"purpose", context.purpose()},
              {"traceId", context.trace_id()},
              {"turnId", std::string(turn_id)}};
}

const std::string* StringAt(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

bool IntegerAt(const Json& object, const char* key, int64_t* out) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return false;
  *out = it->get<int64_t>();
  return true;
}

// The reference shape of an Address (common::AddressToJson) back into a proto.
bool AddressFromJson(const Json& json, Address* address) {
  if (!json.is_object() || json.size() != 2) return false;
  const std::string* kind = StringAt(json, "kind");
  if (kind == nullptr) return false;
  const std::string* id = nullptr;
  if (*kind == "human" && (id = StringAt(json, "userId")) != nullptr) {
    address->set_human_user_id(*id);
  } else if (*kind == "agent" && (id = StringAt(json, "agentId")) != nullptr) {
    address->set_agent_id(*id);
  } else if (*kind == "group" && (id = StringAt(json, "conversationId")) != nullptr) {
    address->set_group_conversation_id(*id);
  } else if (*kind == "service" && (id = StringAt(json, "serviceId")) != nullptr) {
    address->set_service_id(*id);
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::string LeaseKey(const AccessContext& context, absl::string_view turn_id) {
  return common::CanonicalJson(KeyJson(context, turn_id));
}

AccessContext LeaseContext(const AccessContext& context) {
  AccessContext lease;
  lease.set_namespace_id(context.namespace_id());
  *lease.mutable_actor() = context.actor();
  *lease.mutable_authority() = context.authority();
  *lease.mutable_owner() = context.owner();
  lease.set_purpose(context.purpose());
  lease.set_trace_id(context.trace_id());
  *lease.mutable_now() = context.now();
  return lease;
}

std::string LeaseIdCodec::Mac(absl::string_view payload) const {
  return common::HmacSha256(secret_, absl::StrCat(kMacDomain, payload));
}

std::string LeaseIdCodec::Encode(const LeaseClaims& claims) const {
  Json payload = {
      {"key", KeyJson(claims.context, claims.turn_id)},
      {"admittedAt", Json::array({claims.context.now().seconds(), claims.context.now().nanos()})},
      {"expiresAtMs", absl::ToUnixMillis(claims.expires_at)},
  };
  if (claims.status == LeaseClaims::Status::kResolved) {
    payload["status"] = "resolved";
    payload["revision"] = claims.revision;
    payload["authorityHash"] = claims.authority_hash;
  } else {
    payload["status"] = "unavailable";
    payload["code"] = claims.code;
    payload["authority"] = claims.internal_code;
  }
  const std::string text = common::CanonicalJson(payload);
  return absl::StrCat(kPrefix, ".", common::Base64UrlEncode(text), ".",
                      common::Base64UrlEncode(Mac(text)));
}

absl::StatusOr<LeaseClaims> LeaseIdCodec::Decode(absl::string_view lease_id) const {
  if (lease_id.empty()) return capability::errors::LeaseMalformed("empty");
  const std::vector<absl::string_view> parts = absl::StrSplit(lease_id, '.');
  if (parts.size() != 3 || parts[0] != kPrefix)
    return capability::errors::LeaseMalformed("unknown format");
  absl::StatusOr<std::string> text = common::Base64UrlDecode(parts[1]);
  absl::StatusOr<std::string> mac = common::Base64UrlDecode(parts[2]);
  if (!text.ok() || !mac.ok()) return capability::errors::LeaseMalformed("not base64url");
  // Nothing of the payload is read before its MAC verifies.
  if (!common::ConstantTimeEquals(*mac, Mac(*text))) return capability::errors::LeaseTampered();

  const Json payload = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!payload.is_object()) return capability::errors::LeaseMalformed("payload");
  LeaseClaims claims;
  auto key = payload.find("key");
  if (key == payload.end() || !key->is_object()) return capability::errors::LeaseMalformed("key");
  const std::string* namespace_id = StringAt(*key, "namespaceId");
  const std::string* purpose = StringAt(*key, "purpose");
  const std::string* trace_id = StringAt(*key, "traceId");
  const std::string* turn_id = StringAt(*key, "turnId");
  if (namespace_id == nullptr || purpose == nullptr || trace_id == nullptr || turn_id == nullptr ||
      !AddressFromJson(key->value("actor", Json()), claims.context.mutable_actor()) ||
      !AddressFromJson(key->value("authority", Json()), claims.context.mutable_authority()) ||
      !AddressFromJson(key->value("owner", Json()), claims.context.mutable_owner())) {
    return capability::errors::LeaseMalformed("key");
  }
  claims.context.set_namespace_id(*namespace_id);
  claims.context.set_purpose(*purpose);
  claims.context.set_trace_id(*trace_id);
  claims.turn_id = *turn_id;

  auto admitted = payload.find("admittedAt");
  if (admitted == payload.end() || !admitted->is_array() || admitted->size() != 2 ||
      !(*admitted)[0].is_number_integer() || !(*admitted)[1].is_number_integer()) {
    return capability::errors::LeaseMalformed("admittedAt");
  }
  claims.context.mutable_now()->set_seconds((*admitted)[0].get<int64_t>());
  claims.context.mutable_now()->set_nanos((*admitted)[1].get<int32_t>());
  int64_t expires_ms = 0;
  if (!IntegerAt(payload, "expiresAtMs", &expires_ms))
    return capability::errors::LeaseMalformed("expiry");
  claims.expires_at = absl::FromUnixMillis(expires_ms);

  const std::string* status = StringAt(payload, "status");
  if (status != nullptr && *status == "resolved") {
    claims.status = LeaseClaims::Status::kResolved;
    const std::string* hash = StringAt(payload, "authorityHash");
    if (!IntegerAt(payload, "revision", &claims.revision) || hash == nullptr) {
      return capability::errors::LeaseMalformed("resolved lease");
    }
    claims.authority_hash = *hash;
  } else if (status != nullptr && *status == "unavailable") {
    claims.status = LeaseClaims::Status::kUnavailable;
    const std::string* code = StringAt(payload, "code");
    const std::string* internal = StringAt(payload, "authority");
    if (code == nullptr || internal == nullptr)
      return capability::errors::LeaseMalformed("unavailable lease");
    claims.code = *code;
    claims.internal_code = *internal;
  } else {
    return capability::errors::LeaseMalformed("status");
  }
  return claims;
}

}  // namespace sharedos::authorizer::core
