#include "envelope_svc/tools/tool_registry.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/json/json_nesting.h"
#include "common/json/proto_json.h"
#include "common/proto/deterministic.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "envelope_svc/tools/escalation_tool.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::validation::FieldPath;
using ::sharedos::common::validation::IndexPath;
using ::sharedos::common::validation::InvalidArgumentAt;

// Keeps the first error the text parser reports.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  void AddWarning(int line, google::protobuf::io::ColumnNumber column,
                  const std::string& message) override {}
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

// Moves a schema given as JSON text into `schema`.
absl::Status ApplySchemaJson(const std::string& text, bool struct_set,
                             google::protobuf::Struct* schema, absl::string_view path) {
  if (struct_set) return InvalidArgumentAt(path, "set together with the definition's Struct");
  if (absl::Status nesting = common::CheckJsonNesting(text, path); !nesting.ok()) return nesting;
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return InvalidArgumentAt(path, "not valid JSON");
  absl::StatusOr<google::protobuf::Struct> converted = common::JsonToProtoStruct(json);
  if (!converted.ok()) return InvalidArgumentAt(path, converted.status().message());
  *schema = *std::move(converted);
  return absl::OkStatus();
}

std::string ToolPath(absl::string_view config_path, size_t index, absl::string_view name) {
  return absl::StrCat(IndexPath(FieldPath(config_path, "tools"), index), " \"", absl::CEscape(name),
                      "\"");
}

}  // namespace

absl::StatusOr<v1::ToolRegistryConfig> ToolRegistry::ParseConfig(absl::string_view text,
                                                                 absl::string_view source) {
  v1::ToolRegistryConfig config;
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &config)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", errors.first()));
  }
  return config;
}

absl::StatusOr<std::unique_ptr<ToolRegistry>> ToolRegistry::Create(
    absl::Span<const v1::ToolRegistryConfig> configs) {
  std::unique_ptr<ToolRegistry> registry(new ToolRegistry());
  for (size_t c = 0; c < configs.size(); ++c) {
    const std::string config_path = IndexPath("configs", c);
    const v1::ToolRegistryConfig& config = configs[c];
    for (int i = 0; i < config.tools_size(); ++i) {
      v1::RegisteredTool entry = config.tools(i);
      const std::string path = ToolPath(config_path, i, entry.definition().name());
      if (!entry.has_definition())
        return InvalidArgumentAt(FieldPath(path, "definition"), "required");
      protocol::v1::ToolDefinition* definition = entry.mutable_definition();
      const bool has_input_struct = definition->has_input_schema();
      const bool has_output_struct = definition->has_output_schema();
      // mutable_*() would create the field: only touched when the JSON text is given.
      if (!entry.input_schema_json().empty()) {
        RETURN_IF_ERROR(ApplySchemaJson(entry.input_schema_json(), has_input_struct,
                                        definition->mutable_input_schema(),
                                        FieldPath(path, "input_schema_json")));
      }
      if (!entry.output_schema_json().empty()) {
        RETURN_IF_ERROR(ApplySchemaJson(entry.output_schema_json(), has_output_struct,
                                        definition->mutable_output_schema(),
                                        FieldPath(path, "output_schema_json")));
      }
      ASSIGN_OR_RETURN(std::shared_ptr<const Tool> tool,
                       Tool::Create(std::move(*definition), std::move(*entry.mutable_requirement()),
                                    std::move(*entry.mutable_provider()), path));
      if (registry->by_name_.contains(tool->name())) {
        return InvalidArgumentAt(FieldPath(FieldPath(path, "definition"), "name"),
                                 absl::StrCat("duplicate \"", tool->name(), "\""));
      }
      // The kernel's messaging is supplied per turn when a transport is attached (TurnTools),
      // never configured.
      if (tool->provider_binding().has_messaging() || tool->name() == "messages.request") {
        return InvalidArgumentAt(FieldPath(path, "provider"),
                                 "messaging is kernel-supplied (messages.request), not configured");
      }
      if (tool->name() == kEscalationToolName) {
        google::protobuf::util::MessageDifferencer differencer;
        std::string difference;
        differencer.ReportDifferencesToString(&difference);
        if (!differencer.Compare(EscalationToolDefinition(), tool->definition())) {
          return InvalidArgumentAt(
              FieldPath(path, "definition"),
              absl::StrCat("must equal the sharedos.escalate definition (semantics §4.5): ",
                           difference.substr(0, difference.find('\n'))));
        }
        if (!tool->provider_binding().has_none()) {
          return InvalidArgumentAt(FieldPath(path, "provider"), "sharedos.escalate takes none");
        }
      }
      registry->registered_bytes_[tool->name()] = common::DeterministicBytes(tool->definition());
      registry->by_name_[tool->name()] = tool;
      registry->tools_.push_back(std::move(tool));
    }
  }
  // Tool names are ASCII, so byte order is code-unit order.
  std::sort(registry->tools_.begin(), registry->tools_.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
  auto with_files = std::make_shared<ToolSet>();
  auto without_files = std::make_shared<ToolSet>();
  for (const std::shared_ptr<const Tool>& tool : registry->tools_) {
    const v1::ProviderBinding& binding = tool->provider_binding();
    if (binding.has_grpc()) {
      registry->host_tools_[binding.grpc().provider_id()].push_back(tool);
      continue;
    }
    with_files->tools.push_back(tool);
    with_files->by_name.emplace(tool->name(), tool.get());
    if (binding.has_none()) {
      without_files->tools.push_back(tool);
      without_files->by_name.emplace(tool->name(), tool.get());
    }
  }
  registry->builtin_with_files_ = std::move(with_files);
  registry->builtin_without_files_ = std::move(without_files);
  return registry;
}

absl::StatusOr<std::unique_ptr<ToolRegistry>> ToolRegistry::LoadFiles(
    absl::Span<const std::string> paths) {
  std::vector<v1::ToolRegistryConfig> configs;
  for (const std::string& path : paths) {
    std::ifstream file(path, std::ios::binary);
    if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
    std::stringstream text;
    text << file.rdbuf();
    if (file.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
    ASSIGN_OR_RETURN(v1::ToolRegistryConfig config, ParseConfig(text.str(), path));
    configs.push_back(std::move(config));
  }
  absl::StatusOr<std::unique_ptr<ToolRegistry>> registry = Create(configs);
  if (!registry.ok()) {
    // Name the file instead of its index.
    std::string message(registry.status().message());
    for (size_t c = 0; c < paths.size(); ++c) {
      const std::string prefix = absl::StrCat(IndexPath("configs", c), ".");
      if (absl::StartsWith(message, prefix)) {
        message = absl::StrCat(paths[c], ": ", message.substr(prefix.size()));
        break;
      }
    }
    return absl::Status(registry.status().code(), message);
  }
  return registry;
}

std::shared_ptr<const Tool> ToolRegistry::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

absl::StatusOr<std::shared_ptr<const Tool>> ToolRegistry::ToolForListedDefinition(
    const std::shared_ptr<const Tool>& registered,
    const protocol::v1::ToolDefinition& listed) const {
  const std::string path =
      absl::StrCat("provider tool \"", absl::CEscape(registered->name()), "\"");
  if (listed.name() != registered->name()) {
    return InvalidArgumentAt(FieldPath(path, "name"), "not the registered tool");
  }
  std::string bytes = common::DeterministicBytes(listed);
  auto registered_bytes = registered_bytes_.find(registered->name());
  if (registered_bytes != registered_bytes_.end() && registered_bytes->second == bytes) {
    return registered;
  }
  std::string key = absl::StrCat(registered->name(), std::string(1, '\0'), bytes);
  {
    absl::MutexLock lock(&cache_mu_);
    auto cached = listed_cache_.find(key);
    if (cached != listed_cache_.end()) return cached->second;
  }
  ASSIGN_OR_RETURN(
      std::shared_ptr<const Tool> tool,
      Tool::Create(listed, registered->requirement_rule(), registered->provider_binding(), path));
  absl::MutexLock lock(&cache_mu_);
  if (listed_cache_.size() >= kListedDefinitionCacheSize) listed_cache_.clear();
  listed_cache_.emplace(std::move(key), tool);
  return tool;
}

}  // namespace sharedos::envelope::tools
