#include "envelope_svc/tools/requirement.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "capability/address.h"
#include "capability/matching.h"
#include "capability/reason_codes.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"
#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::validation::FieldPath;
using ::sharedos::common::validation::InvalidArgumentAt;
using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::CapabilityRequirement;

absl::Status ResolutionFailed(absl::string_view why) {
  return ToolRefusal(capability::kToolRequirementResolutionFailed, why);
}

absl::Status RequireDeclaredProperty(const nlohmann::json& input_schema,
                                     const std::string& argument, absl::string_view path) {
  if (argument.empty()) return InvalidArgumentAt(path, "empty");
  auto properties = input_schema.find("properties");
  if (properties == input_schema.end() || !properties->is_object() ||
      !properties->contains(argument)) {
    return InvalidArgumentAt(path, absl::StrCat("argument \"", argument,
                                                "\" is not declared in input_schema.properties"));
  }
  return absl::OkStatus();
}

// Appends the segments of a path argument to `out`.
absl::Status AppendSegments(const nlohmann::json& value,
                            google::protobuf::RepeatedPtrField<std::string>* out) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.empty()) return absl::OkStatus();
    for (absl::string_view segment : absl::StrSplit(text, '/')) out->Add(std::string(segment));
    return absl::OkStatus();
  }
  if (value.is_array()) {
    for (const nlohmann::json& segment : value) {
      if (!segment.is_string()) return ResolutionFailed("path argument: a segment is not a string");
      out->Add(segment.get<std::string>());
    }
    return absl::OkStatus();
  }
  return ResolutionFailed("path argument: neither a string nor an array");
}

}  // namespace

// {"kind":"human","userId":…} | agent/agentId | group/conversationId | service/serviceId.
absl::StatusOr<Address> ParseAddressArgument(const nlohmann::json& value) {
  if (!value.is_object()) return ResolutionFailed("owner argument: not an object");
  auto kind = value.find("kind");
  if (kind == value.end() || !kind->is_string()) {
    return ResolutionFailed("owner argument: kind missing");
  }
  const std::string& kind_name = kind->get_ref<const std::string&>();
  const char* id_key = nullptr;
  if (kind_name == "human") id_key = "userId";
  if (kind_name == "agent") id_key = "agentId";
  if (kind_name == "group") id_key = "conversationId";
  if (kind_name == "service") id_key = "serviceId";
  if (id_key == nullptr) return ResolutionFailed("owner argument: unknown kind");
  auto id = value.find(id_key);
  if (id == value.end() || !id->is_string() || value.size() != 2) {
    return ResolutionFailed(absl::StrCat("owner argument: expected exactly kind and ", id_key));
  }
  Address owner;
  const std::string& id_text = id->get_ref<const std::string&>();
  if (kind_name == "human") owner.set_human_user_id(id_text);
  if (kind_name == "agent") owner.set_agent_id(id_text);
  if (kind_name == "group") owner.set_group_conversation_id(id_text);
  if (kind_name == "service") owner.set_service_id(id_text);
  return owner;
}

absl::Status ValidateRequirementRule(const v1::RequirementRule& rule,
                                     const nlohmann::json& input_schema, absl::string_view path) {
  switch (rule.kind_case()) {
    case v1::RequirementRule::kCeiling:
      return absl::OkStatus();
    case v1::RequirementRule::kFixed: {
      CapabilityRequirement fixed = rule.fixed();
      return common::validation::ValidateCapabilityRequirement(&fixed, FieldPath(path, "fixed"));
    }
    case v1::RequirementRule::kPathFromArguments: {
      const v1::PathFromArguments& from = rule.path_from_arguments();
      const std::string from_path = FieldPath(path, "path_from_arguments");
      RETURN_IF_ERROR(RequireDeclaredProperty(input_schema, from.path_argument(),
                                              FieldPath(from_path, "path_argument")));
      if (from.mode() != v1::PATH_MODE_APPEND && from.mode() != v1::PATH_MODE_REPLACE) {
        return InvalidArgumentAt(FieldPath(from_path, "mode"), "unspecified");
      }
      if (!from.owner_argument().empty()) {
        RETURN_IF_ERROR(RequireDeclaredProperty(input_schema, from.owner_argument(),
                                                FieldPath(from_path, "owner_argument")));
        if (from.owner_argument() == from.path_argument()) {
          return InvalidArgumentAt(FieldPath(from_path, "owner_argument"), "same as path_argument");
        }
      }
      return absl::OkStatus();
    }
    case v1::RequirementRule::kAddressFromArguments:
      return RequireDeclaredProperty(
          input_schema, rule.address_from_arguments().address_argument(),
          FieldPath(FieldPath(path, "address_from_arguments"), "address_argument"));
    case v1::RequirementRule::KIND_NOT_SET:
      break;
  }
  return InvalidArgumentAt(path, "required");
}

absl::StatusOr<CapabilityRequirement> ResolveRequirement(const v1::RequirementRule& rule,
                                                         const CapabilityRequirement& ceiling,
                                                         const nlohmann::json& arguments) {
  CapabilityRequirement requirement;
  switch (rule.kind_case()) {
    case v1::RequirementRule::kCeiling:
      requirement = ceiling;
      break;
    case v1::RequirementRule::kFixed:
      requirement = rule.fixed();
      break;
    case v1::RequirementRule::kPathFromArguments: {
      const v1::PathFromArguments& from = rule.path_from_arguments();
      if (!arguments.is_object()) return ResolutionFailed("arguments: not an object");
      requirement.set_action(ceiling.action());
      requirement.mutable_resource()->set_namespace_(ceiling.resource().namespace_());
      if (from.mode() == v1::PATH_MODE_APPEND) {
        *requirement.mutable_resource()->mutable_path() = ceiling.resource().path();
      } else if (from.mode() != v1::PATH_MODE_REPLACE) {
        return ResolutionFailed("rule: mode unspecified");
      }
      auto path_value = arguments.find(from.path_argument());
      if (path_value == arguments.end()) {
        if (!from.path_optional()) return ResolutionFailed("path argument: missing");
      } else {
        RETURN_IF_ERROR(
            AppendSegments(*path_value, requirement.mutable_resource()->mutable_path()));
      }
      if (!from.owner_argument().empty()) {
        auto owner_value = arguments.find(from.owner_argument());
        if (owner_value != arguments.end()) {
          ASSIGN_OR_RETURN(*requirement.mutable_resource()->mutable_owner(),
                           ParseAddressArgument(*owner_value));
        }
      }
      break;
    }
    case v1::RequirementRule::kAddressFromArguments: {
      if (!arguments.is_object()) return ResolutionFailed("arguments: not an object");
      auto value = arguments.find(rule.address_from_arguments().address_argument());
      if (value == arguments.end()) return ResolutionFailed("address argument: missing");
      ASSIGN_OR_RETURN(const Address address, ParseAddressArgument(*value));
      requirement.set_action(ceiling.action());
      requirement.mutable_resource()->set_namespace_(ceiling.resource().namespace_());
      *requirement.mutable_resource()->mutable_path() = ceiling.resource().path();
      for (std::string& segment : capability::AddressPath(address)) {
        requirement.mutable_resource()->add_path(std::move(segment));
      }
      break;
    }
    case v1::RequirementRule::KIND_NOT_SET:
      return ResolutionFailed("rule: no kind");
  }
  absl::Status valid =
      common::validation::ValidateCapabilityRequirement(&requirement, "requirement");
  if (!valid.ok()) return ResolutionFailed(valid.message());
  return requirement;
}

bool WithinCeiling(const CapabilityRequirement& requirement, const CapabilityRequirement& ceiling,
                   const Address& context_owner) {
  return requirement.action() == ceiling.action() &&
         requirement.resource().namespace_() == ceiling.resource().namespace_() &&
         capability::AddressEquals(
             capability::OwnerOrDefault(requirement.resource(), context_owner),
             capability::OwnerOrDefault(ceiling.resource(), context_owner)) &&
         capability::IsSegmentPrefix(ceiling.resource().path(), requirement.resource().path());
}

CapabilityRequirement WithDefaultOwner(CapabilityRequirement requirement,
                                       const Address& context_owner) {
  if (!requirement.resource().has_owner()) {
    *requirement.mutable_resource()->mutable_owner() = context_owner;
  }
  return requirement;
}

}  // namespace sharedos::envelope::tools
