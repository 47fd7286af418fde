#ifndef SHAREDOS_COMMON_SERVER_GRPC_AUTH_H_
#define SHAREDOS_COMMON_SERVER_GRPC_AUTH_H_

#include <initializer_list>

#include "absl/status/statusor.h"
#include "common/server/auth.h"
#include "grpcpp/server_context.h"

namespace sharedos::common::server {

// Authenticates a gRPC call from its "authorization" metadata and requires one of `roles`.
// Errors: UNAUTHENTICATED, PERMISSION_DENIED, UNAVAILABLE (see Authenticator::Require).
absl::StatusOr<Principal> RequireCaller(const Authenticator& authenticator,
                                        const grpc::ServerContextBase& context,
                                        std::initializer_list<Role> roles);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_GRPC_AUTH_H_
