// A turn's published catalogue (semantics §1.14, §10.4) and reach narrowing (§3.8): the
// effective tools' published projections sorted by name, their catalogHash, and the reach cut
// to the effective tools' resource namespaces.
//
// CatalogHasher memoises: the canonical JSON of each tool's published definition is computed
// once per Tool object, and the hash once per distinct set of tools, so a turn's catalogue
// resolution costs a map lookup once its catalogue has been seen. Thread-safe; bounded (a full
// memo is emptied).

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_CATALOG_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_CATALOG_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "envelope_svc/tools/tool.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

class CatalogHasher {
 public:
  explicit CatalogHasher(size_t max_entries = 4096) : max_entries_(max_entries) {}
  CatalogHasher(const CatalogHasher&) = delete;
  CatalogHasher& operator=(const CatalogHasher&) = delete;

  // catalogHash of `tools` (sorted ascending by name, names unique): equal to
  // common::CatalogHash over their published definitions.
  // Errors: INVALID_ARGUMENT when a definition cannot be rendered (never for a registry tool).
  absl::StatusOr<std::string> Hash(absl::Span<const std::shared_ptr<const tools::Tool>> tools)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct SetEntry {
    std::vector<std::shared_ptr<const tools::Tool>> pinned;
    std::string hash;
  };
  struct ToolEntry {
    std::shared_ptr<const tools::Tool> pinned;
    std::string canonical;
  };

  const size_t max_entries_;
  absl::Mutex mu_;
  // Key: the tools' addresses, in order (entries pin them, so an address is never reused).
  absl::flat_hash_map<std::string, SetEntry> by_set_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<const tools::Tool*, ToolEntry> by_tool_ ABSL_GUARDED_BY(mu_);
};

// The published catalogue: version "1", execution_id, catalog_hash, the tools' projections.
protocol::v1::ToolCatalog BuildCatalog(const std::string& execution_id,
                                       absl::Span<const std::shared_ptr<const tools::Tool>> tools,
                                       const std::string& catalog_hash);

// `reach` (when computed) keeping only entries of `resource_namespaces`.
protocol::v1::ReachResult NarrowReach(protocol::v1::ReachResult reach,
                                      const absl::flat_hash_set<std::string>& resource_namespaces);

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_CATALOG_H_
