// The W3C trace context of an incoming call (common/logging/trace_context.h), as every gRPC
// adapter reads it (rpc_adapter.h): the caller's valid `traceparent`; a fresh one when what it
// sent is malformed (never echoed: only "replaced" is logged); none when it sent none, so that
// untraced traffic costs one metadata lookup and writes no line.

#ifndef SHAREDOS_COMMON_SERVER_RPC_TRACE_H_
#define SHAREDOS_COMMON_SERVER_RPC_TRACE_H_

#include <optional>

#include "common/logging/trace_context.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace sharedos::common::server {

struct IncomingTrace {
  std::optional<logging::TraceContext> context;
  // The caller sent a traceparent that does not parse (or several): `context` is minted.
  bool replaced = false;
};

IncomingTrace ReadIncomingTrace(const grpc::ServerContextBase& context);

// One "rpc" line for a traced call: its trace (w3c_trace_id, from the current scope), whether
// the caller's traceparent was replaced, and the gRPC status code. Nothing of the request.
void LogTracedCall(const IncomingTrace& trace, const grpc::Status& status);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_RPC_TRACE_H_
