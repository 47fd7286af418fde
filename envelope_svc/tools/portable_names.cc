#include "envelope_svc/tools/portable_names.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace sharedos::envelope::tools {

std::string PortableToolName(absl::string_view name) {
  return absl::StrReplaceAll(name, {{".", "_"}});
}

absl::Status CheckPortableNames(const google::protobuf::RepeatedPtrField<std::string>& names,
                                absl::string_view field) {
  absl::flat_hash_map<std::string, const std::string*> seen;
  for (const std::string& name : names) {
    auto [it, inserted] = seen.emplace(PortableToolName(name), &name);
    if (!inserted && *it->second != name) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ": \"", *it->second, "\" and \"", name, "\" share the portable name \"", it->first,
          "\"; an agent CLI would reach only one of them (name the tools apart)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace sharedos::envelope::tools
