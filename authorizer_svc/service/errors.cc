#include "authorizer_svc/service/errors.h"

#include "absl/strings/str_cat.h"

namespace sharedos::authorizer::service::errors {

absl::Status LeaseMalformed(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("lease_id: malformed (", why, ")"));
}

absl::Status LeaseTampered() {
  return absl::InvalidArgumentError("lease_id: integrity check failed");
}

absl::Status LeaseExpired() { return absl::NotFoundError("lease expired"); }

absl::Status LeaseClosed() { return absl::NotFoundError("lease closed"); }

absl::Status NoSubject() {
  return absl::InvalidArgumentError("subject: neither lease_id nor context is set");
}

absl::Status BadTimeout(absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("timeout: ", problem));
}

absl::Status BadTools(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

absl::Status BadAsk(absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("requested_authority_ask: ", problem));
}

absl::Status EscalationNotStored(absl::StatusCode store_code) {
  return absl::UnavailableError(absl::StrCat("escalation not stored: grantstore_svc answered ",
                                             absl::StatusCodeToString(store_code)));
}

}  // namespace sharedos::authorizer::service::errors
