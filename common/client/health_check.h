// grpc.health.v1.Health/Check spoken as raw protobuf bytes (the request names the service in
// field 1; the answer's field 1 is the status, SERVING = 1), so that readiness probes and
// sharedosctl need no copy of the health proto.

#ifndef SHAREDOS_COMMON_CLIENT_HEALTH_CHECK_H_
#define SHAREDOS_COMMON_CLIENT_HEALTH_CHECK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace sharedos::common::client {

enum class HealthStatus { kUnknown, kServing, kNotServing, kServiceUnknown };

// "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN" or "UNKNOWN".
const char* HealthStatusName(HealthStatus status);

// The health of `service` ("" for the whole server) at `channel`'s server, answered within
// `timeout`. Errors: the call's status (UNAVAILABLE when unreachable, DEADLINE_EXCEEDED,
// NOT_FOUND for a service the server does not know); INTERNAL for an answer that does not parse.
absl::StatusOr<HealthStatus> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& service, absl::Duration timeout);

}  // namespace sharedos::common::client

#endif  // SHAREDOS_COMMON_CLIENT_HEALTH_CHECK_H_
