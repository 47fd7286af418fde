// Fuzzes credential files (auth.h Authenticator::FromJson) and, for files that load, the
// Authorization header check. Properties: nothing crashes; a refused file is INVALID_ARGUMENT;
// a refused header is UNAUTHENTICATED with the one fixed message whatever was sent.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/server/auth.h"

namespace {

using ::sharedos::common::server::Authenticator;
using ::sharedos::common::server::Principal;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view input(reinterpret_cast<const char*>(data), size);
  // The file, then (after a NUL, when there is one) a header presented against it.
  const size_t nul = input.find('\0');
  absl::string_view file = input.substr(0, nul);
  absl::string_view header = nul == absl::string_view::npos ? "" : input.substr(nul + 1);
  absl::StatusOr<std::unique_ptr<Authenticator>> auth = Authenticator::FromJson(file);
  if (!auth.ok()) {
    if (auth.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  absl::StatusOr<Principal> principal = (*auth)->Authenticate(header);
  static std::string* refusal = nullptr;
  if (!principal.ok()) {
    if (principal.status().code() != absl::StatusCode::kUnauthenticated) std::abort();
    // One message for every refusal, so a caller learns nothing about which tokens exist.
    if (refusal == nullptr) refusal = new std::string(principal.status().message());
    if (principal.status().message() != *refusal) std::abort();
  }
  return 0;
}
