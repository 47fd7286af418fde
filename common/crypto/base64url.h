// Unpadded base64url (RFC 4648 §5), the encoding of tokens and MACs on the
// wire. Stateless functions, safe to call from any thread.

#ifndef SHAREDOS_COMMON_CRYPTO_BASE64URL_H_
#define SHAREDOS_COMMON_CRYPTO_BASE64URL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharedos::common {

// Returns `bytes` in base64url without `=` padding.
std::string Base64UrlEncode(absl::string_view bytes);

// Decodes unpadded base64url strictly, so every byte string has exactly one
// accepted encoding (no malleable tokens). Errors: INVALID_ARGUMENT for a
// character outside [A-Za-z0-9_-] (including `=`, `+`, `/` and whitespace), a
// length of 1 modulo 4, or non-zero unused trailing bits.
absl::StatusOr<std::string> Base64UrlDecode(absl::string_view text);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_CRYPTO_BASE64URL_H_
