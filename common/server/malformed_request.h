// A request gRPC cannot parse is the caller's fault: INVALID_ARGUMENT, with a message saying
// why, not the INTERNAL with an empty message that gRPC's generated handlers answer when
// protobuf refuses the bytes (a string field that is not UTF-8, messages nested past protobuf's
// recursion limit of 100 — a google.protobuf.Struct takes three per level of its JSON — or a
// malformed wire encoding). INTERNAL stays for the server's own faults.
//
// A server interceptor: it notes, at the request's arrival, that gRPC could not deserialize it
// (the handler then never runs), and rewrites the status the call then ends with. Every
// SharedOS listener installs it (ServerRunner). Thread-safe: one interceptor per call.

#ifndef SHAREDOS_COMMON_SERVER_MALFORMED_REQUEST_H_
#define SHAREDOS_COMMON_SERVER_MALFORMED_REQUEST_H_

#include <memory>

#include "absl/strings/string_view.h"
#include "grpcpp/support/server_interceptor.h"

namespace sharedos::common::server {

// The message of the INVALID_ARGUMENT a malformed request gets. It echoes nothing of the bytes.
inline constexpr absl::string_view kMalformedRequestMessage =
    "request: not a valid protobuf message of this method (a string that is not valid UTF-8, "
    "values nested past protobuf's limit of 100 messages, or a malformed encoding)";

class MalformedRequestInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;
};

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_MALFORMED_REQUEST_H_
