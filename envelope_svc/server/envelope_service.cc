#include "envelope_svc/server/envelope_service.h"

#include "absl/strings/str_cat.h"

namespace sharedos::envelope::server {

using ::sharedos::common::server::Principal;

grpc::Status EnvelopeService::WatchTurn(grpc::ServerContext* context,
                                        const v1::WatchTurnRequest* request,
                                        grpc::ServerWriter<v1::WatchTurnResponse>* writer) {
  static const std::string kMethod = MethodName("WatchTurn");
  absl::StatusOr<Principal> caller = rpc_.Caller(*context, kMethod);
  if (!caller.ok()) return common::ToGrpcStatus(caller.status());
  // A long-poll (up to the turn's deadline): bounded per principal (issue 34).
  absl::StatusOr<common::server::LongPollLimiter::Slot> slot =
      long_polls_.Acquire(caller->name, "Envelope.WatchTurn");
  if (!slot.ok()) return common::ToGrpcStatus(slot.status());
  if (forwarder_ != nullptr) {
    switch (forwarder_->RouteOf(request->turn_id(), TurnForwarder::Forwarded(*context))) {
      case TurnForwarder::Route::kLocal:
        break;
      case TurnForwarder::Route::kForward:
        return forwarder_->RelayWatch(*context, *request, *writer);
      case TurnForwarder::Route::kNotFound:
        return grpc::Status(grpc::StatusCode::NOT_FOUND,
                            absl::StrCat("turn \"", request->turn_id(), "\" not found"));
    }
  }
  return common::ToGrpcStatus(core_.WatchTurn(
      *request, caller->scope,
      [&](const protocol::v1::ExecutionEvent& event) {
        v1::WatchTurnResponse response;
        *response.mutable_event() = event;
        return writer->Write(response);
      },
      [&] { return context->IsCancelled(); }));
}

}  // namespace sharedos::envelope::server
