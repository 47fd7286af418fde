// The flags of every process that reaches grantstore_svc (audit_svc, authorizer_svc,
// envelope_svc, the console), defined once: --grantstore_target and --grantstore_token_file. Only
// a main links this library; a binary words the flags' help for what it reaches the grant store
// for (common/server/service_main.h, ServiceBinary::flag_help). Linking it also provides
// common/server's control-plane credentials (control_plane_credentials.h) from these flags, so
// that audit_svc's main, below this plane, authenticates them without including this package.
// The channel is verified with the process's channel TLS flags (common/server/channel_flags.h).

#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_GRANTSTORE_FLAGS_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_GRANTSTORE_FLAGS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/client/channel.h"
#include "common/server/auth.h"
#include "common/server/service_main.h"

namespace sharedos::grantstore::client {

// The values of --grantstore_target and --grantstore_token_file.
std::string GrantStoreTargetFromFlags();
std::string GrantStoreTokenFileFromFlags();

// grantstore_svc as the flags name it, both required (common::server::ReadUpstream).
absl::StatusOr<common::server::Upstream> GrantStoreUpstreamFromFlags(
    const common::client::ChannelTls& tls);

// AttachGrantStoreCredentials (grpc_credential_source.h) with the flags' values: null when both
// are empty.
absl::StatusOr<std::unique_ptr<common::server::CredentialSource>>
AttachGrantStoreCredentialsFromFlags(common::server::Authenticator& authenticator,
                                     const common::client::ChannelTls& tls);

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_GRANTSTORE_FLAGS_H_
