// One unary call of a generated gRPC stub the way every SharedOS client/ makes it: the caller's
// credential as "authorization" metadata, a deadline, and the gRPC status converted once
// (common::FromGrpcStatus), so client interfaces answer absl::StatusOr and hold no grpcpp type.
// Stateless; thread-safe as the stub is.

#ifndef SHAREDOS_COMMON_CLIENT_BEARER_CALL_H_
#define SHAREDOS_COMMON_CLIENT_BEARER_CALL_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/status/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"

namespace sharedos::common {

// Runs `invoke(&context, &response)` — a stub method bound to its request — with
// "authorization: <authorization>" and a deadline `timeout` from now (gRPC deadlines are
// wall-clock instants; only the duration is configured). Errors: the call's status, code and
// message kept (DEADLINE_EXCEEDED when no answer came in time).
template <typename Response, typename Invoke>
absl::StatusOr<Response> BearerCall(const std::string& authorization, absl::Duration timeout,
                                    Invoke&& invoke) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", authorization);
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoNanoseconds(timeout));
  Response response;
  const grpc::Status status = invoke(&context, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_CLIENT_BEARER_CALL_H_
