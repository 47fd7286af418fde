// --oidc_config, defined once for every service and sharedosd: the organisation's identity
// provider (ADR 0020). With it, JWT bearer tokens the provider issued authenticate on every gRPC
// service beside SharedOS's own credentials.
#ifndef SHAREDOS_COMMON_SERVER_OIDC_FLAGS_H_
#define SHAREDOS_COMMON_SERVER_OIDC_FLAGS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/oidc/bearer_verifier.h"
#include "common/server/auth.h"
#include "common/time/clock.h"

namespace sharedos::common::server {

// The --oidc_config value ("" when unset).
std::string OidcConfigFlag();

// The verifier --oidc_config describes, attached to `authenticator`; null (nothing attached)
// without the flag. The verifier must outlive the authenticator's use. Errors: INVALID_ARGUMENT
// or FAILED_PRECONDITION "--oidc_config: ..." (common/oidc/config.h).
absl::StatusOr<std::unique_ptr<oidc::OidcBearerVerifier>> AttachOidcFromFlags(
    Authenticator& authenticator, const Clock& clock);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_OIDC_FLAGS_H_
