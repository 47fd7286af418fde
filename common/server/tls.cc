#include "common/server/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/server/loopback.h"
#include "common/server/secret_file.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace sharedos::common::server {
namespace {

// A PEM file's certificates (leaf first) and, when asked, its private key.
struct Pem {
  X509* leaf = nullptr;
  STACK_OF(X509) * chain = nullptr;
  EVP_PKEY* key = nullptr;

  Pem() = default;
  Pem(const Pem&) = delete;
  Pem& operator=(const Pem&) = delete;
  ~Pem() {
    X509_free(leaf);
    if (chain != nullptr) sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

// Certificates of `contents` into `pem`; false when there is none.
bool ParseCertificates(const std::string& contents, Pem& pem) {
  BIO* bio = BIO_new_mem_buf(contents.data(), static_cast<int>(contents.size()));
  if (bio == nullptr) return false;
  pem.leaf = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  pem.chain = sk_X509_new_null();
  while (pem.leaf != nullptr && pem.chain != nullptr) {
    X509* next = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (next == nullptr) break;
    sk_X509_push(pem.chain, next);
  }
  BIO_free(bio);
  ERR_clear_error();
  return pem.leaf != nullptr;
}

bool ParseKey(const std::string& contents, Pem& pem) {
  BIO* bio = BIO_new_mem_buf(contents.data(), static_cast<int>(contents.size()));
  if (bio == nullptr) return false;
  pem.key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ERR_clear_error();
  return pem.key != nullptr;
}

absl::Status LoadCertificates(const std::string& path, absl::string_view flag, Pem& pem) {
  absl::StatusOr<std::string> contents = ReadSecretFile(path, SecretPart::kWholeFile, flag);
  if (!contents.ok()) return contents.status();
  if (!ParseCertificates(*contents, pem)) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": no PEM certificate in ", path));
  }
  return absl::OkStatus();
}

// The pair of `tls` into `pem`, checked to match.
absl::Status LoadKeyPair(const ServerTls& tls, Pem& pem) {
  if (absl::Status certs = LoadCertificates(tls.cert_file, "--tls_cert", pem); !certs.ok()) {
    return certs;
  }
  absl::StatusOr<std::string> key =
      ReadSecretFile(tls.key_file, SecretPart::kWholeFile, "--tls_key");
  if (!key.ok()) return key.status();
  if (!ParseKey(*key, pem)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_key: no PEM private key in ", tls.key_file));
  }
  if (X509_check_private_key(pem.leaf, pem.key) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        "--tls_key: the key does not match the certificate of --tls_cert");
  }
  return absl::OkStatus();
}

// What identifies a file's version: its size and modification time ("" when it cannot be read).
std::string FileStamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "";
  return absl::StrCat(st.st_size, ":", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ":", st.st_ino);
}

unsigned int RefreshSeconds(absl::Duration interval) {
  const int64_t seconds = absl::ToInt64Seconds(interval);
  return seconds < 1 ? 1 : static_cast<unsigned int>(seconds);
}

}  // namespace

absl::Status CheckServerTls(const ServerTls& tls, const std::string& host) {
  if (tls.enabled() && (tls.cert_file.empty() || tls.key_file.empty())) {
    return absl::InvalidArgumentError(tls.cert_file.empty()
                                          ? "--tls_cert: required with --tls_key"
                                          : "--tls_key: required with --tls_cert");
  }
  if (!tls.enabled()) {
    if (!tls.client_ca_file.empty()) {
      return absl::InvalidArgumentError("--tls_client_ca: requires --tls_cert and --tls_key");
    }
    if (!IsLoopbackHost(host)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--host: plaintext is allowed only on loopback; give --tls_cert and "
                       "--tls_key to listen on ",
                       host));
    }
    return absl::OkStatus();
  }
  Pem pair;
  if (absl::Status loaded = LoadKeyPair(tls, pair); !loaded.ok()) return loaded;
  if (!tls.client_ca_file.empty()) {
    Pem ca;
    if (absl::Status loaded = LoadCertificates(tls.client_ca_file, "--tls_client_ca", ca);
        !loaded.ok()) {
      return loaded;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> NewServerCredentials(
    const ServerTls& tls, const std::string& host) {
  if (absl::Status checked = CheckServerTls(tls, host); !checked.ok()) return checked;
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  const unsigned int refresh = RefreshSeconds(tls.reload_interval);
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      tls.key_file, tls.cert_file, tls.client_ca_file, refresh);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (tls.client_ca_file.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

// ---------------------------------------------------------------------------------------------

absl::StatusOr<std::shared_ptr<KeyPairWatcher>> KeyPairWatcher::Load(const ServerTls& tls) {
  std::shared_ptr<KeyPairWatcher> watcher(new KeyPairWatcher(tls));
  Pem pem;
  if (absl::Status loaded = LoadKeyPair(tls, pem); !loaded.ok()) return loaded;
  absl::MutexLock lock(&watcher->mu_);
  std::swap(watcher->cert_, pem.leaf);
  std::swap(watcher->chain_, pem.chain);
  std::swap(watcher->key_, pem.key);
  watcher->stamp_ = FileStamp(tls.cert_file) + "|" + FileStamp(tls.key_file);
  watcher->checked_ = tls.clock->Now();
  return watcher;
}

KeyPairWatcher::~KeyPairWatcher() {
  absl::MutexLock lock(&mu_);
  X509_free(cert_);
  if (chain_ != nullptr) sk_X509_pop_free(chain_, X509_free);
  EVP_PKEY_free(key_);
}

bool KeyPairWatcher::MaybeReload() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = tls_.clock->Now();
  if (now - checked_ < tls_.reload_interval) return false;
  checked_ = now;
  const std::string stamp = FileStamp(tls_.cert_file) + "|" + FileStamp(tls_.key_file);
  if (stamp == stamp_) return false;
  Pem pem;
  if (!LoadKeyPair(tls_, pem).ok()) return false;  // keep the last good pair
  stamp_ = stamp;
  std::swap(cert_, pem.leaf);
  std::swap(chain_, pem.chain);
  std::swap(key_, pem.key);
  return true;
}

int KeyPairWatcher::OnCertificate(SSL* ssl, void* arg) {
  auto* watcher = static_cast<KeyPairWatcher*>(arg);
  watcher->MaybeReload();
  absl::MutexLock lock(&watcher->mu_);
  if (SSL_use_certificate(ssl, watcher->cert_) != 1 ||
      SSL_use_PrivateKey(ssl, watcher->key_) != 1 || SSL_set1_chain(ssl, watcher->chain_) != 1) {
    ERR_clear_error();
    return 0;
  }
  return 1;
}

bool KeyPairWatcher::Install(SSL_CTX& ctx) {
  {
    absl::MutexLock lock(&mu_);
    if (SSL_CTX_use_certificate(&ctx, cert_) != 1 || SSL_CTX_use_PrivateKey(&ctx, key_) != 1) {
      ERR_clear_error();
      return false;
    }
  }
  SSL_CTX_set_cert_cb(&ctx, &KeyPairWatcher::OnCertificate, this);
  return true;
}

absl::StatusOr<std::shared_ptr<KeyPairWatcher>> HttpListenerKeyPair(const ServerTls& tls,
                                                                    const std::string& host,
                                                                    absl::string_view host_flag,
                                                                    absl::string_view listener) {
  if (!tls.enabled()) {
    if (IsLoopbackHost(host)) return nullptr;
    return absl::InvalidArgumentError(
        absl::StrCat(host_flag, ": ", listener, " serves plaintext HTTP only on loopback (got ",
                     host, "); give --tls_cert and --tls_key to serve HTTPS"));
  }
  ServerTls pair = tls;
  pair.client_ca_file.clear();
  return KeyPairWatcher::Load(pair);
}

}  // namespace sharedos::common::server
