// A host's ResourceProvider service (envelope.proto) as a ResourceProviderInterface. Provider
// error text never leaves this class: a failed RPC becomes UNAVAILABLE (or DEADLINE_EXCEEDED)
// "ResourceProvider.Invoke failed: <grpc code name>", which the kernel maps to
// resource_execution_failed. The result is answered as the host gave it, for the kernel to
// check. Thread-safe (the stub is).

#ifndef SHAREDOS_ENVELOPE_SVC_RESOURCES_GRPC_RESOURCE_PROVIDER_H_
#define SHAREDOS_ENVELOPE_SVC_RESOURCES_GRPC_RESOURCE_PROVIDER_H_

#include <grpcpp/client_context.h>

#include <functional>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "envelope_svc/resources/resource_provider.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"

namespace sharedos::envelope::resources {

class GrpcResourceProvider final : public ResourceProviderInterface {
 public:
  struct Options {
    // Adds per-call metadata (the envelope's service credential), wired in main.
    std::function<void(grpc::ClientContext&)> prepare_context;
  };

  GrpcResourceProvider(std::unique_ptr<v1::ResourceProvider::StubInterface> stub, Options options)
      : stub_(std::move(stub)), options_(std::move(options)) {}

  // Errors: DEADLINE_EXCEEDED / UNAVAILABLE "ResourceProvider.Invoke failed: <CODE>";
  // INVALID_ARGUMENT "ResourceProvider.Invoke: response carries unknown fields".
  absl::StatusOr<v1::ResourceResult> Invoke(const v1::ResourceInvokeRequest& request,
                                            absl::Time deadline) override;

 private:
  const std::unique_ptr<v1::ResourceProvider::StubInterface> stub_;
  const Options options_;
};

}  // namespace sharedos::envelope::resources

#endif  // SHAREDOS_ENVELOPE_SVC_RESOURCES_GRPC_RESOURCE_PROVIDER_H_
