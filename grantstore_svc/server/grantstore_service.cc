#include "grantstore_svc/server/grantstore_service.h"

namespace sharedos::grantstore::server {
namespace {

using common::server::Principal;
using common::server::Role;

}  // namespace

grpc::Status GrantStoreService::ListEscalations(grpc::ServerContext* context,
                                                const v1::ListEscalationsRequest* request,
                                                v1::ListEscalationsResponse* response) {
  return rpc_.Unary(
      *context, {Role::kAdmin, Role::kReviewer, Role::kHost}, response,
      [&](const Principal& caller) -> absl::StatusOr<v1::ListEscalationsResponse> {
        const bool admin = caller.Administers(request->namespace_id());
        if (!admin &&
            !common::server::ScopeCovers(caller.scope.namespaces, request->namespace_id())) {
          return capability::errors::NamespaceNotAdministered(request->namespace_id());
        }
        absl::StatusOr<v1::ListEscalationsResponse> listed = core_.ListEscalations(*request);
        if (!listed.ok() || admin) return listed;
        // A reviewer sees only what is addressed to it, a host the status of what its scope
        // covers (a page may come back short).
        v1::ListEscalationsResponse own;
        own.set_next_page_token(listed->next_page_token());
        for (v1::EscalationRecord& record : *listed->mutable_escalations()) {
          if (HostCovers(caller, record)) {
            *own.add_escalations() = StatusOnly(record);
          } else if (MayRead(caller, record)) {
            *own.add_escalations() = std::move(record);
          }
        }
        return own;
      });
}

grpc::Status GrantStoreService::GetEscalation(grpc::ServerContext* context,
                                              const v1::GetEscalationRequest* request,
                                              v1::GetEscalationResponse* response) {
  return rpc_.Unary(*context, {Role::kAdmin, Role::kReviewer, Role::kHost}, response,
                    [&](const Principal& caller) -> absl::StatusOr<v1::GetEscalationResponse> {
                      absl::StatusOr<v1::GetEscalationResponse> got = core_.GetEscalation(*request);
                      if (got.ok() && HostCovers(caller, got->escalation())) {
                        *got->mutable_escalation() = StatusOnly(got->escalation());
                        return got;
                      }
                      // Not the caller's to read: as unknown, so nothing leaks across scopes.
                      if (got.ok() && !MayRead(caller, got->escalation())) {
                        return capability::errors::EscalationNotFound(request->escalation_id());
                      }
                      return got;
                    });
}

grpc::Status GrantStoreService::ResolveEscalation(grpc::ServerContext* context,
                                                  const v1::ResolveEscalationRequest* request,
                                                  v1::ResolveEscalationResponse* response) {
  return rpc_.Unary(
      *context, {Role::kAdmin, Role::kReviewer}, response,
      [&](const Principal& caller) { return core_.ResolveEscalation(caller, *request); });
}

}  // namespace sharedos::grantstore::server
