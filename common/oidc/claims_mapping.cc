#include "common/oidc/claims_mapping.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace sharedos::common::oidc {

absl::StatusOr<server::Principal> MapToPrincipal(const ClaimMapping& mapping,
                                                 const VerifiedToken& token) {
  auto value = token.claims.find(mapping.principal_claim);
  if (value == token.claims.end() || !value->is_string()) {
    return absl::UnauthenticatedError(kInvalidTokenMessage);
  }
  const std::string address = absl::StrCat("human:", value->get<std::string>());
  if (value->get<std::string>().size() > 128 || !server::IsAddressKey(address)) {
    return absl::UnauthenticatedError(kInvalidTokenMessage);
  }
  for (char c : value->get<std::string>()) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return absl::UnauthenticatedError(kInvalidTokenMessage);
    }
  }
  std::vector<std::string> groups;
  auto claim = token.claims.find(mapping.groups_claim);
  if (claim != token.claims.end() && claim->is_string()) {
    groups.push_back(claim->get<std::string>());
  } else if (claim != token.claims.end() && claim->is_array()) {
    for (size_t i = 0; i < claim->size() && i < 256; ++i) {
      if ((*claim)[i].is_string()) groups.push_back((*claim)[i].get<std::string>());
    }
  }
  auto member = [&](const std::string& group) {
    for (const std::string& g : groups) {
      if (g == group) return true;
    }
    return false;
  };
  const ClaimRule* first = nullptr;
  for (const ClaimRule& rule : mapping.rules) {
    if (member(rule.group)) {
      first = &rule;
      break;
    }
  }
  if (first == nullptr) {
    return absl::PermissionDeniedError("no SharedOS role for this identity");
  }
  server::Principal principal;
  principal.address = address;
  principal.name = absl::StrCat("idp:", value->get<std::string>());
  principal.role = first->role == "admin" ? server::Role::kAdmin : server::Role::kReviewer;
  std::set<std::string> seen;
  for (const ClaimRule& rule : mapping.rules) {
    if (rule.role != first->role || !member(rule.group)) continue;
    for (const std::string& ns : rule.namespaces) {
      if (seen.insert(ns).second) principal.scope.namespaces.push_back(ns);
    }
  }
  principal.idp_issuer = token.issuer;
  principal.idp_subject = token.subject;
  return principal;
}

}  // namespace sharedos::common::oidc
