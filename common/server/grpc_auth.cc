#include "common/server/grpc_auth.h"

#include <memory>
#include <string>
#include <vector>

namespace sharedos::common::server {

absl::StatusOr<Principal> RequireCaller(const Authenticator& authenticator,
                                        const grpc::ServerContextBase& context,
                                        std::initializer_list<Role> roles) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  std::string header;
  if (it != metadata.end()) header.assign(it->second.data(), it->second.size());
  return authenticator.RequireWithPeer(header, PeerSubjectAltNames(context), roles);
}

absl::StatusOr<Principal> AuthenticateCaller(const Authenticator& authenticator,
                                             const grpc::ServerContextBase& context) {
  return RequireCaller(authenticator, context,
                       {Role::kAdmin, Role::kService, Role::kHost, Role::kReviewer});
}

std::vector<std::string> PeerSubjectAltNames(const grpc::ServerContextBase& context) {
  std::vector<std::string> names;
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return names;
  for (const grpc::string_ref& name : auth->FindPropertyValues("x509_subject_alternative_name")) {
    names.emplace_back(name.data(), name.size());
  }
  return names;
}

}  // namespace sharedos::common::server
