// The gRPC adapter of sharedos.envelope.v1.Envelope: authenticate the caller (a host
// credential only: an admin or service credential, or none, is UNAUTHENTICATED), hand its scope
// to the TurnEngine, convert the status. Thread-safe (both dependencies are).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_

#include <utility>

#include "absl/status/statusor.h"
#include "common/server/auth.h"
#include "common/server/grpc_auth.h"
#include "common/status/grpc_status.h"
#include "envelope_svc/core/turn_engine.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"

namespace sharedos::envelope::server {

class EnvelopeService final : public v1::Envelope::Service {
 public:
  // Borrows both; each must outlive the service.
  EnvelopeService(core::TurnEngine& engine, const common::server::Authenticator& authenticator)
      : engine_(engine), authenticator_(authenticator) {}

  grpc::Status OpenTurn(grpc::ServerContext* context, const v1::OpenTurnRequest* request,
                        v1::OpenTurnResponse* response) override;
  grpc::Status InvokeTool(grpc::ServerContext* context, const v1::InvokeToolRequest* request,
                          v1::InvokeToolResponse* response) override;
  grpc::Status FinishTurn(grpc::ServerContext* context, const v1::FinishTurnRequest* request,
                          v1::FinishTurnResponse* response) override;
  grpc::Status CancelTurn(grpc::ServerContext* context, const v1::CancelTurnRequest* request,
                          v1::CancelTurnResponse* response) override;
  grpc::Status GetTurn(grpc::ServerContext* context, const v1::GetTurnRequest* request,
                       v1::GetTurnResponse* response) override;
  grpc::Status WatchTurn(grpc::ServerContext* context, const v1::WatchTurnRequest* request,
                         grpc::ServerWriter<v1::WatchTurnResponse>* writer) override;

 private:
  // Authenticates a host caller, runs `call(scope)` and moves its response out.
  template <typename Response, typename Call>
  grpc::Status Handle(const grpc::ServerContext* context, Response* response, Call call) {
    absl::StatusOr<common::server::Principal> caller =
        common::server::RequireCaller(authenticator_, *context, {common::server::Role::kHost});
    if (!caller.ok()) return common::ToGrpcStatus(caller.status());
    absl::StatusOr<Response> result = call(caller->scope);
    if (!result.ok()) return common::ToGrpcStatus(result.status());
    *response = *std::move(result);
    return grpc::Status::OK;
  }

  core::TurnEngine& engine_;
  const common::server::Authenticator& authenticator_;
};

}  // namespace sharedos::envelope::server

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_
