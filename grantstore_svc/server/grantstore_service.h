// The gRPC adapter of sharedos.grantstore.v1.GrantStore: authenticate the caller for the
// method's role, call the core, convert the status. Control-plane methods need the admin
// credential, data-plane methods (LoadAuthority, ResolveGrant, TryConsume, GetUsage,
// CheckRevocations, RecordEscalation) the service credential; anything else is
// UNAUTHENTICATED. Thread-safe (the core and the authenticator are).

#ifndef SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
#define SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_

#include <utility>

#include "absl/status/statusor.h"
#include "common/server/auth.h"
#include "common/server/grpc_auth.h"
#include "common/status/grpc_status.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::server {

class GrantStoreService final : public v1::GrantStore::Service {
 public:
  // Borrows both; each must outlive the service.
  GrantStoreService(core::GrantStoreCore& core, const common::server::Authenticator& authenticator)
      : core_(core), authenticator_(authenticator) {}

  grpc::Status IssueGrant(grpc::ServerContext* context, const v1::IssueGrantRequest* request,
                          v1::IssueGrantResponse* response) override;
  grpc::Status DeriveGrant(grpc::ServerContext* context, const v1::DeriveGrantRequest* request,
                           v1::DeriveGrantResponse* response) override;
  grpc::Status RevokeGrant(grpc::ServerContext* context, const v1::RevokeGrantRequest* request,
                           v1::RevokeGrantResponse* response) override;
  grpc::Status GetGrant(grpc::ServerContext* context, const v1::GetGrantRequest* request,
                        v1::GetGrantResponse* response) override;
  grpc::Status ListGrants(grpc::ServerContext* context, const v1::ListGrantsRequest* request,
                          v1::ListGrantsResponse* response) override;
  grpc::Status PutHostPolicy(grpc::ServerContext* context, const v1::PutHostPolicyRequest* request,
                             v1::PutHostPolicyResponse* response) override;
  grpc::Status GetHostPolicy(grpc::ServerContext* context, const v1::GetHostPolicyRequest* request,
                             v1::GetHostPolicyResponse* response) override;
  grpc::Status ListEscalations(grpc::ServerContext* context,
                               const v1::ListEscalationsRequest* request,
                               v1::ListEscalationsResponse* response) override;
  grpc::Status GetEscalation(grpc::ServerContext* context, const v1::GetEscalationRequest* request,
                             v1::GetEscalationResponse* response) override;
  grpc::Status ResolveEscalation(grpc::ServerContext* context,
                                 const v1::ResolveEscalationRequest* request,
                                 v1::ResolveEscalationResponse* response) override;
  grpc::Status LoadAuthority(grpc::ServerContext* context, const v1::LoadAuthorityRequest* request,
                             v1::LoadAuthorityResponse* response) override;
  grpc::Status ResolveGrant(grpc::ServerContext* context, const v1::ResolveGrantRequest* request,
                            v1::ResolveGrantResponse* response) override;
  grpc::Status TryConsume(grpc::ServerContext* context, const v1::TryConsumeRequest* request,
                          v1::TryConsumeResponse* response) override;
  grpc::Status GetUsage(grpc::ServerContext* context, const v1::GetUsageRequest* request,
                        v1::GetUsageResponse* response) override;
  grpc::Status CheckRevocations(grpc::ServerContext* context,
                                const v1::CheckRevocationsRequest* request,
                                v1::CheckRevocationsResponse* response) override;
  grpc::Status RecordEscalation(grpc::ServerContext* context,
                                const v1::RecordEscalationRequest* request,
                                v1::RecordEscalationResponse* response) override;

 private:
  using Role = common::server::Role;

  // Authenticates for `role`, runs `call(caller)` and copies its response.
  template <typename Response, typename Call>
  grpc::Status Handle(const grpc::ServerContext* context, Role role, Response* response,
                      Call call) {
    absl::StatusOr<common::server::Principal> principal =
        common::server::RequireCaller(authenticator_, *context, {role});
    if (!principal.ok()) return common::ToGrpcStatus(principal.status());
    absl::StatusOr<Response> result = call(core::Caller{principal->name});
    if (!result.ok()) return common::ToGrpcStatus(result.status());
    *response = *std::move(result);
    return grpc::Status::OK;
  }

  core::GrantStoreCore& core_;
  const common::server::Authenticator& authenticator_;
};

}  // namespace sharedos::grantstore::server

#endif  // SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
