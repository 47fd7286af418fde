#include "envelope_svc/server/envelope_service.h"

namespace sharedos::envelope::server {

using ::sharedos::common::server::HostScope;

grpc::Status EnvelopeService::OpenTurn(grpc::ServerContext* context,
                                       const v1::OpenTurnRequest* request,
                                       v1::OpenTurnResponse* response) {
  return Handle(context, response,
                [&](const HostScope& scope) { return engine_.OpenTurn(*request, scope); });
}

grpc::Status EnvelopeService::InvokeTool(grpc::ServerContext* context,
                                         const v1::InvokeToolRequest* request,
                                         v1::InvokeToolResponse* response) {
  return Handle(context, response,
                [&](const HostScope& scope) { return engine_.InvokeTool(*request, scope); });
}

grpc::Status EnvelopeService::FinishTurn(grpc::ServerContext* context,
                                         const v1::FinishTurnRequest* request,
                                         v1::FinishTurnResponse* response) {
  return Handle(context, response,
                [&](const HostScope& scope) { return engine_.FinishTurn(*request, scope); });
}

grpc::Status EnvelopeService::CancelTurn(grpc::ServerContext* context,
                                         const v1::CancelTurnRequest* request,
                                         v1::CancelTurnResponse* response) {
  return Handle(context, response,
                [&](const HostScope& scope) { return engine_.CancelTurn(*request, scope); });
}

grpc::Status EnvelopeService::GetTurn(grpc::ServerContext* context,
                                      const v1::GetTurnRequest* request,
                                      v1::GetTurnResponse* response) {
  return Handle(context, response,
                [&](const HostScope& scope) { return engine_.GetTurn(*request, scope); });
}

grpc::Status EnvelopeService::WatchTurn(grpc::ServerContext* context,
                                        const v1::WatchTurnRequest* request,
                                        grpc::ServerWriter<v1::WatchTurnResponse>* writer) {
  absl::StatusOr<common::server::Principal> caller =
      common::server::RequireCaller(authenticator_, *context, {common::server::Role::kHost});
  if (!caller.ok()) return common::ToGrpcStatus(caller.status());
  return common::ToGrpcStatus(engine_.WatchTurn(
      *request, caller->scope,
      [&](const protocol::v1::ExecutionEvent& event) {
        v1::WatchTurnResponse response;
        *response.mutable_event() = event;
        return writer->Write(response);
      },
      [&] { return context->IsCancelled(); }));
}

}  // namespace sharedos::envelope::server
