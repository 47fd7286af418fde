// --allow_reviewer_credentials_with_idp (grantstore_svc and sharedosd): break-glass for SharedOS
// reviewer credentials of humans while the identity provider is configured (ADR 0020).
#ifndef SHAREDOS_GRANTSTORE_SVC_SERVER_IDP_FLAGS_H_
#define SHAREDOS_GRANTSTORE_SVC_SERVER_IDP_FLAGS_H_

#include "grantstore_svc/server/grantstore_server.h"

namespace sharedos::grantstore::server {

// Sets deps.identity_provider_configured (whether --oidc_config is set) and
// deps.allow_reviewer_credentials_with_idp (the flag).
void ApplyIdpFlags(GrantStoreServerDeps& deps);

}  // namespace sharedos::grantstore::server

#endif  // SHAREDOS_GRANTSTORE_SVC_SERVER_IDP_FLAGS_H_
