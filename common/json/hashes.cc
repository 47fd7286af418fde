#include "common/json/hashes.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_json.h"
#include "common/json/code_unit_sort.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"

namespace sharedos::common {

using Json = nlohmann::json;

namespace {

bool IsAscii(absl::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> AuthorityHash(absl::Span<const protocol::v1::CapabilityGrant> grants) {
  std::vector<std::string> texts;
  texts.reserve(grants.size());
  bool ascii = true;
  size_t size = 2;
  for (const auto& grant : grants) {
    ASSIGN_OR_RETURN(std::string text, CanonicalCapabilityGrantJson(grant));
    ascii = ascii && IsAscii(text);
    size += text.size() + text.size() / 8 + 3;
    texts.push_back(std::move(text));
  }
  // On ASCII, byte order is code-unit order (and equal texts are interchangeable).
  if (ascii) {
    std::sort(texts.begin(), texts.end());
  } else {
    SortByCodeUnits(&texts);
  }
  // canonicalJson of the array of strings, written directly.
  std::string array;
  array.reserve(size);
  array.push_back('[');
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) array.push_back(',');
    AppendJsonStringTo(texts[i], &array);
  }
  array.push_back(']');
  return Sha256Hex(array);
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
