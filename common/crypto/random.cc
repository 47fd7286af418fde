#include "common/crypto/random.h"

#include <openssl/rand.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sharedos::common {

absl::StatusOr<std::string> SecureRandomBytes(size_t size) {
  if (size > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot generate ", size, " random bytes at once"));
  }
  std::string bytes(size, '\0');
  if (size > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()),
                             static_cast<int>(size)) != 1) {
    return absl::UnavailableError("OpenSSL RAND_bytes failed");
  }
  return bytes;
}

std::string NewUuidV4() {
  absl::StatusOr<std::string> bytes = SecureRandomBytes(16);
  if (!bytes.ok()) {
    std::fprintf(stderr, "FATAL: NewUuidV4: %s\n",
                 bytes.status().ToString().c_str());
    std::abort();
  }
  (*bytes)[6] = static_cast<char>(
      (static_cast<unsigned char>((*bytes)[6]) & 0x0F) | 0x40);
  (*bytes)[8] = static_cast<char>(
      (static_cast<unsigned char>((*bytes)[8]) & 0x3F) | 0x80);
  const std::string hex = absl::BytesToHexString(*bytes);
  const absl::string_view h(hex);
  return absl::StrCat(h.substr(0, 8), "-", h.substr(8, 4), "-", h.substr(12, 4),
                      "-", h.substr(16, 4), "-", h.substr(20, 12));
}

}  // namespace sharedos::common
