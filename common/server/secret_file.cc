#include "common/server/secret_file.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace sharedos::common::server {

absl::StatusOr<std::string> ReadSecretFile(const std::string& path, SecretPart part,
                                           absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, what.empty() ? "" : ": ", "cannot read ", path));
  }
  std::ostringstream content;
  content << in.rdbuf();  // an empty file sets failbit on `content` only: its secret is ""
  std::string text = content.str();
  switch (part) {
    case SecretPart::kFirstLine:
      return std::string(absl::StripAsciiWhitespace(text.substr(0, text.find('\n'))));
    case SecretPart::kWholeFileTrimmed:
      return std::string(absl::StripAsciiWhitespace(text));
    case SecretPart::kWholeFile:
      break;
  }
  return text;
}

absl::StatusOr<std::string> ReadFlagSecret(absl::string_view flag, const std::string& path,
                                           SecretPart part) {
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": required"));
  absl::StatusOr<std::string> secret = ReadSecretFile(path, part);
  if (!secret.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("--", flag, ": cannot be read"));
  }
  return secret;
}

absl::StatusOr<std::string> ReadFlagToken(absl::string_view flag, const std::string& path) {
  absl::StatusOr<std::string> token = ReadFlagSecret(flag, path, SecretPart::kFirstLine);
  if (token.ok() && token->empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": empty"));
  }
  return token;
}

}  // namespace sharedos::common::server
