// The TLS flags of the channels a SharedOS service opens to others (its upstream, its audit
// writer, host providers), defined once: --tls_ca (every called service is verified against it),
// --tls_client_cert and --tls_client_key (presented under mTLS), --tls_server_name (the name
// expected in the called services' certificates instead of each target's host). One CA and one
// identity per process. Links tls_flags (--tls_reload_interval).

#ifndef SHAREDOS_COMMON_SERVER_CHANNEL_FLAGS_H_
#define SHAREDOS_COMMON_SERVER_CHANNEL_FLAGS_H_

#include "common/client/channel.h"

namespace sharedos::common::server {

// --tls_ca, --tls_client_cert, --tls_client_key, --tls_server_name, --tls_reload_interval.
client::ChannelTls ChannelTlsFromFlags();

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_CHANNEL_FLAGS_H_
