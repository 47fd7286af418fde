// The reviewer console's pages: plain HTML (labels on every control, a skip link, one <main>,
// headings in order) styled by the one stylesheet the console serves (/console.css), with no
// script and no external reference. Every value from a request or a record is escaped. Pure.
#ifndef SHAREDOS_CONSOLE_PAGES_H_
#define SHAREDOS_CONSOLE_PAGES_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "console/session.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"

namespace sharedos::console {

// The stylesheet served at /console.css.
absl::string_view Stylesheet();

// A whole document: the navigation (queue, record, sign-out with the session's CSRF token) when
// `session` is not null, then `body` inside <main>.
std::string Page(absl::string_view title, const Session* session, absl::string_view body);

// The sign-in form, double-submitted with `signin_token` (also in the sos_signin cookie);
// `error` (plain text) shown above it when not empty. With `oidc` (an identity provider is
// configured), first a link that signs in at the provider (/oidc/start); the credential form stays
// below it for operators and break-glass reviewers.
std::string SignInPage(absl::string_view signin_token, absl::string_view error, bool oidc = false);

// A sign-in at the identity provider that failed (`message`, plain text): no session, and a link
// to start again.
std::string SignInFailedPage(absl::string_view message);

// Signed in at the identity provider: the page that takes the browser on to the queue (a meta
// refresh, a same-site navigation, so the new SameSite=Strict session cookie is sent with it),
// with a link for a browser that does not refresh.
std::string SignedInPage();

// Signed out here: the page that takes the browser on to the provider's end-session URL
// `end_session_url` (a meta refresh and a link).
std::string SignedOutPage(absl::string_view end_session_url);

// One escalation as a sentence: "agent:agent-assistant needs files:Workspace/summary.txt@
// human:user-alice [create], for purpose …, asked in turn exec-… because …". Plain text.
std::string EscalationSentence(const grantstore::v1::EscalationRecord& record);

// The pending escalations of `namespace_id` the session may decide (newest first), each with
// links to its turn's denial and records (/turn?execution=…), and its approve (narrowing) and
// deny forms.
std::string QueueBody(const Session& session, absl::string_view namespace_id,
                      const std::vector<grantstore::v1::EscalationRecord>& pending);

// What a decision did: the escalation's status and, on approval, the issued grant.
std::string DecidedBody(const grantstore::v1::ResolveEscalationResponse& response);

// The record view: the filter form (`fields` as given), the chain's verification (absent for a
// credential that is not the operator's: the chain spans every namespace), then the records in
// order under sharedosctl's columns (SOURCE, REASON, CAUSE). `more`: a later page exists.
std::string RecordBody(const std::map<std::string, std::string>& fields,
                       const std::optional<audit::v1::VerifyResponse>& verify,
                       const std::vector<audit::v1::AuditRecord>& records, bool more);

// A refusal or failure, `message` in plain text.
std::string MessageBody(absl::string_view heading, absl::string_view message);

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_PAGES_H_
