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

absl::StatusOr<GrantHashText> GrantHashTextOf(const protocol::v1::CapabilityGrant& grant) {
  GrantHashText text;
  ASSIGN_OR_RETURN(text.canonical, CanonicalCapabilityGrantJson(grant));
  text.ascii = IsAscii(text.canonical);
  text.quoted.reserve(text.canonical.size() + text.canonical.size() / 4 + 2);
  AppendJsonStringTo(text.canonical, &text.quoted);
  return text;
}

std::string AuthorityHashOfTexts(std::vector<const GrantHashText*> texts) {
  bool ascii = true;
  for (const GrantHashText* text : texts) ascii = ascii && text->ascii;
  // On ASCII, byte order is code-unit order (and equal texts are interchangeable).
  if (ascii) {
    std::sort(texts.begin(), texts.end(), [](const GrantHashText* a, const GrantHashText* b) {
      return a->canonical < b->canonical;
    });
  } else {
    SortByCodeUnits(
        &texts, [](const GrantHashText* text) -> const std::string& { return text->canonical; });
  }
  // canonicalJson of the array of strings, fed to SHA-256 piece by piece.
  Sha256Hasher hasher;
  hasher.Update("[");
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) hasher.Update(",");
    hasher.Update(texts[i]->quoted);
  }
  hasher.Update("]");
  return hasher.HexDigest();
}

absl::StatusOr<std::string> AuthorityHash(absl::Span<const protocol::v1::CapabilityGrant> grants) {
  std::vector<GrantHashText> texts;
  texts.reserve(grants.size());
  for (const auto& grant : grants) {
    ASSIGN_OR_RETURN(GrantHashText text, GrantHashTextOf(grant));
    texts.push_back(std::move(text));
  }
  std::vector<const GrantHashText*> parts;
  parts.reserve(texts.size());
  for (const GrantHashText& text : texts) parts.push_back(&text);
  return AuthorityHashOfTexts(std::move(parts));
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
