// Fuzzes MCP execution-token verification (execution_token.h). Input byte 0 picks the mode:
//   even: the rest is a token as a harness would present it;
//   odd:  the rest is a payload, sealed with a valid MAC under the fuzzer's secret — so the
//         payload's parsing, which only a MAC-holder can reach, is fuzzed too.
// Properties: nothing crashes; a refusal is UNAUTHENTICATED with one of the fixed messages (never
// the token); an accepted token's claims, minted again, verify to the same claims.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "envelope_svc/mcp/execution_token.h"

namespace {

using ::sharedos::envelope::mcp::ExecutionTokenClaims;
using ::sharedos::envelope::mcp::ExecutionTokenCodec;

const std::string& Secret() {
  static const std::string* secret = new std::string(32, 's');
  return *secret;
}

bool SameClaims(const ExecutionTokenClaims& a, const ExecutionTokenClaims& b) {
  return a.execution_id == b.execution_id && a.turn_id == b.turn_id &&
         a.namespace_id == b.namespace_id && a.actor == b.actor &&
         a.catalog_hash == b.catalog_hash && a.expires_at == b.expires_at;
}

bool FixedMessage(absl::string_view message) {
  return message == "execution token: malformed" ||
         message == "execution token: integrity check failed" ||
         message == "execution token: expired";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const ExecutionTokenCodec codec(Secret());
  const absl::Time now = absl::FromUnixSeconds(1786438800);
  absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string token(rest);
  if (data[0] & 1) {
    token = absl::StrCat("x1.", sharedos::common::Base64UrlEncode(rest), ".",
                         sharedos::common::Base64UrlEncode(sharedos::common::HmacSha256(
                             Secret(), absl::StrCat("sharedos.envelope.mcp.v1\n", rest))));
  }
  absl::StatusOr<ExecutionTokenClaims> claims = codec.Verify(token, now);
  if (!claims.ok()) {
    if (claims.status().code() != absl::StatusCode::kUnauthenticated) std::abort();
    if (!FixedMessage(claims.status().message())) std::abort();
    return 0;
  }
  absl::StatusOr<ExecutionTokenClaims> again = codec.Verify(codec.Mint(*claims), now);
  if (!again.ok() || !SameClaims(*claims, *again)) std::abort();
  return 0;
}
