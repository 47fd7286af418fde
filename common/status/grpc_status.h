// The one place where absl::Status and grpc::Status are converted into each
// other.
//
// Service adapters return `ToGrpcStatus(status)`; clients turn stub results
// back with `FromGrpcStatus`. Codes map one to one (checked at compile time in
// grpc_status.cc); messages are copied, up to kMaxStatusMessageBytes (a longer one
// is cut at a UTF-8 boundary and marked, so no error can echo unbounded input into
// the trailers a client must parse). Status payloads and grpc error details are not
// carried.

#ifndef SHAREDOS_COMMON_STATUS_GRPC_STATUS_H_
#define SHAREDOS_COMMON_STATUS_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace sharedos::common {

// The longest message ToGrpcStatus sends. gRPC carries it in a trailer, and a
// client refuses trailers past its metadata limit (8 KiB by default) and fails the
// call without the server's code.
inline constexpr size_t kMaxStatusMessageBytes = 1024;

// Returns the grpc::Status with the same code and message as `status`
// (grpc::Status::OK for an OK status), the message cut to kMaxStatusMessageBytes.
// A non-canonical code becomes UNKNOWN.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Returns the absl::Status with the same code and message as `status`. A code
// outside the canonical range (0..16) becomes absl::StatusCode::kUnknown,
// message kept.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_STATUS_GRPC_STATUS_H_
