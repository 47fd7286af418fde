// Opaque, stable page tokens for the List RPCs. A token names the position after which the next
// page starts and is bound to the request's filter: a token is only accepted back with the same
// filter (and kind of list). Positions are keys, never offsets, so pages stay stable while
// rows are added. Not a security boundary (tokens are not signed; they only name positions in
// data the caller may list anyway). Stateless; thread-safe.

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_PAGE_TOKEN_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_PAGE_TOKEN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace sharedos::grantstore::core {

// A token for resuming a `kind` list ("grants", "escalations") filtered by `filter` after
// `position`.
std::string EncodePageToken(absl::string_view kind, const google::protobuf::Message& filter,
                            absl::string_view position);

// The position of `token`. Errors: INVALID_ARGUMENT "page_token: ..." when the token is
// malformed or was issued for another kind of list or another filter.
absl::StatusOr<std::string> DecodePageToken(absl::string_view token, absl::string_view kind,
                                            const google::protobuf::Message& filter);

}  // namespace sharedos::grantstore::core

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_PAGE_TOKEN_H_
