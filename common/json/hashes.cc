#include "common/json/hashes.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json/canonical_json.h"
#include "common/json/code_unit_sort.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"

namespace sharedos::common {

using Json = nlohmann::json;

absl::StatusOr<std::string> AuthorityHash(absl::Span<const protocol::v1::CapabilityGrant> grants) {
  std::vector<std::string> texts;
  texts.reserve(grants.size());
  for (const auto& grant : grants) {
    ASSIGN_OR_RETURN(const Json json, CapabilityGrantToJson(grant));
    texts.push_back(CanonicalJson(json));
  }
  SortByCodeUnits(&texts);
  return Sha256HexOfCanonicalJson(Json(std::move(texts)));
}

absl::StatusOr<std::string> CatalogHash(
    absl::Span<const protocol::v1::PublishedToolDefinition> tools) {
  std::vector<const protocol::v1::PublishedToolDefinition*> sorted;
  sorted.reserve(tools.size());
  for (const auto& tool : tools) sorted.push_back(&tool);
  SortByCodeUnits(&sorted, [](const auto* tool) -> const std::string& { return tool->name(); });
  Json array = Json::array();
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0 && sorted[i]->name() == sorted[i - 1]->name()) {
      return absl::InvalidArgumentError(
          absl::StrCat("catalogue: duplicate tool name \"", sorted[i]->name(), "\""));
    }
    ASSIGN_OR_RETURN(Json json, PublishedToolDefinitionToJson(*sorted[i]));
    array.push_back(std::move(json));
  }
  return Sha256HexOfCanonicalJson(array);
}

absl::StatusOr<std::string> CapabilityRequestId(const protocol::v1::CapabilityRequest& request) {
  ASSIGN_OR_RETURN(const Json identity, CapabilityRequestIdentityToJson(request));
  return absl::StrCat(kCapabilityRequestIdPrefix, Sha256HexOfCanonicalJson(identity));
}

}  // namespace sharedos::common
