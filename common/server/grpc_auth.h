#ifndef SHAREDOS_COMMON_SERVER_GRPC_AUTH_H_
#define SHAREDOS_COMMON_SERVER_GRPC_AUTH_H_

#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/server/auth.h"
#include "grpcpp/server_context.h"

namespace sharedos::common::server {

// Authenticates a gRPC call from its "authorization" metadata and, under mTLS, its client
// certificate's subject alternative names, and requires one of `roles`.
// Errors: UNAUTHENTICATED, PERMISSION_DENIED, UNAVAILABLE (see Authenticator::RequireWithPeer).
absl::StatusOr<Principal> RequireCaller(const Authenticator& authenticator,
                                        const grpc::ServerContextBase& context,
                                        std::initializer_list<Role> roles);

// Authenticates a gRPC call as RequireCaller does, whatever its role (the access table admits it
// afterwards). Errors: UNAUTHENTICATED, UNAVAILABLE.
absl::StatusOr<Principal> AuthenticateCaller(const Authenticator& authenticator,
                                             const grpc::ServerContextBase& context);

// The subject alternative names of the call's client certificate as the TLS listener verified
// it (mTLS); empty without one.
std::vector<std::string> PeerSubjectAltNames(const grpc::ServerContextBase& context);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_GRPC_AUTH_H_
