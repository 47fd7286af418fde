#include "envelope_svc/core/catalog.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_json.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"

namespace sharedos::envelope::core {

namespace pb = ::sharedos::protocol::v1;

absl::StatusOr<std::string> CatalogHasher::Hash(
    absl::Span<const std::shared_ptr<const tools::Tool>> tools) {
  std::string key;
  key.reserve(tools.size() * sizeof(uintptr_t));
  for (const auto& tool : tools) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(tool.get());
    key.append(reinterpret_cast<const char*>(&address), sizeof(address));
  }
  absl::MutexLock lock(&mu_);
  if (auto it = by_set_.find(key); it != by_set_.end()) return it->second.hash;

  // canonicalJson of an array is "[" + the elements' canonical texts joined by "," + "]".
  std::string canonical = "[";
  for (size_t i = 0; i < tools.size(); ++i) {
    auto it = by_tool_.find(tools[i].get());
    if (it == by_tool_.end()) {
      ASSIGN_OR_RETURN(const nlohmann::json json,
                       common::PublishedToolDefinitionToJson(tools[i]->published()));
      if (by_tool_.size() >= max_entries_) by_tool_.clear();
      it = by_tool_.emplace(tools[i].get(), ToolEntry{tools[i], common::CanonicalJson(json)}).first;
    }
    if (i > 0) canonical.push_back(',');
    canonical.append(it->second.canonical);
  }
  canonical.push_back(']');
  std::string hash = common::Sha256Hex(canonical);
  if (by_set_.size() >= max_entries_) by_set_.clear();
  by_set_.emplace(
      std::move(key),
      SetEntry{std::vector<std::shared_ptr<const tools::Tool>>(tools.begin(), tools.end()), hash});
  return hash;
}

pb::ToolCatalog BuildCatalog(const std::string& execution_id,
                             absl::Span<const std::shared_ptr<const tools::Tool>> tools,
                             const std::string& catalog_hash) {
  pb::ToolCatalog catalog;
  catalog.set_version("1");
  catalog.set_execution_id(execution_id);
  catalog.set_catalog_hash(catalog_hash);
  for (const auto& tool : tools) *catalog.add_tools() = tool->published();
  return catalog;
}

pb::ReachResult NarrowReach(pb::ReachResult reach,
                            const absl::flat_hash_set<std::string>& resource_namespaces) {
  if (reach.status() != pb::REACH_STATUS_COMPUTED) return reach;
  pb::ReachResult narrowed;
  narrowed.set_status(reach.status());
  for (pb::ResourceReach& entry : *reach.mutable_reach()) {
    if (resource_namespaces.contains(entry.namespace_())) {
      *narrowed.add_reach() = std::move(entry);
    }
  }
  return narrowed;
}

}  // namespace sharedos::envelope::core
