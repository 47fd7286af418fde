#include "grantstore_svc/core/owner_binding.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "capability/address.h"

namespace sharedos::grantstore::core {
namespace {

namespace pb = ::sharedos::protocol::v1;

absl::Status OwnerRequired(absl::string_view at, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(at, ".resource.owner: required — ", why));
}

}  // namespace

absl::Status BindOwners(pb::CapabilityGrant& grant, bool any_owner, absl::string_view path) {
  bool ownerless = false;
  for (int i = 0; i < grant.capabilities_size(); ++i) {
    pb::ResourceRef& resource = *grant.mutable_capabilities(i)->mutable_resource();
    if (resource.has_owner()) continue;
    if (any_owner) {
      ownerless = true;
      continue;
    }
    if (grant.issuer().has_human_user_id()) {
      *resource.mutable_owner() = grant.issuer();
      continue;
    }
    return OwnerRequired(
        absl::StrCat(path, ".capabilities[", i, "]"),
        absl::StrCat("the issuer ", capability::AddressKey(grant.issuer()),
                     " is not a human to pin it to; name the owner whose resources it reaches, "
                     "or issue it with any_owner (any owner of the namespace, shown as such)"));
  }
  // The marker is the store's to set: a caller's own is dropped, the rest of its metadata kept.
  if (ownerless) {
    (*grant.mutable_metadata()->mutable_fields())[kAnyOwnerKey].set_bool_value(true);
  } else if (grant.has_metadata()) {
    grant.mutable_metadata()->mutable_fields()->erase(kAnyOwnerKey);
  }
  return absl::OkStatus();
}

absl::Status BindChildOwners(const pb::CapabilityGrant& parent, std::vector<pb::Capability>& child,
                             absl::string_view path) {
  if (ReachesAnyOwner(parent)) return absl::OkStatus();
  std::optional<pb::Address> owner;
  bool several = false;
  for (const pb::Capability& capability : parent.capabilities()) {
    if (!owner.has_value()) {
      owner = capability.resource().owner();
    } else if (!capability::AddressEquals(*owner, capability.resource().owner())) {
      several = true;
    }
  }
  for (size_t i = 0; i < child.size(); ++i) {
    pb::ResourceRef& resource = *child[i].mutable_resource();
    if (resource.has_owner() || !owner.has_value()) continue;
    if (several) {
      return OwnerRequired(absl::StrCat(path, "[", i, "]"),
                           "the parent's capabilities name several owners; say which one");
    }
    *resource.mutable_owner() = *owner;
  }
  return absl::OkStatus();
}

bool ReachesAnyOwner(const pb::CapabilityGrant& grant) {
  for (const pb::Capability& capability : grant.capabilities()) {
    if (!capability.resource().has_owner()) return true;
  }
  return false;
}

}  // namespace sharedos::grantstore::core
