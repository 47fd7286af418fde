// Fuzzes the tool-registry config (ToolRegistryConfig text proto, envelope_svc/config/README.md):
// strict parsing (ToolRegistry::ParseConfig) and building the registry from it
// (ToolRegistry::Create: schema JSON texts, requirement rules, bindings). Properties: nothing
// crashes; every refusal is INVALID_ARGUMENT; a registry that builds finds each of its tools.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "envelope_svc/tools/tool_registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ::sharedos::envelope::tools::ToolRegistry;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = ToolRegistry::ParseConfig(text, "fuzz.textproto");
  if (!config.ok()) {
    if (config.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  auto registry = ToolRegistry::Create({*config});
  if (!registry.ok()) {
    if (registry.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  for (const auto& tool : (*registry)->tools()) {
    if ((*registry)->Find(tool->definition().name()) != tool) std::abort();
  }
  return 0;
}
