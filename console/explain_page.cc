#include "console/explain_page.h"

#include "absl/strings/str_cat.h"
#include "common/text/terminal_safe.h"
#include "console/http.h"

namespace sharedos::console {
namespace {

std::string Safe(absl::string_view text) { return HtmlEscape(common::text::TerminalSafe(text)); }

}  // namespace

std::string ExplainBody(absl::string_view id, const grantstore::client::Explanation* explanation) {
  std::string body = absl::StrCat(
      "<form method=\"get\" action=\"/explain\" class=\"filters\"><label>A record's sequence, an "
      "event id or an escalation id <input name=\"id\" value=\"",
      HtmlEscape(id), "\" maxlength=\"", kMaxExplainIdBytes,
      "\" required></label> <button type=\"submit\">Explain</button></form>");
  if (explanation == nullptr) return body;
  absl::StrAppend(&body, "<section aria-labelledby=\"explained\"><h2 id=\"explained\">",
                  Safe(explanation->title), "</h2><dl class=\"explanation\">");
  for (const auto& [label, value] : explanation->facts) {
    absl::StrAppend(&body, "<dt>", Safe(label), "</dt><dd>", Safe(value), "</dd>");
  }
  absl::StrAppend(&body, "</dl>");
  if (!explanation->next_steps.empty()) {
    absl::StrAppend(&body, "<h3>Next step</h3><ul class=\"next\">");
    for (const std::string& step : explanation->next_steps) {
      absl::StrAppend(&body, "<li>", Safe(step), "</li>");
    }
    absl::StrAppend(&body, "</ul>");
  }
  absl::StrAppend(&body, "</section>");
  return body;
}

}  // namespace sharedos::console
