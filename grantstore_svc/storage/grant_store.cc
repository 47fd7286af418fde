#include "grantstore_svc/storage/grant_store.h"

#include "absl/strings/str_cat.h"

namespace sharedos::grantstore::storage {

std::string AddressKey(const protocol::v1::Address& address) {
  switch (address.kind_case()) {
    case protocol::v1::Address::kHumanUserId:
      return absl::StrCat("human:", address.human_user_id());
    case protocol::v1::Address::kAgentId:
      return absl::StrCat("agent:", address.agent_id());
    case protocol::v1::Address::kGroupConversationId:
      return absl::StrCat("group:", address.group_conversation_id());
    case protocol::v1::Address::kServiceId:
      return absl::StrCat("service:", address.service_id());
    case protocol::v1::Address::KIND_NOT_SET:
      break;
  }
  return "";
}

}  // namespace sharedos::grantstore::storage
