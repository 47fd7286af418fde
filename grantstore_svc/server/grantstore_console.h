// grantstore_svc --console_port: the reviewer console (//console) beside the grant store in a
// deployment of separate services, as sharedosd serves it in one process. It calls this process's
// GrantStore through an in-process server of its own adapter, and audit_svc at --audit_target
// (with the channel TLS flags), always with the signed-in credential.
#ifndef SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_CONSOLE_H_
#define SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_CONSOLE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/oidc/bearer_verifier.h"
#include "common/server/auth.h"
#include "common/server/service_main.h"
#include "grantstore_svc/server/grantstore_server.h"

namespace sharedos::grantstore::server {

// `grantstore` itself without --console_port; with it, `grantstore` serving as before plus the
// console as a side listener ("grantstore_svc console listening on <url>"). Errors:
// INVALID_ARGUMENT naming the flag (--console_port without --audit_target; those of
// ConsoleServer::Start and of the audit channel; console.client_id or console.client_secret_file
// of --oidc_config). With `oidc` (--oidc_config; borrowed, may be null) people also sign in at the
// identity provider (console/oidc_provider.h).
absl::StatusOr<std::unique_ptr<common::server::Servable>> WithConsoleFromFlags(
    std::unique_ptr<GrantStoreServer> grantstore,
    const common::server::Authenticator& authenticator,
    const common::oidc::OidcBearerVerifier* oidc = nullptr);

}  // namespace sharedos::grantstore::server

#endif  // SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_CONSOLE_H_
