#include "grantstore_svc/server/idp_flags.h"

#include "absl/flags/flag.h"
#include "common/server/oidc_flags.h"

ABSL_FLAG(bool, allow_reviewer_credentials_with_idp, false,
          "Break-glass: with --oidc_config, still issue and rotate SharedOS reviewer credentials "
          "for humans (refused otherwise: a human's reviewer identity comes from the identity "
          "provider). Decisions made with them are recorded as break-glass.");

namespace sharedos::grantstore::server {

void ApplyIdpFlags(GrantStoreServerDeps& deps) {
  deps.identity_provider_configured = !common::server::OidcConfigFlag().empty();
  deps.allow_reviewer_credentials_with_idp =
      absl::GetFlag(FLAGS_allow_reviewer_credentials_with_idp);
}

}  // namespace sharedos::grantstore::server
