#include "common/server/channel_flags.h"

#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "common/server/service_main.h"

// Defined with the listener's flags (tls_flags.cc): one interval for every watched file.
ABSL_DECLARE_FLAG(absl::Duration, tls_reload_interval);

ABSL_FLAG(std::string, tls_ca, "",
          sharedos::common::server::SharedFlagHelp(
              "tls_ca",
              "PEM CA bundle every service this one calls is verified against; set: channels use "
              "TLS (required to reach a target off loopback)."));
ABSL_FLAG(std::string, tls_client_cert, "",
          sharedos::common::server::SharedFlagHelp(
              "tls_client_cert",
              "PEM certificate this service presents to the services it calls "
              "(mTLS); with --tls_client_key."));
ABSL_FLAG(std::string, tls_client_key, "",
          sharedos::common::server::SharedFlagHelp("tls_client_key",
                                                   "PEM private key of --tls_client_cert."));
ABSL_FLAG(std::string, tls_server_name, "",
          sharedos::common::server::SharedFlagHelp(
              "tls_server_name",
              "Name the called services' certificates must carry, instead of each target's "
              "host."));
namespace sharedos::common::server {

client::ChannelTls ChannelTlsFromFlags() {
  client::ChannelTls tls;
  tls.ca_file = absl::GetFlag(FLAGS_tls_ca);
  tls.client_cert_file = absl::GetFlag(FLAGS_tls_client_cert);
  tls.client_key_file = absl::GetFlag(FLAGS_tls_client_key);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  tls.reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  return tls;
}

}  // namespace sharedos::common::server
