#include "grantstore_svc/core/page_token.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "capability/errors.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "common/proto/deterministic.h"

namespace sharedos::grantstore::core {
namespace {

constexpr char kVersion[] = "v1";

// The first 16 hex digits of SHA-256 over the filter's deterministic serialisation.
std::string FilterDigest(const google::protobuf::Message& filter) {
  return common::Sha256Hex(common::DeterministicBytes(filter)).substr(0, 16);
}

}  // namespace

std::string EncodePageToken(absl::string_view kind, const google::protobuf::Message& filter,
                            absl::string_view position) {
  return common::Base64UrlEncode(
      absl::StrCat(kVersion, "\n", kind, "\n", FilterDigest(filter), "\n", position));
}

absl::StatusOr<std::string> DecodePageToken(absl::string_view token, absl::string_view kind,
                                            const google::protobuf::Message& filter) {
  absl::StatusOr<std::string> decoded = common::Base64UrlDecode(token);
  if (!decoded.ok()) return capability::errors::InvalidField("page_token", "malformed");
  std::vector<std::string> parts = absl::StrSplit(*decoded, absl::MaxSplits('\n', 3));
  if (parts.size() != 4 || parts[0] != kVersion) {
    return capability::errors::InvalidField("page_token", "malformed");
  }
  if (parts[1] != kind || parts[2] != FilterDigest(filter)) {
    return capability::errors::InvalidField("page_token", "not issued for this filter");
  }
  return parts[3];
}

}  // namespace sharedos::grantstore::core
