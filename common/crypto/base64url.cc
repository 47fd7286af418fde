#include "common/crypto/base64url.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sharedos::common {
namespace {

// Returns the 6-bit value of a base64url character, or -1.
int DecodeChar(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

std::string Base64UrlEncode(absl::string_view bytes) {
  return absl::WebSafeBase64Escape(bytes);  // Unpadded.
}

absl::StatusOr<std::string> Base64UrlDecode(absl::string_view text) {
  if (text.size() % 4 == 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid base64url: length ", text.size(), " is 1 modulo 4"));
  }
  std::string result;
  result.reserve(text.size() / 4 * 3 + 2);
  uint32_t buffer = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const int value = DecodeChar(text[i]);
    if (value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid base64url: unexpected character at offset ", i));
    }
    buffer = (buffer << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      result.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  if ((buffer & ((1u << bits) - 1)) != 0) {
    return absl::InvalidArgumentError("invalid base64url: non-zero trailing bits");
  }
  return result;
}

}  // namespace sharedos::common
