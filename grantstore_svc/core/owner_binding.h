// Owner binding at issue (docs/adr/0014, T1): whose resources a grant's capabilities reach is
// decided when the grant is issued, never left for the turn's owner to decide at use. The
// reference's matching rule (semantics §2.3: an omitted owner means the turn's owner) stays
// untouched for what reaches a decision; what changes is which grants may omit one:
//   - a root grant's capability without an owner is pinned to the grant's issuer when the issuer
//     is a human (the person whose authority it is);
//   - otherwise it stays ownerless only when an admin of the namespace says so explicitly
//     (IssueGrantRequest.any_owner), and the grant is marked metadata.anyOwner = true, which
//     sharedosctl and the console show as "any owner of <namespace>";
//   - a derived grant's capability without an owner takes its parent's owner (the one owner all
//     the parent's capabilities share), or stays ownerless under an ownerless parent;
//   - an approval names the reviewer as the owner of every capability (grant_store_core.cc).
// Stateless; thread-safe.

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_OWNER_BINDING_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_OWNER_BINDING_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::grantstore::core {

// The grant metadata key marking an explicit "any owner of the namespace".
inline constexpr char kAnyOwnerKey[] = "anyOwner";

// Resolves the owners of a root grant's capabilities in place, as above. `path` names the grant
// in errors ("grant"). Errors: INVALID_ARGUMENT naming `<path>.capabilities[i].resource.owner`
// (an ownerless capability under a non-human issuer, without `any_owner`).
absl::Status BindOwners(protocol::v1::CapabilityGrant& grant, bool any_owner,
                        absl::string_view path);

// Resolves a derived child's capabilities against its parent, in place: an ownerless one takes
// the parent's single owner; under a parent with an ownerless capability it stays ownerless (the
// parent reaches any owner, so may its child). Errors: INVALID_ARGUMENT naming
// `<path>[i].resource.owner` (the parent's capabilities name several owners: say which).
absl::Status BindChildOwners(const protocol::v1::CapabilityGrant& parent,
                             std::vector<protocol::v1::Capability>& child, absl::string_view path);

// Whether any capability of `grant` omits its owner (reaches whichever owner a turn names):
// grants marked anyOwner, and grants issued before owner binding.
bool ReachesAnyOwner(const protocol::v1::CapabilityGrant& grant);

}  // namespace sharedos::grantstore::core

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_OWNER_BINDING_H_
