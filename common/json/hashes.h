// Deterministic hashes and ids over the reference's JSON shapes (semantics §10.2–§10.4), all
// SHA-256 of canonical JSON with object keys in UTF-16 code-unit order (docs/adr/0002).
// Stateless; thread-safe.

#ifndef SHAREDOS_COMMON_JSON_HASHES_H_
#define SHAREDOS_COMMON_JSON_HASHES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::common {

inline constexpr absl::string_view kCapabilityRequestIdPrefix = "capreq-";

// authorityHash (§10.3): sha256Hex(canonicalJson(sort(grants.map(canonicalJson)))), the sort
// by code unit over each grant's canonical text, so the hash does not depend on grant order.
// Errors: INVALID_ARGUMENT when a grant cannot be rendered (CapabilityGrantToJson).
absl::StatusOr<std::string> AuthorityHash(absl::Span<const protocol::v1::CapabilityGrant> grants);

// One grant's part of authorityHash: its canonical text (what the grants are sorted by) and
// that text written as a JSON string (what the hashed array holds). A grant's part depends on
// the grant alone, so a caller may compute it once and keep it with an unchanged grant.
struct GrantHashText {
  std::string canonical;
  std::string quoted;
  bool ascii = true;  // `canonical` is ASCII: byte order is code-unit order.
};

// Errors: INVALID_ARGUMENT as AuthorityHash's for this grant.
absl::StatusOr<GrantHashText> GrantHashTextOf(const protocol::v1::CapabilityGrant& grant);

// authorityHash from each grant's GrantHashTextOf, given in any order: AuthorityHash's value.
// The array is streamed into SHA-256, never built.
std::string AuthorityHashOfTexts(std::vector<const GrantHashText*> texts);

// catalogHash (§10.4): sha256Hex(canonicalJson(tools sorted by name, code-unit order)); the
// empty catalogue hashes "[]".
// Errors: INVALID_ARGUMENT for duplicate names or a tool that cannot be rendered.
absl::StatusOr<std::string> CatalogHash(
    absl::Span<const protocol::v1::PublishedToolDefinition> tools);

// "capreq-" + sha256Hex(canonicalJson(identity)) (§10.2 step 4), the identity being
// CapabilityRequestIdentityToJson(request): the request's own id, requestedAt and metadata do
// not enter it, so one ask keeps one id across turns.
// Errors: INVALID_ARGUMENT when the identity cannot be rendered.
absl::StatusOr<std::string> CapabilityRequestId(const protocol::v1::CapabilityRequest& request);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_JSON_HASHES_H_
