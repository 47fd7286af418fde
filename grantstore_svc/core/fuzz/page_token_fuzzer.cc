// Fuzzes the grant store's List page tokens (page_token.h). Input byte 0 picks the list kind and
// whether the rest is the token as sent (even) or the text inside its base64url (odd, so the
// split and the checks behind the decoding are reached). Properties: nothing crashes; a refusal
// is INVALID_ARGUMENT naming page_token; a token encoded for a position decodes to exactly that
// position, and only for the kind and filter it was issued for.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "common/crypto/base64url.h"
#include "grantstore_svc/core/page_token.h"
#include "sharedos/protocol/v1/context.pb.h"

namespace {

using ::sharedos::grantstore::core::DecodePageToken;
using ::sharedos::grantstore::core::EncodePageToken;

void CheckRefusal(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) std::abort();
  if (!absl::StrContains(status.message(), "page_token")) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const absl::string_view kind = (data[0] & 2) ? "escalations" : "grants";
  const absl::string_view other_kind = (data[0] & 2) ? "grants" : "escalations";
  absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  sharedos::protocol::v1::AccessContext filter;
  filter.set_namespace_id("world-1");
  sharedos::protocol::v1::AccessContext other_filter;
  other_filter.set_namespace_id("world-2");

  const std::string token =
      (data[0] & 1) ? sharedos::common::Base64UrlEncode(rest) : std::string(rest);
  absl::StatusOr<std::string> position = DecodePageToken(token, kind, filter);
  if (!position.ok()) CheckRefusal(position.status());

  // Any bytes as a position round-trip, bound to their kind and filter.
  const std::string issued = EncodePageToken(kind, filter, rest);
  absl::StatusOr<std::string> back = DecodePageToken(issued, kind, filter);
  if (!back.ok() || *back != rest) std::abort();
  absl::StatusOr<std::string> elsewhere = DecodePageToken(issued, other_kind, filter);
  if (elsewhere.ok()) std::abort();
  CheckRefusal(elsewhere.status());
  absl::StatusOr<std::string> refiltered = DecodePageToken(issued, kind, other_filter);
  if (refiltered.ok()) std::abort();
  CheckRefusal(refiltered.status());
  return 0;
}
