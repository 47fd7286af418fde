// The one place where absl::Status and grpc::Status are converted into each
// other.
//
// Service adapters return `ToGrpcStatus(status)`; clients turn stub results
// back with `FromGrpcStatus`. Codes map one to one (checked at compile time in
// grpc_status.cc); messages are copied verbatim. Status payloads and grpc error
// details are not carried.

#ifndef SHAREDOS_COMMON_STATUS_GRPC_STATUS_H_
#define SHAREDOS_COMMON_STATUS_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace sharedos::common {

// Returns the grpc::Status with the same code and message as `status`
// (grpc::Status::OK for an OK status). A non-canonical code becomes UNKNOWN.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Returns the absl::Status with the same code and message as `status`. A code
// outside the canonical range (0..16) becomes absl::StatusCode::kUnknown,
// message kept.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_STATUS_GRPC_STATUS_H_
