#include "grantstore_svc/core/page_token.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "capability/errors.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace sharedos::grantstore::core {
namespace {

constexpr char kVersion[] = "v1";

// The first 16 hex digits of SHA-256 over the filter's deterministic serialisation.
std::string FilterDigest(const google::protobuf::Message& filter) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    filter.SerializeToCodedStream(&coded);
  }
  return common::Sha256Hex(bytes).substr(0, 16);
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
