#include "console/pages.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/server/auth.h"
#include "common/text/url.h"
#include "console/http.h"
#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_render.h"
#include "grantstore_svc/core/request_validation.h"

namespace sharedos::console {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
using ::sharedos::grantstore::client::FormatAddress;
using ::sharedos::grantstore::client::FormatCapability;
using ::sharedos::grantstore::client::FormatConstraints;

constexpr absl::string_view kStylesheet = R"css(
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5360; --line: #c9d1d9;
  --accent: #0b5cad; --deny: #a4161a; --ok: #1a6b33; --bg: #ffffff; --panel: #f4f6f8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--ink); background: var(--bg); }
a { color: var(--accent); }
a:focus, button:focus, input:focus, select:focus { outline: 3px solid #f0b400; outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .75rem 1.5rem;
  background: #102a43; color: #fff; }
header a { color: #fff; }
header .who { margin-left: auto; font-size: .9rem; }
header form { display: inline; }
main { padding: 1.5rem; max-width: 80rem; }
h1 { font-size: 1.5rem; margin-top: 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin-bottom: 1rem;
  background: var(--panel); }
.sentence { font-size: 1.05rem; margin: 0 0 .5rem; }
.meta { color: var(--muted); font-size: .9rem; }
form.decide { display: flex; flex-wrap: wrap; gap: .75rem; align-items: end; margin-top: .75rem; }
label { display: flex; flex-direction: column; font-size: .9rem; color: var(--muted); }
input, select { font: inherit; padding: .3rem .4rem; border: 1px solid #6b7785; border-radius: 4px;
  color: var(--ink); background: #fff; }
button, a.button { font: inherit; padding: .35rem .9rem; border-radius: 4px;
  border: 1px solid transparent; cursor: pointer; color: #fff; background: var(--accent); }
a.button { display: inline-block; text-decoration: none; }
button.deny { background: var(--deny); }
button.plain { background: transparent; border-color: #fff; }
.status-ok { color: var(--ok); font-weight: 600; }
.status-bad { color: var(--deny); font-weight: 600; }
.note { white-space: pre-wrap; border-left: 4px solid var(--accent); margin: 0 0 1rem;
  padding: .25rem 1rem; background: var(--panel); }
.error { border-left: 4px solid var(--deny); padding: .5rem 1rem; background: #fdecea; }
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th, td { border: 1px solid var(--line); padding: .25rem .4rem; text-align: left; vertical-align: top; }
th { background: #e6ebf0; }
tr.denied td { background: #fdf1f0; }
pre { background: var(--panel); border: 1px solid var(--line); padding: .75rem; overflow-x: auto; }
)css";

std::string Field(absl::string_view name, absl::string_view label, absl::string_view value,
                  absl::string_view id, absl::string_view attributes = "") {
  return absl::StrCat("<label for=\"", id, "\">", label, " <input id=\"", id, "\" name=\"", name,
                      "\" value=\"", HtmlEscape(value), "\" ", attributes, "></label>");
}

std::string Hidden(absl::string_view name, absl::string_view value) {
  return absl::StrCat("<input type=\"hidden\" name=\"", name, "\" value=\"", HtmlEscape(value),
                      "\">");
}

std::string Requested(const gs::EscalationRecord& record) {
  const auto& request = record.escalation().requested_authority();
  std::vector<std::string> capabilities;
  for (const auto& capability : request.capabilities()) {
    capabilities.push_back(FormatCapability(capability));
  }
  return capabilities.empty() ? "nothing named" : absl::StrJoin(capabilities, "; ");
}

// An admin decides only explicitly in the reviewer's stead (recorded); a reviewer as itself.
std::string OnBehalf(const Session& session, absl::string_view form, absl::string_view suffix) {
  if (session.principal.role != common::server::Role::kAdmin) return "";
  const std::string id = absl::StrCat("behalf-", form, "-", suffix);
  return absl::StrCat("<label for=\"", id, "\"><input id=\"", id,
                      "\" type=\"checkbox\" name=\"on_behalf\" value=\"true\" required> On the "
                      "reviewer's behalf (recorded)</label>");
}

// The optional note of a decision (kept on the escalation, never audited): the store's bound.
std::string NoteField(absl::string_view form, absl::string_view suffix) {
  const std::string id = absl::StrCat("note-", form, "-", suffix);
  return absl::StrCat("<label for=\"", id, "\">Note (optional) <textarea id=\"", id,
                      "\" name=\"note\" rows=\"3\" maxlength=\"",
                      grantstore::core::kMaxResolutionNoteLength, "\"></textarea></label>");
}

// What an approval would issue, before the reviewer decides (ADR 0014, T1): whose authority it
// extends, to whom, on whose resources, and for how long when nothing is narrowed.
std::string WouldIssue(const gs::EscalationRecord& record) {
  const auto& request = record.escalation().requested_authority();
  const std::string reviewer = FormatAddress(record.escalation().reviewer());
  const std::string expiry =
      request.constraints().has_expires_at()
          ? absl::StrCat("until ",
                         grantstore::client::FormatTimestamp(request.constraints().expires_at()))
          : absl::StrCat("for ", absl::FormatDuration(grantstore::core::kDefaultApprovalTtl),
                         " after you approve");
  return absl::StrCat(
      "<p class=\"would-issue\">Approving issues a grant to ",
      HtmlEscape(request.has_requester() ? FormatAddress(request.requester()) : "the agent"),
      " under the authority of ",
      HtmlEscape(record.has_authority() ? FormatAddress(record.authority()) : reviewer), ", on ",
      HtmlEscape(reviewer), "'s resources only, ", HtmlEscape(expiry),
      " unless you narrow it below; no use limit unless you set one.</p>");
}

std::string DecideForms(const Session& session, const gs::EscalationRecord& record) {
  const std::string& id = record.escalation_id();
  const std::string suffix = HtmlEscape(id);
  return absl::StrCat(
      WouldIssue(record),
      "<form class=\"decide\" method=\"post\" action=\"/decide\" aria-label=\"Approve ", suffix,
      "\">", Hidden("csrf", session.csrf), Hidden("id", id), Hidden("decision", "approve"),
      Field("expires_at", "Expires at (RFC 3339, optional)", "", absl::StrCat("expires-", suffix),
            "placeholder=\"2026-12-31T00:00:00Z\""),
      Field("max_uses", "Max uses (optional)", "", absl::StrCat("uses-", suffix),
            "type=\"number\" min=\"1\""),
      Field("purposes", "Purposes (comma-separated, optional)", "",
            absl::StrCat("purposes-", suffix)),
      NoteField("approve", suffix), OnBehalf(session, "approve", suffix),
      "<button type=\"submit\">Approve</button></form>",
      "<form class=\"decide\" method=\"post\" action=\"/decide\" aria-label=\"Deny ", suffix, "\">",
      Hidden("csrf", session.csrf), Hidden("id", id), Hidden("decision", "deny"),
      NoteField("deny", suffix), OnBehalf(session, "deny", suffix),
      "<button type=\"submit\" class=\"deny\">Deny</button></form>");
}

std::string FilterLink(absl::string_view text, absl::string_view execution_id,
                       absl::string_view outcome) {
  std::string href = absl::StrCat("/turn?execution=", common::text::UrlEncode(execution_id));
  if (!outcome.empty()) absl::StrAppend(&href, "&outcome=", common::text::UrlEncode(outcome));
  return absl::StrCat("<a href=\"", HtmlEscape(href), "\">", text, "</a>");
}

}  // namespace

absl::string_view Stylesheet() { return kStylesheet; }

std::string Page(absl::string_view title, const Session* session, absl::string_view body) {
  std::string nav;
  if (session != nullptr) {
    nav =
        absl::StrCat("<nav aria-label=\"Console\"><a href=\"/queue\">Escalations</a> &middot; ",
                     "<a href=\"/record\">Record</a></nav><span class=\"who\">Signed in as ",
                     HtmlEscape(session->principal.address), " (",
                     common::server::RoleName(session->principal.role),
                     ") <form method=\"post\" action=\"/signout\">", Hidden("csrf", session->csrf),
                     "<button type=\"submit\" class=\"plain\">Sign out</button></form></span>");
  }
  return absl::StrCat(
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>",
      HtmlEscape(title),
      " · SharedOS console</title><link rel=\"stylesheet\" href=\"/console.css\"></head><body>"
      "<a class=\"skip\" href=\"#main\">Skip to content</a><header><strong>SharedOS "
      "console</strong>",
      nav, "</header><main id=\"main\"><h1>", HtmlEscape(title), "</h1>", body,
      "</main></body></html>");
}

std::string SignInPage(absl::string_view signin_token, absl::string_view error, bool oidc) {
  std::string body;
  if (!error.empty()) {
    absl::StrAppend(&body, "<p class=\"error\" role=\"alert\">", HtmlEscape(error), "</p>");
  }
  if (oidc) {
    absl::StrAppend(&body,
                    "<p><a id=\"oidc\" class=\"button\" href=\"/oidc/start\">Sign in with your "
                    "organisation's identity provider</a></p>"
                    "<h2>Operators and break-glass</h2>");
  }
  absl::StrAppend(
      &body,
      "<p>Paste a reviewer or admin credential's secret. It stays on the server for this session "
      "only; the browser keeps a session cookie.</p>"
      "<form method=\"post\" action=\"/signin\">",
      Hidden("signin", signin_token),
      "<label for=\"secret\">Credential secret <input id=\"secret\" name=\"secret\" "
      "type=\"password\" autocomplete=\"off\" required></label> "
      "<button type=\"submit\">Sign in</button></form>");
  return Page("Sign in", nullptr, body);
}

std::string SignInFailedPage(absl::string_view message) {
  return Page(
      "Sign-in failed", nullptr,
      absl::StrCat("<p class=\"error\" role=\"alert\" id=\"signin-error\">", HtmlEscape(message),
                   "</p><p>No session was opened. <a href=\"/signin\">Sign in again</a>.</p>"));
}

std::string SignedOutPage(absl::string_view end_session_url) {
  const std::string url = HtmlEscape(end_session_url);
  std::string page =
      Page("Signed out", nullptr,
           absl::StrCat("<p>Signed out of the console. <a id=\"end-session\" href=\"", url,
                        "\">Sign out at your identity provider too</a>.</p>"));
  page.insert(page.find("</head>"),
              absl::StrCat("<meta http-equiv=\"refresh\" content=\"0;url=", url, "\">"));
  return page;
}

std::string SignedInPage() {
  std::string page =
      Page("Signed in", nullptr,
           "<p><a id=\"continue\" href=\"/queue\">Continue to your escalations</a></p>");
  const size_t head = page.find("</head>");
  page.insert(head, "<meta http-equiv=\"refresh\" content=\"0;url=/queue\">");
  return page;
}

std::string EscalationSentence(const gs::EscalationRecord& record) {
  const auto& request = record.escalation().requested_authority();
  std::string sentence =
      absl::StrCat(request.has_requester() ? FormatAddress(request.requester()) : "an agent",
                   " needs ", Requested(record));
  if (!request.purpose().empty()) absl::StrAppend(&sentence, ", for purpose ", request.purpose());
  const std::string constraints = FormatConstraints(request.constraints());
  if (!constraints.empty()) absl::StrAppend(&sentence, " (", constraints, ")");
  absl::StrAppend(&sentence, ", asked in turn ", record.execution_id(), " because ",
                  record.escalation().reason());
  return sentence;
}

std::string QueueBody(const Session& session, absl::string_view namespace_id,
                      const std::vector<gs::EscalationRecord>& pending) {
  std::string body = absl::StrCat("<form method=\"get\" action=\"/queue\" class=\"decide\">",
                                  Field("namespace", "Namespace", namespace_id, "namespace"),
                                  " <button type=\"submit\">Show</button></form>");
  if (pending.empty()) {
    absl::StrAppend(&body, "<p id=\"empty\">No pending escalations for you in ",
                    HtmlEscape(namespace_id), ".</p>");
    return body;
  }
  absl::StrAppend(&body, "<p>", pending.size(), " pending, newest first.</p>");
  for (const gs::EscalationRecord& record : pending) {
    absl::StrAppend(
        &body, "<section class=\"card escalation\" aria-labelledby=\"h-",
        HtmlEscape(record.escalation_id()), "\"><h2 id=\"h-", HtmlEscape(record.escalation_id()),
        "\" class=\"sentence\">", HtmlEscape(EscalationSentence(record)), "</h2><p class=\"meta\">",
        HtmlEscape(record.escalation_id()), " · requested ",
        HtmlEscape(grantstore::client::FormatTimestamp(record.escalation().requested_at())),
        " · reviewer ", HtmlEscape(FormatAddress(record.escalation().reviewer())), " · ",
        FilterLink("the denial that led to it", record.execution_id(), "denied"), " · ",
        FilterLink("the turn's records", record.execution_id(), ""), "</p>",
        DecideForms(session, record), "</section>");
  }
  return body;
}

std::string DecidedBody(const gs::ResolveEscalationResponse& response) {
  const gs::EscalationRecord& record = response.escalation();
  std::string body =
      absl::StrCat("<p class=\"status-ok\" role=\"status\" id=\"decided\">Escalation ",
                   HtmlEscape(record.escalation_id()), " is ",
                   HtmlEscape(grantstore::client::EscalationStatusName(record.status())), ".</p>",
                   "<p id=\"decider\">Decided by ",
                   HtmlEscape(grantstore::client::FormatDecider(record)), ".</p>");
  if (!record.note().empty()) {
    absl::StrAppend(&body, "<p id=\"note-label\">With the note:</p><blockquote class=\"note\" ",
                    "id=\"note\" aria-labelledby=\"note-label\">", HtmlEscape(record.note()),
                    "</blockquote>");
  }
  if (response.has_grant()) {
    absl::StrAppend(&body, "<p id=\"issued\">Issued grant <code>",
                    HtmlEscape(response.grant().id()), "</code>:</p><pre>",
                    HtmlEscape(grantstore::client::RenderGrant(response.grant())), "</pre>");
  }
  absl::StrAppend(&body,
                  "<p><a href=\"/queue?namespace=", common::text::UrlEncode(record.namespace_id()),
                  "\">Back to the queue</a> · ",
                  FilterLink("this turn's records", record.execution_id(), ""), "</p>");
  return body;
}

std::string RecordBody(const std::map<std::string, std::string>& fields,
                       const std::optional<av1::VerifyResponse>& verify,
                       const std::vector<av1::AuditRecord>& records, bool more) {
  auto value = [&](const std::string& name) {
    auto it = fields.find(name);
    return it == fields.end() ? std::string() : it->second;
  };
  std::string body = "<form method=\"get\" action=\"/record\" class=\"decide\">";
  for (const char* name : {"namespace", "actor", "trace", "execution", "reason", "source",
                           "outcome", "type", "since", "until"}) {
    absl::StrAppend(&body, Field(name, name, value(name), absl::StrCat("f-", name)));
  }
  absl::StrAppend(&body, "<button type=\"submit\">Query</button></form>");
  if (verify.has_value()) {
    absl::StrAppend(&body, "<p id=\"verify\" class=\"", verify->ok() ? "status-ok" : "status-bad",
                    "\">Chain: ", HtmlEscape(grantstore::client::RenderVerify(*verify)), "</p>");
  } else {
    // The chain spans every namespace: only the operator verifies it (access table).
    absl::StrAppend(&body,
                    "<p id=\"verify\">Chain: verified by the operator (an admin of every "
                    "namespace); this credential reads the namespaces it administers.</p>");
  }
  absl::StrAppend(&body, "<table id=\"records\"><caption>", records.size(),
                  more ? " records (more match: narrow the filter)" : " records",
                  "</caption><thead><tr>");
  for (const std::string& column : grantstore::client::AuditRecordColumns()) {
    absl::StrAppend(&body, "<th scope=\"col\">", HtmlEscape(column), "</th>");
  }
  absl::StrAppend(&body, "</tr></thead><tbody>");
  for (const av1::AuditRecord& record : records) {
    const std::vector<std::string> cells = grantstore::client::AuditRecordCells(record);
    const bool denied = cells.size() > 3 && cells[3] == "denied";
    absl::StrAppend(&body, denied ? "<tr class=\"denied\">" : "<tr>");
    for (const std::string& cell : cells) {
      absl::StrAppend(&body, "<td>", HtmlEscape(cell.empty() ? "-" : cell), "</td>");
    }
    absl::StrAppend(&body, "</tr>");
  }
  absl::StrAppend(&body, "</tbody></table>");
  return body;
}

std::string MessageBody(absl::string_view heading, absl::string_view message) {
  return absl::StrCat("<div class=\"error\" role=\"alert\"><h2>", HtmlEscape(heading),
                      "</h2><p id=\"message\">", HtmlEscape(message), "</p></div>");
}

}  // namespace sharedos::console
