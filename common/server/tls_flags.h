// The TLS flags of every SharedOS listener (the four services, sharedosd), defined once:
// --tls_cert and --tls_key (TLS), --tls_client_ca (mTLS: client certificates required), and
// --tls_reload_interval (how often certificate files are checked for a change; channels use it
// too). The flags of the channels a service opens are in channel_flags.h.

#ifndef SHAREDOS_COMMON_SERVER_TLS_FLAGS_H_
#define SHAREDOS_COMMON_SERVER_TLS_FLAGS_H_

#include "common/server/tls.h"

namespace sharedos::common::server {

// --tls_cert, --tls_key, --tls_client_ca, --tls_reload_interval.
ServerTls ServerTlsFromFlags();

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_TLS_FLAGS_H_
