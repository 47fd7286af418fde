#include "capability/address.h"

#include "absl/strings/str_cat.h"

namespace sharedos::capability {

using ::sharedos::protocol::v1::Address;

bool AddressEquals(const Address& a, const Address& b) {
  return a.kind_case() == b.kind_case() && AddressId(a) == AddressId(b);
}

absl::string_view AddressKind(const Address& address) {
  switch (address.kind_case()) {
    case Address::kHumanUserId:
      return "human";
    case Address::kAgentId:
      return "agent";
    case Address::kGroupConversationId:
      return "group";
    case Address::kServiceId:
      return "service";
    case Address::KIND_NOT_SET:
      break;
  }
  return "";
}

absl::string_view AddressId(const Address& address) {
  switch (address.kind_case()) {
    case Address::kHumanUserId:
      return address.human_user_id();
    case Address::kAgentId:
      return address.agent_id();
    case Address::kGroupConversationId:
      return address.group_conversation_id();
    case Address::kServiceId:
      return address.service_id();
    case Address::KIND_NOT_SET:
      break;
  }
  return "";
}

std::string AddressKey(const Address& address) {
  if (address.kind_case() == Address::KIND_NOT_SET) return "";
  return absl::StrCat(AddressKind(address), ":", AddressId(address));
}

std::optional<Address> AddressFromKey(absl::string_view key) {
  const size_t colon = key.find(':');
  if (colon == absl::string_view::npos || colon + 1 == key.size()) return std::nullopt;
  const absl::string_view kind = key.substr(0, colon);
  const std::string id(key.substr(colon + 1));
  Address address;
  if (kind == "human") {
    address.set_human_user_id(id);
  } else if (kind == "agent") {
    address.set_agent_id(id);
  } else if (kind == "group") {
    address.set_group_conversation_id(id);
  } else if (kind == "service") {
    address.set_service_id(id);
  } else {
    return std::nullopt;
  }
  return address;
}

std::vector<std::string> AddressPath(const Address& address) {
  return {std::string(AddressKind(address)), std::string(AddressId(address))};
}

const Address& OwnerOrDefault(const protocol::v1::ResourceRef& resource,
                              const Address& context_owner) {
  return resource.has_owner() ? resource.owner() : context_owner;
}

}  // namespace sharedos::capability
