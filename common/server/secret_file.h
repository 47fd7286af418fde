// The one reader of the files a service is handed secrets in: bearer tokens (the first line),
// key material and PEM files (the whole file). Stateless; thread-safe.

#ifndef SHAREDOS_COMMON_SERVER_SECRET_FILE_H_
#define SHAREDOS_COMMON_SERVER_SECRET_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::server {

// Which part of a file is the secret.
enum class SecretPart {
  // The first line, whitespace trimmed: a bearer token as `sharedosctl` and sharedosd write it.
  kFirstLine,
  // Every byte, as is: key material (lease secrets, PEM files, credential files).
  kWholeFile,
  // Every byte, surrounding whitespace trimmed: key material an operator may have edited.
  kWholeFileTrimmed,
};

// The secret in the file at `path`; `what` names the file in errors (a flag, "credentials file").
// Errors: FAILED_PRECONDITION "<what>: cannot read <path>" (just "cannot read <path>" when `what`
// is empty) when the file is missing or unreadable; a message names the path, never the content.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path, SecretPart part,
                                           absl::string_view what = "");

// The secret in the file flag `--<flag>` names, for a main. Errors: INVALID_ARGUMENT
// "--<flag>: required" (no path given); FAILED_PRECONDITION "--<flag>: cannot be read".
absl::StatusOr<std::string> ReadFlagSecret(absl::string_view flag, const std::string& path,
                                           SecretPart part);

// The bearer token (first line, trimmed) in the file `--<flag>` names: ReadFlagSecret, and
// INVALID_ARGUMENT "--<flag>: empty" when there is none.
absl::StatusOr<std::string> ReadFlagToken(absl::string_view flag, const std::string& path);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_SECRET_FILE_H_
