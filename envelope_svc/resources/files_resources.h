// The built-in resource provider of the embedded default: the files plane's workspaces as
// resources. An authorized operation on resource namespace `files` is run by the built-in files
// provider (providers/files) exactly as the files.* tool of the same action would run it — the
// action selects the operation (read, list, stat, create, …), the resource's path and owner the
// target, and `input` (a JSON object, absent: {}) the tool's extra arguments (content,
// expectedVersion, …). Its output and in-band failures are the files provider's. Thread-safe (the
// files provider is).

#ifndef SHAREDOS_ENVELOPE_SVC_RESOURCES_FILES_RESOURCES_H_
#define SHAREDOS_ENVELOPE_SVC_RESOURCES_FILES_RESOURCES_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "envelope_svc/resources/resource_provider.h"
#include "envelope_svc/tools/tool_provider.h"

namespace sharedos::envelope::resources {

class FilesResourceProvider final : public ResourceProviderInterface {
 public:
  // `files` is the built-in files provider (borrowed).
  explicit FilesResourceProvider(tools::ToolProviderInterface& files) : files_(files) {}

  // An input that is not a JSON object is FAILED invalid_arguments (the files provider's code).
  // Errors: those of the files provider (none: it answers in band).
  absl::StatusOr<v1::ResourceResult> Invoke(const v1::ResourceInvokeRequest& request,
                                            absl::Time deadline) override;

 private:
  tools::ToolProviderInterface& files_;
};

}  // namespace sharedos::envelope::resources

#endif  // SHAREDOS_ENVELOPE_SVC_RESOURCES_FILES_RESOURCES_H_
