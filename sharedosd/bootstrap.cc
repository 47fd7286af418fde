#include "sharedosd/bootstrap.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/base64url.h"
#include "common/crypto/random.h"
#include "common/server/auth.h"

namespace sharedos::sharedosd {
namespace {

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Writes a new file readable by its owner only; refuses to replace one.
absl::Status WritePrivateFile(const std::string& path, const std::string& content) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n <= 0) {
      close(fd);
      return absl::FailedPreconditionError(absl::StrCat("cannot write ", path));
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!synced) return absl::FailedPreconditionError(absl::StrCat("cannot sync ", path));
  return absl::OkStatus();
}

absl::StatusOr<std::string> NewToken() {
  absl::StatusOr<std::string> bytes = common::SecureRandomBytes(32);
  if (!bytes.ok()) return bytes.status();
  return common::Base64UrlEncode(*bytes);
}

}  // namespace

absl::StatusOr<DataDir> PrepareDataDir(const std::string& root) {
  if (root.empty()) return absl::FailedPreconditionError("data directory: empty path");
  if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create data directory ", root, ": ", std::strerror(errno)));
  }
  // A directory the store cannot write would fail on its first commit; say so now, by name.
  if (access(root.c_str(), W_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("data directory ", root, " is not writable: ", std::strerror(errno)));
  }
  DataDir dir{root};
  if (mkdir(dir.files_root().c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", dir.files_root(), ": ", std::strerror(errno)));
  }
  // service.token (minted by earlier versions for sharedosd's own services, which now call each
  // other in process without one) is neither needed nor minted; an old one authenticates as
  // service:sharedosd, which the access table admits to nothing.
  const std::string files[] = {dir.admin_token(), dir.host_token(), dir.credentials()};
  for (const std::string& secret_file : {dir.lease_secret(), dir.mcp_secret()}) {
    if (Exists(secret_file)) continue;
    absl::StatusOr<std::string> secret = NewToken();
    if (!secret.ok()) return absl::FailedPreconditionError("cannot mint " + secret_file);
    absl::Status written = WritePrivateFile(secret_file, *secret);
    if (!written.ok()) return written;
  }
  int present = 0;
  for (const std::string& file : files) present += Exists(file) ? 1 : 0;
  if (present == 3) return dir;
  if (present != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "data directory ", root,
        " holds only some of admin.token, host.token and credentials.json; restore them or "
        "start from an empty directory"));
  }
  absl::StatusOr<std::string> admin = NewToken();
  absl::StatusOr<std::string> host = NewToken();
  if (!admin.ok() || !host.ok()) {
    return absl::FailedPreconditionError("cannot mint tokens: no secure randomness");
  }
  const std::string credentials = absl::StrCat(
      R"({"credentials": [
  {"name": "operator", "role": "admin", "token_sha256": ")",
      common::server::TokenDigestHex(*admin), R"("},
  {"name": "host", "role": "host", "token_sha256": ")",
      common::server::TokenDigestHex(*host), R"(",
   "scope": {"namespaces": ["world-demo"], "owners": ["*"]}}]}
)");
  // Credentials last: its presence marks a complete directory.
  for (const auto& [path, content] :
       {std::pair<std::string, std::string>{dir.admin_token(), *admin + "\n"},
        {dir.host_token(), *host + "\n"},
        {dir.credentials(), credentials}}) {
    absl::Status written = WritePrivateFile(path, content);
    if (!written.ok()) return written;
  }
  return dir;
}

}  // namespace sharedos::sharedosd
