#include "authorizer_svc/server/authorizer_service.h"

namespace sharedos::authorizer::server {

grpc::Status AuthorizerService::OpenTurnAuthority(grpc::ServerContext* context,
                                                  const v1::OpenTurnAuthorityRequest* request,
                                                  v1::OpenTurnAuthorityResponse* response) {
  return Handle(context, response, [&] { return authorizer_.OpenTurnAuthority(*request); });
}

grpc::Status AuthorizerService::CloseTurnAuthority(grpc::ServerContext* context,
                                                   const v1::CloseTurnAuthorityRequest* request,
                                                   v1::CloseTurnAuthorityResponse* response) {
  return Handle(context, response, [&] { return authorizer_.CloseTurnAuthority(*request); });
}

grpc::Status AuthorizerService::Authorize(grpc::ServerContext* context,
                                          const v1::AuthorizeRequest* request,
                                          v1::AuthorizeResponse* response) {
  return Handle(context, response, [&] { return authorizer_.Authorize(*request); });
}

grpc::Status AuthorizerService::Discover(grpc::ServerContext* context,
                                         const v1::DiscoverRequest* request,
                                         v1::DiscoverResponse* response) {
  return Handle(context, response, [&] { return authorizer_.Discover(*request); });
}

grpc::Status AuthorizerService::AdmitTurn(grpc::ServerContext* context,
                                          const v1::AdmitTurnRequest* request,
                                          v1::AdmitTurnResponse* response) {
  return Handle(context, response, [&] { return authorizer_.AdmitTurn(*request); });
}

grpc::Status AuthorizerService::Reach(grpc::ServerContext* context, const v1::ReachRequest* request,
                                      v1::ReachResponse* response) {
  return Handle(context, response, [&] { return authorizer_.Reach(*request); });
}

grpc::Status AuthorizerService::RecordEscalation(grpc::ServerContext* context,
                                                 const v1::RecordEscalationRequest* request,
                                                 v1::RecordEscalationResponse* response) {
  return Handle(context, response, [&] { return authorizer_.RecordEscalation(*request); });
}

}  // namespace sharedos::authorizer::server
