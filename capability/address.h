// Address helpers (semantics §1.2): equality, kind names, address keys both ways and addressPath.
// Stateless; thread-safe.

#ifndef SHAREDOS_CAPABILITY_ADDRESS_H_
#define SHAREDOS_CAPABILITY_ADDRESS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sharedos/protocol/v1/common.pb.h"

namespace sharedos::capability {

// Equality of canonical JSON: same kind and same id. Two addresses with no kind are equal.
bool AddressEquals(const protocol::v1::Address& a, const protocol::v1::Address& b);

// "human" | "agent" | "group" | "service"; empty when no kind is set.
absl::string_view AddressKind(const protocol::v1::Address& address);

// The id of whichever kind is set; empty when none is.
absl::string_view AddressId(const protocol::v1::Address& address);

// addressPath(address).join(":") = "<kind>:<id>", e.g. "agent:alice-assistant" (the execution
// token's actor, audit's actor index, credential scopes); empty when no kind is set.
std::string AddressKey(const protocol::v1::Address& address);

// The inverse of AddressKey: "<kind>:<id>" with kind human, agent, group or service and a
// non-empty id → the Address; nullopt for anything else (an unknown kind is never guessed).
std::optional<protocol::v1::Address> AddressFromKey(absl::string_view key);

// addressPath(address) = [kind, id], e.g. ["agent", "alice-assistant"].
std::vector<std::string> AddressPath(const protocol::v1::Address& address);

// The resource's owner, or `context_owner` when the resource names none (§2.3 rule 3).
const protocol::v1::Address& OwnerOrDefault(const protocol::v1::ResourceRef& resource,
                                            const protocol::v1::Address& context_owner);

}  // namespace sharedos::capability

#endif  // SHAREDOS_CAPABILITY_ADDRESS_H_
