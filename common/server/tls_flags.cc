#include "common/server/tls_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "common/server/service_main.h"

// Help texts go through SharedFlagHelp so that a binary can say more.
ABSL_FLAG(std::string, tls_cert, "",
          sharedos::common::server::SharedFlagHelp(
              "tls_cert",
              "PEM certificate chain; with --tls_key the listener serves TLS "
              "(required off loopback). Re-read when it changes."));
ABSL_FLAG(std::string, tls_key, "",
          sharedos::common::server::SharedFlagHelp("tls_key", "PEM private key of --tls_cert."));
ABSL_FLAG(std::string, tls_client_ca, "",
          sharedos::common::server::SharedFlagHelp(
              "tls_client_ca",
              "PEM CA bundle: set, every caller must present a certificate it signed (mTLS)."));
ABSL_FLAG(absl::Duration, tls_reload_interval, absl::Seconds(10),
          sharedos::common::server::SharedFlagHelp(
              "tls_reload_interval",
              "How often certificate and key files are checked for a change (at least 1s)."));

namespace sharedos::common::server {

ServerTls ServerTlsFromFlags() {
  ServerTls tls;
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  tls.key_file = absl::GetFlag(FLAGS_tls_key);
  tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  tls.reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  return tls;
}

}  // namespace sharedos::common::server
