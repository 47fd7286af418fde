// Portable tool names (semantics §10.4 portableToolName): a catalogue name with every dot turned
// into an underscore, the form agent CLIs accept (^[a-zA-Z0-9_-]+$). A CLI that meets two tools
// with one portable form drops or replaces one without a word (Claude Code, opencode), so an MCP
// turn whose tools would share one is refused before it opens (issue 35). Stateless; thread-safe.
#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_PORTABLE_NAMES_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_PORTABLE_NAMES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace sharedos::envelope::tools {

// Dots → underscores.
std::string PortableToolName(absl::string_view name);

// OK when no two distinct `names` share a portable form. Errors: INVALID_ARGUMENT naming `field`,
// both tools and the form they share.
absl::Status CheckPortableNames(const google::protobuf::RepeatedPtrField<std::string>& names,
                                absl::string_view field);

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_PORTABLE_NAMES_H_
