// SHA-256, HMAC-SHA-256 and constant-time comparison over OpenSSL. Stateless
// functions, safe to call from any thread.

#ifndef SHAREDOS_COMMON_CRYPTO_SHA256_H_
#define SHAREDOS_COMMON_CRYPTO_SHA256_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace sharedos::common {

inline constexpr size_t kSha256Size = 32;

// Returns the 32-byte SHA-256 digest of `data`.
std::string Sha256(absl::string_view data);

// Returns the SHA-256 digest of `data` as 64 lowercase hex characters (the
// semantics' `sha256Hex`).
std::string Sha256Hex(absl::string_view data);

// SHA-256 fed in pieces: Sha256HexOf the concatenation without building it. One object per
// digest, used by one thread at a time; Update after HexDigest is not allowed.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;

  void Update(absl::string_view data);
  // 64 lowercase hex characters, as Sha256Hex of everything given to Update.
  std::string HexDigest();

 private:
  void* context_;  // EVP_MD_CTX.
};

// Returns the 32-byte HMAC-SHA-256 of `data` under `key` (any key length,
// including 0).
std::string HmacSha256(absl::string_view key, absl::string_view data);

// Returns whether `a` and `b` hold the same bytes, in time independent of their
// contents (CRYPTO_memcmp). Only the lengths may leak: different lengths return
// false at once. Use for MACs, tokens and other secrets.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_CRYPTO_SHA256_H_
