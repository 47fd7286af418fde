#include "grantstore_svc/server/grantstore_service.h"

namespace sharedos::grantstore::server {

grpc::Status GrantStoreService::IssueGrant(grpc::ServerContext* context,
                                           const v1::IssueGrantRequest* request,
                                           v1::IssueGrantResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller& caller) { return core_.IssueGrant(caller, *request); });
}

grpc::Status GrantStoreService::DeriveGrant(grpc::ServerContext* context,
                                            const v1::DeriveGrantRequest* request,
                                            v1::DeriveGrantResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller& caller) { return core_.DeriveGrant(caller, *request); });
}

grpc::Status GrantStoreService::RevokeGrant(grpc::ServerContext* context,
                                            const v1::RevokeGrantRequest* request,
                                            v1::RevokeGrantResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller& caller) { return core_.RevokeGrant(caller, *request); });
}

grpc::Status GrantStoreService::GetGrant(grpc::ServerContext* context,
                                         const v1::GetGrantRequest* request,
                                         v1::GetGrantResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller&) { return core_.GetGrant(*request); });
}

grpc::Status GrantStoreService::ListGrants(grpc::ServerContext* context,
                                           const v1::ListGrantsRequest* request,
                                           v1::ListGrantsResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller&) { return core_.ListGrants(*request); });
}

grpc::Status GrantStoreService::PutHostPolicy(grpc::ServerContext* context,
                                              const v1::PutHostPolicyRequest* request,
                                              v1::PutHostPolicyResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller& caller) { return core_.PutHostPolicy(caller, *request); });
}

grpc::Status GrantStoreService::GetHostPolicy(grpc::ServerContext* context,
                                              const v1::GetHostPolicyRequest* request,
                                              v1::GetHostPolicyResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller&) { return core_.GetHostPolicy(*request); });
}

grpc::Status GrantStoreService::ListEscalations(grpc::ServerContext* context,
                                                const v1::ListEscalationsRequest* request,
                                                v1::ListEscalationsResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller&) { return core_.ListEscalations(*request); });
}

grpc::Status GrantStoreService::GetEscalation(grpc::ServerContext* context,
                                              const v1::GetEscalationRequest* request,
                                              v1::GetEscalationResponse* response) {
  return Handle(context, Role::kAdmin, response,
                [&](const core::Caller&) { return core_.GetEscalation(*request); });
}

grpc::Status GrantStoreService::ResolveEscalation(grpc::ServerContext* context,
                                                  const v1::ResolveEscalationRequest* request,
                                                  v1::ResolveEscalationResponse* response) {
  return Handle(context, Role::kAdmin, response, [&](const core::Caller& caller) {
    return core_.ResolveEscalation(caller, *request);
  });
}

grpc::Status GrantStoreService::LoadAuthority(grpc::ServerContext* context,
                                              const v1::LoadAuthorityRequest* request,
                                              v1::LoadAuthorityResponse* response) {
  return Handle(context, Role::kService, response,
                [&](const core::Caller&) { return core_.LoadAuthority(*request); });
}

grpc::Status GrantStoreService::ResolveGrant(grpc::ServerContext* context,
                                             const v1::ResolveGrantRequest* request,
                                             v1::ResolveGrantResponse* response) {
  return Handle(context, Role::kService, response,
                [&](const core::Caller&) { return core_.ResolveGrant(*request); });
}

grpc::Status GrantStoreService::TryConsume(grpc::ServerContext* context,
                                           const v1::TryConsumeRequest* request,
                                           v1::TryConsumeResponse* response) {
  return Handle(context, Role::kService, response,
                [&](const core::Caller&) { return core_.TryConsume(*request); });
}

grpc::Status GrantStoreService::GetUsage(grpc::ServerContext* context,
                                         const v1::GetUsageRequest* request,
                                         v1::GetUsageResponse* response) {
  return Handle(context, Role::kService, response,
                [&](const core::Caller&) { return core_.GetUsage(*request); });
}

grpc::Status GrantStoreService::CheckRevocations(grpc::ServerContext* context,
                                                 const v1::CheckRevocationsRequest* request,
                                                 v1::CheckRevocationsResponse* response) {
  return Handle(context, Role::kService, response,
                [&](const core::Caller&) { return core_.CheckRevocations(*request); });
}

grpc::Status GrantStoreService::RecordEscalation(grpc::ServerContext* context,
                                                 const v1::RecordEscalationRequest* request,
                                                 v1::RecordEscalationResponse* response) {
  return Handle(context, Role::kService, response, [&](const core::Caller& caller) {
    return core_.RecordEscalation(caller, *request);
  });
}

}  // namespace sharedos::grantstore::server
