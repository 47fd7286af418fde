// Cryptographically secure randomness from OpenSSL's RAND_bytes. Stateless
// functions, safe to call from any thread.

#ifndef SHAREDOS_COMMON_CRYPTO_RANDOM_H_
#define SHAREDOS_COMMON_CRYPTO_RANDOM_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace sharedos::common {

// Returns `size` random bytes. Errors: UNAVAILABLE when the OpenSSL generator
// cannot produce them; INVALID_ARGUMENT when `size` exceeds INT_MAX.
absl::StatusOr<std::string> SecureRandomBytes(size_t size);

// Returns a random (version 4) UUID: lowercase, 8-4-4-4-12 hex digits, version
// nibble 4, variant bits 10. Aborts the process if the generator fails: an
// identifier that might repeat is never returned.
std::string NewUuidV4();

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_CRYPTO_RANDOM_H_
