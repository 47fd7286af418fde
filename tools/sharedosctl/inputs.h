// What an operator hands sharedosctl besides flags: token files and message files (JSON or
// protobuf text format). Pure but for reading the files named.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_INPUTS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_INPUTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace sharedos::sharedosctl {

// The first line of the token file, whitespace trimmed. Errors: FAILED_PRECONDITION (unreadable
// or empty; the message names the path, never the content).
absl::StatusOr<std::string> ReadToken(const std::string& path);

// Parses a message from text: JSON when `path` ends in ".json" or the text starts with '{',
// protobuf text format otherwise. Unknown fields are refused. Errors: INVALID_ARGUMENT.
absl::Status ParseMessageText(const std::string& path, const std::string& text,
                              google::protobuf::Message* message);

// ParseMessageText of the file at `path` (a command's --file). Errors: INVALID_ARGUMENT
// (unreadable, or as ParseMessageText).
absl::Status LoadMessageFile(const std::string& path, google::protobuf::Message* message);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_INPUTS_H_
