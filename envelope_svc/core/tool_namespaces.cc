#include "envelope_svc/core/tool_namespaces.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capability/errors.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "envelope_svc/core/audit_records.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;

constexpr int kMaxNamesPerList = 64;

absl::Status CheckNames(const google::protobuf::RepeatedPtrField<std::string>& names,
                        absl::string_view field) {
  if (names.size() > kMaxNamesPerList) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": more than 64 namespaces"));
  }
  for (int i = 0; i < names.size(); ++i) {
    const std::string path = absl::StrCat(field, "[", i, "]");
    std::string name = names[i];
    RETURN_IF_ERROR(common::validation::CheckIdentifier(&name, path));
    if (name != names[i]) return absl::InvalidArgumentError(path + ": surrounding whitespace");
  }
  return absl::OkStatus();
}

void SetNumber(pb::AuditEvent& event, const std::string& key, int value) {
  (*event.mutable_metadata()->mutable_fields())[key].set_number_value(value);
}

}  // namespace

absl::Status ValidateToolNamespaceUpdate(const v1::UpdateToolNamespacesRequest& request) {
  RETURN_IF_ERROR(CheckNames(request.enable(), "enable"));
  RETURN_IF_ERROR(CheckNames(request.disable(), "disable"));
  if (request.enable().empty() && request.disable().empty()) {
    return absl::InvalidArgumentError("enable: name at least one namespace to enable or disable");
  }
  const std::set<std::string> enabling(request.enable().begin(), request.enable().end());
  for (const std::string& name : request.disable()) {
    if (enabling.count(name) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("disable: \"", name, "\" is also enabled"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ListToolNamespacesResponse> ListToolNamespaces(Turn& turn,
                                                                  audit::client::AuditWriter& audit,
                                                                  absl::Time now) {
  NamespaceSelection selection;
  {
    absl::MutexLock lock(&turn.mu);
    if (turn.phase != Phase::kRunning) return capability::errors::TurnEnded();
    selection = turn.namespaces;
  }
  struct Entry {
    std::set<std::string> sources;
    int tools = 0;
  };
  std::map<std::string, Entry> by_namespace;
  for (const auto& tool : turn.tools->tools()) {
    Entry& entry = by_namespace[tool->tool_namespace()];
    entry.sources.insert(tool->definition().source());
    ++entry.tools;
  }
  v1::ListToolNamespacesResponse response;
  int on = 0;
  for (const auto& [name, entry] : by_namespace) {
    v1::ToolNamespaceDescriptor* descriptor = response.add_namespaces();
    descriptor->set_namespace_(name);
    for (const std::string& source : entry.sources) descriptor->add_sources(source);
    descriptor->set_tool_count(entry.tools);
    descriptor->set_enabled(selection.Enables(name));
    if (descriptor->enabled()) ++on;
  }
  const int total = static_cast<int>(by_namespace.size());
  response.mutable_summary()->set_total(total);
  response.mutable_summary()->set_enabled(on);
  response.mutable_summary()->set_disabled(total - on);
  pb::AuditEvent event =
      StampedEvent(turn.context, now, pb::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_CATALOG_LISTED,
                   pb::AUDIT_OUTCOME_SUCCEEDED);
  SetNumber(event, "totalNamespaces", total);
  SetNumber(event, "enabledNamespaces", on);
  (void)audit.RecordPostEffect(std::move(event));
  return response;
}

absl::StatusOr<v1::UpdateToolNamespacesResponse> UpdateToolNamespaces(
    Turn& turn, const v1::UpdateToolNamespacesRequest& request, audit::client::AuditWriter& audit,
    absl::Time now) {
  std::vector<std::string> names;
  {
    absl::MutexLock lock(&turn.mu);
    if (turn.phase != Phase::kRunning) return capability::errors::TurnEnded();
    turn.namespaces.Update(request.enable(), request.disable());
    names.assign(turn.namespaces.names().begin(), turn.namespaces.names().end());
  }
  pb::AuditEvent event =
      StampedEvent(turn.context, now, pb::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_SELECTION_UPDATED,
                   pb::AUDIT_OUTCOME_SUCCEEDED);
  google::protobuf::ListValue* list =
      (*event.mutable_metadata()->mutable_fields())["enabledNamespaces"].mutable_list_value();
  for (const std::string& name : names) list->add_values()->set_string_value(name);
  (void)audit.RecordPostEffect(std::move(event));
  v1::UpdateToolNamespacesResponse response;
  for (std::string& name : names) response.add_enabled_namespaces(std::move(name));
  return response;
}

}  // namespace sharedos::envelope::core
