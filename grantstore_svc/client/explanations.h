// What each code of the reason-code catalogue (capability/reason_codes.h) means to an operator
// and what to do about it: the text `sharedosctl explain` and the console's explain page show.
// One entry per code — decision, tool-call, message, resource, turn and infrastructure codes,
// the causes behind tool_unavailable, why a grant was rejected, the missing dependency, the
// delegation-chain codes, derivation refusals and authority-resolution codes — checked against
// the catalogue by explanations_test, which walks it. Pure; thread-safe.
#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_EXPLANATIONS_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_EXPLANATIONS_H_

#include "absl/strings/string_view.h"

namespace sharedos::grantstore::client {

struct CodeExplanation {
  absl::string_view code;
  // What happened, in a sentence.
  absl::string_view meaning;
  // What an operator does next (who issues what, which setting, which dependency).
  absl::string_view next_step;
};

// The explanation of `code`, or null when the catalogue has none.
const CodeExplanation* ExplainCode(absl::string_view code);

// Why one grant did not serve a request (the decision record's rejectedGrants[].reason:
// issuer, subject, namespace, window, purpose, verifier, capability, delegation, exhausted),
// or null.
const CodeExplanation* ExplainRejection(absl::string_view reason);

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_EXPLANATIONS_H_
