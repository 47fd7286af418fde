// The seam between the kernel's resource plane (envelope_svc/core/resources.h) and whatever
// serves a resource namespace: a host's ResourceProvider over gRPC (grpc_resource_provider.h) or
// a test fake. Called only for an operation the kernel has already authorized. Implementations
// must be thread-safe: one provider serves every turn. Deadlines are real (wall-clock) time.

#ifndef SHAREDOS_ENVELOPE_SVC_RESOURCES_RESOURCE_PROVIDER_H_
#define SHAREDOS_ENVELOPE_SVC_RESOURCES_RESOURCE_PROVIDER_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/envelope/v1/resources.pb.h"

namespace sharedos::envelope::resources {

class ResourceProviderInterface {
 public:
  virtual ~ResourceProviderInterface() = default;

  // Runs `request`; answers the provider's result, still to be checked by the caller (same
  // operation id, a status, a refusal's code). Any error means resource_execution_failed; its
  // text must not carry provider-supplied messages.
  virtual absl::StatusOr<v1::ResourceResult> Invoke(const v1::ResourceInvokeRequest& request,
                                                    absl::Time deadline) = 0;
};

// The providers attached to an envelope, by the resource namespace each serves (pointers
// borrowed).
using ResourceProviders = std::map<std::string, ResourceProviderInterface*>;

}  // namespace sharedos::envelope::resources

#endif  // SHAREDOS_ENVELOPE_SVC_RESOURCES_RESOURCE_PROVIDER_H_
