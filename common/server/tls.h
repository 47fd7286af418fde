// TLS for every SharedOS listener, in one place: the gRPC server credentials of ServerRunner and
// the certificate the MCP front door and the console (common/http, on Boost.Beast) present.
// Certificates and keys are re-read when they change on disk (rotation without restart): gRPC
// watches them itself (FileWatcherCertificateProvider); KeyPairWatcher does the same for OpenSSL
// contexts.
// The flags that fill ServerTls are in tls_flags.h; channels (the client side) in
// common/client/channel.h.

#ifndef SHAREDOS_COMMON_SERVER_TLS_H_
#define SHAREDOS_COMMON_SERVER_TLS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"
#include "grpcpp/security/server_credentials.h"

// OpenSSL's types, as its headers declare them (a user of Install includes <openssl/ssl.h>).
typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct x509_st X509;
typedef struct evp_pkey_st EVP_PKEY;
struct stack_st_X509;

namespace sharedos::common::server {

// How a listener serves TLS. No certificate and no key: plaintext (loopback only).
struct ServerTls {
  // PEM certificate chain (--tls_cert) and its private key (--tls_key): both or neither.
  std::string cert_file;
  std::string key_file;
  // PEM CA bundle (--tls_client_ca): set, clients must present a certificate it signed (mTLS).
  std::string client_ca_file;
  // How often the files are checked for a change.
  absl::Duration reload_interval = absl::Seconds(10);
  // The clock that interval runs on for an OpenSSL listener's KeyPairWatcher (gRPC's own file
  // watcher runs on real time). Borrowed; must outlive the listener.
  const Clock* clock = &RealClock();

  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

// Whether `tls` may serve on `host`, and its files are usable: both or neither of --tls_cert and
// --tls_key; --tls_client_ca only with them; plaintext only on loopback; the certificate, the key
// (matching it) and the client CA each readable PEM. Errors: INVALID_ARGUMENT naming the flag
// ("--host: plaintext is allowed only on loopback; ..."); FAILED_PRECONDITION "--tls_cert: cannot
// read <path>" (a message names the path, never the content).
absl::Status CheckServerTls(const ServerTls& tls, const std::string& host);

// The credentials of a gRPC listener on `host`: CheckServerTls, then TLS with the files watched
// (every reload_interval), requiring and verifying a client certificate when client_ca_file is
// set; plaintext when TLS is not configured (loopback only). Errors: those of CheckServerTls.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> NewServerCredentials(
    const ServerTls& tls, const std::string& host);

// A certificate and key for OpenSSL listeners (the MCP front door), re-read when either file
// changes on disk: Install() makes every new handshake of a context present the current pair.
// A pair that fails to load (half written, key not matching) is ignored and the last good one
// kept. Thread-safe.
class KeyPairWatcher {
 public:
  // Errors: those of CheckServerTls for the two files.
  static absl::StatusOr<std::shared_ptr<KeyPairWatcher>> Load(const ServerTls& tls);
  ~KeyPairWatcher();
  KeyPairWatcher(const KeyPairWatcher&) = delete;
  KeyPairWatcher& operator=(const KeyPairWatcher&) = delete;

  // Sets `ctx`'s certificate callback to this watcher; it must outlive every handshake on it.
  // False when the context refuses the current pair.
  bool Install(SSL_CTX& ctx);

  // Re-reads the files when the interval has passed and either changed (size or mtime);
  // returns whether the pair in use changed. Called on every handshake.
  bool MaybeReload();

 private:
  explicit KeyPairWatcher(ServerTls tls) : tls_(std::move(tls)) {}
  static int OnCertificate(SSL* ssl, void* arg);

  const ServerTls tls_;
  absl::Mutex mu_;
  X509* cert_ ABSL_GUARDED_BY(mu_) = nullptr;
  ::stack_st_X509* chain_ ABSL_GUARDED_BY(mu_) = nullptr;
  EVP_PKEY* key_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::string stamp_ ABSL_GUARDED_BY(mu_);
  absl::Time checked_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// The key pair of an HTTP listener on `host` (the MCP front door, the console, the audit
// witness's endpoint): loaded and watched when `tls` is enabled (these listeners ask for no client
// certificate, so client_ca_file is ignored); null for plaintext, which only a loopback host may
// serve. Errors: INVALID_ARGUMENT "<host_flag>: <listener> serves plaintext HTTP only on loopback
// (got <host>); give --tls_cert and --tls_key to serve HTTPS", and those of Load.
absl::StatusOr<std::shared_ptr<KeyPairWatcher>> HttpListenerKeyPair(const ServerTls& tls,
                                                                    const std::string& host,
                                                                    absl::string_view host_flag,
                                                                    absl::string_view listener);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_TLS_H_
