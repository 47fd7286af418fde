// A verified token → the SharedOS principal it stands for, by the config's claim mapping:
// the principal claim ("sub" or "email") gives `human:<value>`; the groups claim, matched against
// the rules in order, gives the role (the first matching rule's) and the scope (the namespaces of
// every matching rule of that role). The principal carries the token's iss and sub.
#ifndef SHAREDOS_COMMON_OIDC_CLAIMS_MAPPING_H_
#define SHAREDOS_COMMON_OIDC_CLAIMS_MAPPING_H_

#include "absl/status/statusor.h"
#include "common/oidc/config.h"
#include "common/oidc/token_verifier.h"
#include "common/server/auth.h"

namespace sharedos::common::oidc {

// Errors: UNAUTHENTICATED kInvalidTokenMessage when the principal claim is missing or not a valid
// address id (the token names nobody SharedOS can address); PERMISSION_DENIED "no SharedOS role
// for this identity" when no rule matches the token's groups (the person is known to the
// provider but was given no role in SharedOS).
absl::StatusOr<server::Principal> MapToPrincipal(const ClaimMapping& mapping,
                                                 const VerifiedToken& token);

}  // namespace sharedos::common::oidc

#endif  // SHAREDOS_COMMON_OIDC_CLAIMS_MAPPING_H_
