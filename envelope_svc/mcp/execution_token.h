// MCP execution tokens (architecture §7; OpenTurnResponse.mcp.token): what binds one MCP
// connection to exactly one turn. A token is minted by the envelope when a RUNTIME_MCP turn
// opens and presented by the harness as `Authorization: Bearer <token>` on every request.
//
// Format: "x1." base64url(P) "." base64url(HMAC-SHA256(secret, "sharedos.envelope.mcp.v1\n" P))
// where P is the canonical JSON (common/json) of
//   {"executionId", "turnId", "namespaceId", "actor": "<kind>:<id>", "catalogHash",
//    "expiresAtMs": <unix ms>}.
// The payload is readable (not encrypted): it holds nothing the harness does not see anyway.
// Without the per-deployment secret nobody can mint a token for another turn, move it to another
// catalogue or extend its expiry. Verification compares the MAC in constant time and reads
// nothing of the payload before the MAC verifies. Immutable after construction; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_MCP_EXECUTION_TOKEN_H_
#define SHAREDOS_ENVELOPE_SVC_MCP_EXECUTION_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::envelope::mcp {

// Everything a token carries.
struct ExecutionTokenClaims {
  std::string execution_id;
  std::string turn_id;
  std::string namespace_id;
  // The turn's actor as capability::AddressKey writes it ("agent:agent-1").
  std::string actor;
  std::string catalog_hash;
  absl::Time expires_at = absl::InfinitePast();
};

class ExecutionTokenCodec {
 public:
  // Shortest secret main accepts.
  static constexpr size_t kMinSecretBytes = 32;

  explicit ExecutionTokenCodec(std::string secret) : secret_(std::move(secret)) {}

  std::string Mint(const ExecutionTokenClaims& claims) const;

  // The claims of a token whose MAC verifies and which has not expired at `now`.
  // Errors: UNAUTHENTICATED with one of the fixed messages "execution token: malformed",
  // "execution token: integrity check failed", "execution token: expired" (never the token).
  absl::StatusOr<ExecutionTokenClaims> Verify(absl::string_view token, absl::Time now) const;

 private:
  std::string Mac(absl::string_view payload) const;

  const std::string secret_;
};

}  // namespace sharedos::envelope::mcp

#endif  // SHAREDOS_ENVELOPE_SVC_MCP_EXECUTION_TOKEN_H_
