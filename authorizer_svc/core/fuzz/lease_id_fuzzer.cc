// Fuzzes lease-id decoding (lease_id.h). Input byte 0 picks the mode:
//   even: the rest is a lease id as a caller would send it;
//   odd:  the rest is a payload, sealed with a valid MAC under the fuzzer's secret — so the
//         payload's parsing, which only a MAC-holder can reach, is fuzzed too.
// Properties: nothing crashes; a refusal is INVALID_ARGUMENT "lease_id: …"; an accepted lease's
// claims, encoded again, decode to the same claims.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "authorizer_svc/core/lease_id.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"

namespace {

using ::sharedos::authorizer::core::LeaseClaims;
using ::sharedos::authorizer::core::LeaseIdCodec;

const std::string& Secret() {
  static const std::string* secret = new std::string(32, 'l');
  return *secret;
}

bool SameClaims(const LeaseClaims& a, const LeaseClaims& b) {
  return a.context.SerializeAsString() == b.context.SerializeAsString() && a.turn_id == b.turn_id &&
         a.expires_at == b.expires_at && a.status == b.status && a.revision == b.revision &&
         a.authority_hash == b.authority_hash && a.code == b.code &&
         a.internal_code == b.internal_code;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const LeaseIdCodec codec(Secret());
  absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string lease_id(rest);
  if (data[0] & 1) {
    lease_id = absl::StrCat("l1.", sharedos::common::Base64UrlEncode(rest), ".",
                            sharedos::common::Base64UrlEncode(sharedos::common::HmacSha256(
                                Secret(), absl::StrCat("sharedos.authorizer.lease.v1\n", rest))));
  }
  absl::StatusOr<LeaseClaims> claims = codec.Decode(lease_id);
  if (!claims.ok()) {
    if (claims.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    if (!absl::StartsWith(claims.status().message(), "lease_id: ")) std::abort();
    return 0;
  }
  absl::StatusOr<LeaseClaims> again = codec.Decode(codec.Encode(*claims));
  if (!again.ok() || !SameClaims(*claims, *again)) std::abort();
  return 0;
}
