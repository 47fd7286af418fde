// The gRPC adapter of sharedos.authorizer.v1.Authorizer: authenticate the caller (only the
// service credential: a host or admin credential, or none, is UNAUTHENTICATED), call the
// AuthorizerCore, convert the status. Thread-safe (both dependencies are).

#ifndef SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVICE_H_
#define SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVICE_H_

#include <utility>

#include "absl/status/statusor.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "common/server/auth.h"
#include "common/server/grpc_auth.h"
#include "common/status/grpc_status.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"

namespace sharedos::authorizer::server {

class AuthorizerService final : public v1::Authorizer::Service {
 public:
  // Borrows both; each must outlive the service.
  AuthorizerService(core::AuthorizerCore& authorizer,
                    const common::server::Authenticator& authenticator)
      : authorizer_(authorizer), authenticator_(authenticator) {}

  grpc::Status OpenTurnAuthority(grpc::ServerContext* context,
                                 const v1::OpenTurnAuthorityRequest* request,
                                 v1::OpenTurnAuthorityResponse* response) override;
  grpc::Status CloseTurnAuthority(grpc::ServerContext* context,
                                  const v1::CloseTurnAuthorityRequest* request,
                                  v1::CloseTurnAuthorityResponse* response) override;
  grpc::Status Authorize(grpc::ServerContext* context, const v1::AuthorizeRequest* request,
                         v1::AuthorizeResponse* response) override;
  grpc::Status Discover(grpc::ServerContext* context, const v1::DiscoverRequest* request,
                        v1::DiscoverResponse* response) override;
  grpc::Status AdmitTurn(grpc::ServerContext* context, const v1::AdmitTurnRequest* request,
                         v1::AdmitTurnResponse* response) override;
  grpc::Status Reach(grpc::ServerContext* context, const v1::ReachRequest* request,
                     v1::ReachResponse* response) override;
  grpc::Status RecordEscalation(grpc::ServerContext* context,
                                const v1::RecordEscalationRequest* request,
                                v1::RecordEscalationResponse* response) override;

 private:
  // Authenticates a service caller, runs `call()` and moves its response out.
  template <typename Response, typename Call>
  grpc::Status Handle(const grpc::ServerContext* context, Response* response, Call call) {
    absl::StatusOr<common::server::Principal> caller =
        common::server::RequireCaller(authenticator_, *context, {common::server::Role::kService});
    if (!caller.ok()) return common::ToGrpcStatus(caller.status());
    absl::StatusOr<Response> result = call();
    if (!result.ok()) return common::ToGrpcStatus(result.status());
    *response = *std::move(result);
    return grpc::Status::OK;
  }

  core::AuthorizerCore& authorizer_;
  const common::server::Authenticator& authenticator_;
};

}  // namespace sharedos::authorizer::server

#endif  // SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVICE_H_
