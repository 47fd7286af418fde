// The tool registry: every tool envelope_svc knows, loaded once at start from ToolRegistryConfig
// text protos (proto/sharedos/envelope/v1/registry.proto; envelope_svc/config/README.md).
// Immutable after loading except for a bounded cache of compiled host-listed definitions;
// thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_REGISTRY_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "envelope_svc/tools/tool.h"
#include "sharedos/envelope/v1/registry.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::tools {

// A sorted set of tools with lookup by name. Immutable; thread-safe.
struct ToolSet {
  // Sorted by name (code-unit order).
  std::vector<std::shared_ptr<const Tool>> tools;
  // Views of the names of `tools`.
  absl::flat_hash_map<absl::string_view, const Tool*> by_name;
};

class ToolRegistry {
 public:
  // How many compiled host-listed definitions are kept (the cache is emptied when full).
  static constexpr size_t kListedDefinitionCacheSize = 1024;

  // Parses one config text strictly (unknown fields, syntax errors). `source` names the text
  // in errors. Errors: INVALID_ARGUMENT "<source>:<line>:<column>: <problem>".
  static absl::StatusOr<v1::ToolRegistryConfig> ParseConfig(absl::string_view text,
                                                            absl::string_view source);

  // Builds the registry from `configs` merged in order. Each tool's schema JSON text (when
  // given) becomes its definition's schema, then Tool::Create checks it; names are unique
  // across all configs; a tool named sharedos.escalate must equal EscalationToolDefinition()
  // and have provider `none`.
  // Errors: INVALID_ARGUMENT naming the tool and field, e.g.
  //   `configs[1].tools[0] "files.index".requirement.fixed.action: empty`,
  //   `configs[0].tools[4] "files.read".definition.name: duplicate "files.read"`.
  static absl::StatusOr<std::unique_ptr<ToolRegistry>> Create(
      absl::Span<const v1::ToolRegistryConfig> configs);

  // Reads, parses (sources named by path) and merges the files at `paths`.
  // Errors: NOT_FOUND / PERMISSION_DENIED … for a file that cannot be read ("<path>: …");
  // INVALID_ARGUMENT as ParseConfig and Create (prefixed with the file's path).
  static absl::StatusOr<std::unique_ptr<ToolRegistry>> LoadFiles(
      absl::Span<const std::string> paths);

  ToolRegistry(const ToolRegistry&) = delete;
  ToolRegistry& operator=(const ToolRegistry&) = delete;

  // The registered tool of that name; null when none is.
  std::shared_ptr<const Tool> Find(absl::string_view name) const;

  // Every registered tool, sorted by name (code-unit order).
  const std::vector<std::shared_ptr<const Tool>>& tools() const { return tools_; }

  // The tools a turn has without asking any provider: providerless tools, and files-bound
  // ones when the files provider is attached. Computed once at load.
  const std::shared_ptr<const ToolSet>& BuiltinTools(bool files_attached) const {
    return files_attached ? builtin_with_files_ : builtin_without_files_;
  }

  // Host-bound tools by provider id, each list sorted by name.
  const std::map<std::string, std::vector<std::shared_ptr<const Tool>>>& HostTools() const {
    return host_tools_;
  }

  // The Tool a turn uses for a host-provided tool whose provider listed `listed`: the listed
  // definition with the registered tool's requirement rule and binding. `registered` itself
  // when the two definitions are equal; otherwise validated and compiled, cached by content.
  // Errors: INVALID_ARGUMENT when `listed` names another tool, is invalid, or its schemas do
  // not compile (the path names the provider and tool).
  absl::StatusOr<std::shared_ptr<const Tool>> ToolForListedDefinition(
      const std::shared_ptr<const Tool>& registered,
      const protocol::v1::ToolDefinition& listed) const ABSL_LOCKS_EXCLUDED(cache_mu_);

 private:
  ToolRegistry() = default;

  std::vector<std::shared_ptr<const Tool>> tools_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Tool>> by_name_;
  std::shared_ptr<const ToolSet> builtin_with_files_;
  std::shared_ptr<const ToolSet> builtin_without_files_;
  std::map<std::string, std::vector<std::shared_ptr<const Tool>>> host_tools_;
  // Deterministic serialization of each registered definition, by name.
  absl::flat_hash_map<std::string, std::string> registered_bytes_;

  mutable absl::Mutex cache_mu_;
  // name + '\0' + deterministic bytes of the listed definition → compiled tool.
  mutable absl::flat_hash_map<std::string, std::shared_ptr<const Tool>> listed_cache_
      ABSL_GUARDED_BY(cache_mu_);
};

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_REGISTRY_H_
