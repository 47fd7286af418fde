// The console's "why was this refused?" page (/explain?id=…): the form asking for a record's
// sequence, an event id or an escalation id, and the explanation sharedosctl's `explain` gives
// (grantstore_svc/client/explain.h), read with the signed-in credential. Every value is escaped
// twice over: control characters made visible (common/text/terminal_safe.h), then HTML. Pure.
#ifndef SHAREDOS_CONSOLE_EXPLAIN_PAGE_H_
#define SHAREDOS_CONSOLE_EXPLAIN_PAGE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "grantstore_svc/client/explain.h"

namespace sharedos::console {

// The longest id the page accepts (longer: 400 naming "id").
inline constexpr size_t kMaxExplainIdBytes = 256;

// The form with `id` filled in and, when `explanation` is not null, the explanation: its title,
// its facts as a definition list, its next steps as a list.
std::string ExplainBody(absl::string_view id, const grantstore::client::Explanation* explanation);

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_EXPLAIN_PAGE_H_
