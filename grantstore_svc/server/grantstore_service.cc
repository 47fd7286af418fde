#include "grantstore_svc/server/grantstore_service.h"

#include <optional>
#include <string>

#include "common/status/status_macros.h"

namespace sharedos::grantstore::server {
namespace {

using common::server::Principal;
using common::server::Role;

// What `caller` reads of `record` through `method`: nullopt when it may not reach it at all; a
// host reads its status only.
std::optional<v1::EscalationRecord> Readable(const std::string& method, const Principal& caller,
                                             v1::EscalationRecord record) {
  if (!common::server::MayReach(method, caller, TargetOf(record))) return std::nullopt;
  if (caller.role == Role::kHost) return StatusOnly(record);
  return record;
}

v1::GetEscalationRequest ToGet(const v1::ResolveEscalationRequest& request) {
  v1::GetEscalationRequest get;
  get.set_escalation_id(request.escalation_id());
  return get;
}

}  // namespace

grpc::Status GrantStoreService::ListEscalations(grpc::ServerContext* context,
                                                const v1::ListEscalationsRequest* request,
                                                v1::ListEscalationsResponse* response) {
  static const std::string kMethod = MethodName("ListEscalations");
  return rpc_.Unary(*context, kMethod, response,
                    [&](const Principal& caller) -> absl::StatusOr<v1::ListEscalationsResponse> {
                      // The namespace asked for must be the caller's (a reviewer: its own queue in
                      // it).
                      const std::string own = caller.role == Role::kReviewer ? caller.address : "";
                      RETURN_IF_ERROR(common::server::CheckTarget(
                          kMethod, caller, {request->namespace_id(), own, ""}));
                      absl::StatusOr<v1::ListEscalationsResponse> listed =
                          core_.ListEscalations(*request);
                      if (!listed.ok()) return listed;
                      // Each record as the table judges it (a page may come back short).
                      v1::ListEscalationsResponse own_page;
                      own_page.set_next_page_token(listed->next_page_token());
                      for (v1::EscalationRecord& record : *listed->mutable_escalations()) {
                        if (auto readable = Readable(kMethod, caller, std::move(record))) {
                          *own_page.add_escalations() = *std::move(readable);
                        }
                      }
                      return own_page;
                    });
}

grpc::Status GrantStoreService::GetEscalation(grpc::ServerContext* context,
                                              const v1::GetEscalationRequest* request,
                                              v1::GetEscalationResponse* response) {
  static const std::string kMethod = MethodName("GetEscalation");
  return rpc_.Unary(*context, kMethod, response,
                    [&](const Principal& caller) -> absl::StatusOr<v1::GetEscalationResponse> {
                      ASSIGN_OR_RETURN(v1::GetEscalationResponse got,
                                       core_.GetEscalation(*request));
                      auto readable = Readable(kMethod, caller, got.escalation());
                      // Out of reach: as unknown, so nothing leaks across scopes.
                      if (!readable.has_value()) {
                        return capability::errors::EscalationNotFound(request->escalation_id());
                      }
                      *got.mutable_escalation() = *std::move(readable);
                      return got;
                    });
}

grpc::Status GrantStoreService::ResolveEscalation(grpc::ServerContext* context,
                                                  const v1::ResolveEscalationRequest* request,
                                                  v1::ResolveEscalationResponse* response) {
  static const std::string kMethod = MethodName("ResolveEscalation");
  return rpc_.Unary(*context, kMethod, response,
                    [&](const Principal& caller) -> absl::StatusOr<v1::ResolveEscalationResponse> {
                      // Out of the caller's reach: as unknown, as GetEscalation answers (T2). An
                      // escalation's namespace and reviewer never change, so this read decides.
                      ASSIGN_OR_RETURN(v1::GetEscalationResponse got,
                                       core_.GetEscalation(ToGet(*request)));
                      if (!common::server::MayReach(kMethod, caller, TargetOf(got.escalation()))) {
                        return capability::errors::EscalationNotFound(request->escalation_id());
                      }
                      return core_.ResolveEscalation(caller, *request);
                    });
}

}  // namespace sharedos::grantstore::server
