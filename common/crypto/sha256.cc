#include "common/crypto/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace sharedos::common {
namespace {

// OpenSSL only fails these one-shot calls on allocation failure or a broken
// provider configuration; continuing without a digest is never safe, so fail
// loudly.
[[noreturn]] void DieOnOpenSslFailure(const char* what) {
  std::fprintf(stderr, "FATAL: OpenSSL %s failed\n", what);
  std::abort();
}

}  // namespace

std::string Sha256(absl::string_view data) {
  std::string digest(kSha256Size, '\0');
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), reinterpret_cast<unsigned char*>(digest.data()), &size,
                 EVP_sha256(), nullptr) != 1 ||
      size != kSha256Size) {
    DieOnOpenSslFailure("EVP_Digest(SHA-256)");
  }
  return digest;
}

std::string Sha256Hex(absl::string_view data) {
  return absl::BytesToHexString(Sha256(data));  // Lowercase.
}

Sha256Hasher::Sha256Hasher() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_), EVP_sha256(), nullptr) != 1) {
    DieOnOpenSslFailure("EVP_DigestInit_ex(SHA-256)");
  }
}

Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context_)); }

void Sha256Hasher::Update(absl::string_view data) {
  if (data.empty()) return;
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_), data.data(), data.size()) != 1) {
    DieOnOpenSslFailure("EVP_DigestUpdate(SHA-256)");
  }
}

std::string Sha256Hasher::HexDigest() {
  std::string digest(kSha256Size, '\0');
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_),
                         reinterpret_cast<unsigned char*>(digest.data()), &size) != 1 ||
      size != kSha256Size) {
    DieOnOpenSslFailure("EVP_DigestFinal_ex(SHA-256)");
  }
  return absl::BytesToHexString(digest);
}

std::string HmacSha256(absl::string_view key, absl::string_view data) {
  // A null key pointer means "reuse the previous key" to some OpenSSL HMAC
  // entry points; always pass a real pointer, even for an empty key.
  static const unsigned char kEmpty[1] = {0};
  const void* key_bytes = key.empty() ? static_cast<const void*>(kEmpty) : key.data();
  const unsigned char* data_bytes =
      data.empty() ? kEmpty : reinterpret_cast<const unsigned char*>(data.data());
  std::string mac(kSha256Size, '\0');
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key_bytes, static_cast<int>(key.size()), data_bytes, data.size(),
           reinterpret_cast<unsigned char*>(mac.data()), &size) == nullptr ||
      size != kSha256Size) {
    DieOnOpenSslFailure("HMAC(SHA-256)");
  }
  return mac;
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace sharedos::common
