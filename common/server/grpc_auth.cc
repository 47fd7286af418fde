#include "common/server/grpc_auth.h"

#include <string>

namespace sharedos::common::server {

absl::StatusOr<Principal> RequireCaller(const Authenticator& authenticator,
                                        const grpc::ServerContextBase& context,
                                        std::initializer_list<Role> roles) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  std::string header;
  if (it != metadata.end()) header.assign(it->second.data(), it->second.size());
  return authenticator.Require(header, roles);
}

}  // namespace sharedos::common::server
