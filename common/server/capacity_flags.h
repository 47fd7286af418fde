// The process's capacity flags every SharedOS binary shares (issue 34): the gRPC thread bound
// (--grpc_max_threads) and the long-polls one service holds per principal and in total
// (--max_long_polls_per_principal, --max_long_polls). Defined once; ReadServiceFlags applies
// them for the services, sharedosd calls ApplyCapacityFlags itself — before building services.

#ifndef SHAREDOS_COMMON_SERVER_CAPACITY_FLAGS_H_
#define SHAREDOS_COMMON_SERVER_CAPACITY_FLAGS_H_

#include "absl/status/status.h"

namespace sharedos::common::server {

// Sets the process defaults of ServerRunner (SetDefaultMaxThreads) and LongPollLimiter from the
// flags. Errors: INVALID_ARGUMENT naming the flag (long-polls must stay below the thread bound).
absl::Status ApplyCapacityFlags();

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_CAPACITY_FLAGS_H_
