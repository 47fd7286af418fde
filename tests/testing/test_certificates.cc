#include "tests/testing/test_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>

#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharedos::testing {
namespace {

EVP_PKEY* NewKey() { return EVP_EC_gen("P-256"); }

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (extension == nullptr) return false;
  const bool added = X509_add_ext(cert, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

// A certificate for `key` named `common_name`, signed by `issuer_key` (issuer null: self-signed).
X509* NewCertificate(EVP_PKEY* key, const std::string& common_name, X509* issuer,
                     EVP_PKEY* issuer_key, long serial, bool expired) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  const long day = 24 * 60 * 60;
  X509_gmtime_adj(X509_getm_notBefore(cert), expired ? -2 * day : -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), expired ? -day : day);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert, issuer == nullptr ? name : X509_get_subject_name(issuer));
  return cert;
}

bool WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  const bool written =
      cert != nullptr ? PEM_write_X509(file, cert) == 1
                      : PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  return std::fclose(file) == 0 && written;
}

// Writes to a temporary name, then renames: a watcher never sees half a file.
bool ReplacePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  const std::string temporary = path + ".tmp";
  return WritePem(temporary, cert, key) && std::rename(temporary.c_str(), path.c_str()) == 0;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TestCertificateAuthority>> TestCertificateAuthority::Create(
    const std::string& dir, const std::string& name) {
  std::unique_ptr<TestCertificateAuthority> ca(new TestCertificateAuthority());
  ca->dir_ = dir;
  ca->name_ = name;
  ca->ca_file_ = absl::StrCat(dir, "/", name, "-ca.pem");
  EVP_PKEY* key = NewKey();
  if (key == nullptr) return absl::InternalError("CA key generation failed");
  ca->key_ = key;
  X509* cert = NewCertificate(key, name + " test CA", nullptr, nullptr, 1, false);
  ca->cert_ = cert;
  if (!AddExtension(cert, cert, NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !AddExtension(cert, cert, NID_subject_key_identifier, "hash") ||
      X509_sign(cert, key, EVP_sha256()) == 0 || !ReplacePem(ca->ca_file_, cert, nullptr)) {
    return absl::InternalError("CA certificate creation failed");
  }
  return ca;
}

TestCertificateAuthority::~TestCertificateAuthority() {
  X509_free(static_cast<X509*>(cert_));
  EVP_PKEY_free(static_cast<EVP_PKEY*>(key_));
}

absl::StatusOr<TestCertificate> TestCertificateAuthority::Issue(
    const std::string& file_stem, const std::string& common_name,
    const std::vector<std::string>& sans, bool expired) {
  static long serial = 100;
  auto* ca_cert = static_cast<X509*>(cert_);
  auto* ca_key = static_cast<EVP_PKEY*>(key_);
  EVP_PKEY* key = NewKey();
  if (key == nullptr) return absl::InternalError("key generation failed");
  X509* cert = NewCertificate(key, common_name, ca_cert, ca_key, ++serial, expired);
  TestCertificate files{absl::StrCat(dir_, "/", file_stem, ".pem"),
                        absl::StrCat(dir_, "/", file_stem, ".key")};
  const bool made =
      AddExtension(cert, ca_cert, NID_basic_constraints, "critical,CA:FALSE") &&
      AddExtension(cert, ca_cert, NID_key_usage, "critical,digitalSignature,keyAgreement") &&
      AddExtension(cert, ca_cert, NID_ext_key_usage, "serverAuth,clientAuth") &&
      AddExtension(cert, ca_cert, NID_authority_key_identifier, "keyid:always") &&
      (sans.empty() ||
       AddExtension(cert, ca_cert, NID_subject_alt_name, absl::StrJoin(sans, ","))) &&
      X509_sign(cert, ca_key, EVP_sha256()) != 0 && ReplacePem(files.key_file, nullptr, key) &&
      ReplacePem(files.cert_file, cert, nullptr);
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!made) return absl::InternalError(absl::StrCat("certificate ", file_stem, ": not made"));
  return files;
}

}  // namespace sharedos::testing
