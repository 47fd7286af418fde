#include "console/pages.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace sharedos::console {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
using ::testing::HasSubstr;
using ::testing::Not;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

gs::EscalationRecord Escalation(const std::string& reason) {
  gs::EscalationRecord record = Parse<gs::EscalationRecord>(R"pb(
    escalation_id: "esc-1"
    namespace_id: "world-demo"
    execution_id: "exec-7"
    status: ESCALATION_RECORD_STATUS_PENDING
    escalation {
      reviewer { human_user_id: "user-alice" }
      requested_authority {
        requester { agent_id: "agent-assistant" }
        purpose: "keep notes"
        capabilities {
          resource { namespace: "files" path: "Workspace" path: "summary.txt" }
          actions: "create"
        }
      }
    }
  )pb");
  record.mutable_escalation()->set_reason(reason);
  return record;
}

Session AliceSession() {
  Session session;
  session.id = "session-id";
  session.csrf = "csrf-token";
  session.secret = "sos_the-secret";
  session.principal.address = "human:user-alice";
  session.principal.role = common::server::Role::kReviewer;
  return session;
}

TEST(EscalationSentenceTest, SaysWhoNeedsWhatForWhichPurposeInWhichTurnAndWhy) {
  EXPECT_EQ(EscalationSentence(Escalation("it must write its summary")),
            "agent:agent-assistant needs files:Workspace/summary.txt [create], for purpose keep "
            "notes, asked in turn exec-7 because it must write its summary");
}

TEST(QueueBodyTest, EachEscalationHasItsSentenceLinksAndCsrfProtectedForms) {
  const std::string body = QueueBody(AliceSession(), "world-demo", {Escalation("why")});
  EXPECT_THAT(body, HasSubstr("agent:agent-assistant needs files:Workspace/summary.txt"));
  EXPECT_THAT(body, HasSubstr("href=\"/turn?execution=exec-7&amp;outcome=denied\""));
  EXPECT_THAT(body, HasSubstr("href=\"/turn?execution=exec-7\""));
  EXPECT_THAT(body, HasSubstr("<input type=\"hidden\" name=\"csrf\" value=\"csrf-token\">"));
  EXPECT_THAT(body, HasSubstr("<label for=\"uses-esc-1\">"));
  EXPECT_THAT(body, HasSubstr("<input id=\"uses-esc-1\" name=\"max_uses\""));
  EXPECT_THAT(body, HasSubstr("name=\"decision\" value=\"deny\""));
  // An optional, labelled, bounded note on both decisions.
  for (const char* form : {"approve", "deny"}) {
    EXPECT_THAT(body,
                HasSubstr(absl::StrCat("<label for=\"note-", form,
                                       "-esc-1\">Note (optional) <textarea id=\"note-", form,
                                       "-esc-1\" name=\"note\" rows=\"3\" maxlength=\"1000\">")));
  }
  EXPECT_THAT(body, Not(HasSubstr("sos_the-secret")));
}

TEST(QueueBodyTest, OnlyAnAdminIsOfferedToDecideOnTheReviewersBehalf) {
  EXPECT_THAT(QueueBody(AliceSession(), "world-demo", {Escalation("why")}),
              Not(HasSubstr("on_behalf")));
  Session admin = AliceSession();
  admin.principal.role = common::server::Role::kAdmin;
  const std::string body = QueueBody(admin, "world-demo", {Escalation("why")});
  EXPECT_THAT(body,
              HasSubstr("<label for=\"behalf-approve-esc-1\"><input id=\"behalf-approve-esc-1\" "
                        "type=\"checkbox\" name=\"on_behalf\" value=\"true\" required>"));
  EXPECT_THAT(body, HasSubstr("id=\"behalf-deny-esc-1\""));
}

TEST(QueueBodyTest, RecordTextIsEscaped) {
  const std::string body =
      QueueBody(AliceSession(), "world-demo", {Escalation("<script>alert(1)</script>")});
  EXPECT_THAT(body, Not(HasSubstr("<script>")));
  EXPECT_THAT(body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

TEST(QueueBodyTest, AnEmptyQueueSaysSo) {
  EXPECT_THAT(QueueBody(AliceSession(), "world-demo", {}),
              HasSubstr("No pending escalations for you in world-demo."));
}

TEST(DecidedBodyTest, ShowsTheNoteEscapedWithItsLineBreaksOrNothing) {
  grantstore::v1::ResolveEscalationResponse response;
  response.mutable_escalation()->set_escalation_id("esc-1");
  response.mutable_escalation()->set_status(grantstore::v1::ESCALATION_RECORD_STATUS_DENIED);
  response.mutable_escalation()->set_note("not this week\n<i>ask Bob</i> & co");
  const std::string body = DecidedBody(response);
  EXPECT_THAT(body, HasSubstr("Escalation esc-1 is denied."));
  EXPECT_THAT(body,
              HasSubstr("<blockquote class=\"note\" id=\"note\" aria-labelledby=\"note-label\">"
                        "not this week\n&lt;i&gt;ask Bob&lt;/i&gt; &amp; co</blockquote>"));
  EXPECT_THAT(body, Not(HasSubstr("<i>")));
  response.mutable_escalation()->clear_note();
  EXPECT_THAT(DecidedBody(response), Not(HasSubstr("blockquote")));
}

TEST(PageTest, NoScriptNoExternalReferenceAndTheSignOutFormCarriesCsrf) {
  Session session = AliceSession();
  const std::string page = Page("Escalations", &session, "<p>x</p>");
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
  EXPECT_THAT(page, HasSubstr("<html lang=\"en\">"));
  EXPECT_THAT(page, HasSubstr("action=\"/signout\"><input type=\"hidden\" name=\"csrf\""));
  EXPECT_THAT(page, HasSubstr("Signed in as human:user-alice (reviewer)"));
}

TEST(RecordBodyTest, ShowsVerifyStatusAndSharedosctlColumnsPerRecord) {
  av1::VerifyResponse verify;
  verify.set_ok(true);
  verify.set_checked(12);
  verify.set_head_hash("abc");
  av1::AuditRecord record = Parse<av1::AuditRecord>(R"pb(
    sequence: 7
    event {
      type: AUDIT_EVENT_TYPE_TOOL_INVOKED
      outcome: AUDIT_OUTCOME_DENIED
      namespace_id: "world-demo"
      tool: "files.create"
      source: AUDIT_SOURCE_KERNEL
      reason: "no_matching_grant"
    }
  )pb");
  const std::string body = RecordBody({{"namespace", "world-demo"}}, verify, {record}, false);
  EXPECT_THAT(body, HasSubstr("Chain: ok: 12 records verify; head abc"));
  EXPECT_THAT(body, HasSubstr("<th scope=\"col\">SOURCE</th>"));
  EXPECT_THAT(body, HasSubstr("<th scope=\"col\">CAUSE</th>"));
  EXPECT_THAT(body, HasSubstr("<tr class=\"denied\"><td>7</td>"));
  EXPECT_THAT(body, HasSubstr("<td>files.create</td>"));
  EXPECT_THAT(body, HasSubstr("<td>kernel</td><td>no_matching_grant</td>"));
  EXPECT_THAT(body, HasSubstr("value=\"world-demo\""));
}

TEST(RecordBodyTest, ABrokenChainIsShownAsBroken) {
  av1::VerifyResponse verify;
  verify.set_ok(false);
  verify.set_first_bad_sequence(3);
  const std::string body = RecordBody({}, verify, {}, true);
  EXPECT_THAT(body, HasSubstr("class=\"status-bad\">Chain: BROKEN: first bad sequence 3"));
  EXPECT_THAT(body, HasSubstr("more match: narrow the filter"));
}

// T1 (docs/adr/0014): before deciding, the reviewer reads whose authority the grant extends, to
// whom, on whose resources, and for how long when nothing is narrowed.
TEST(QueueBodyTest, SaysWhatAnApprovalWouldIssue) {
  gs::EscalationRecord record = Escalation("why");
  record.mutable_authority()->set_human_user_id("user-alice");
  const std::string body = QueueBody(AliceSession(), "world-demo", {record});
  EXPECT_THAT(body, HasSubstr("Approving issues a grant to agent:agent-assistant under the "
                              "authority of human:user-alice, on human:user-alice's resources "
                              "only, for 24h after you approve"));
}

// T3: who decided, with which credential, and who set its secret.
TEST(DecidedBodyTest, NamesTheDecidersCredentialAndWhoSetItsSecret) {
  gs::ResolveEscalationResponse response;
  *response.mutable_escalation() = Escalation("why");
  response.mutable_escalation()->set_status(gs::ESCALATION_RECORD_STATUS_APPROVED);
  response.mutable_escalation()->mutable_decided_by()->set_human_user_id("user-alice");
  gs::DecisionCredential* with = response.mutable_escalation()->mutable_decided_with();
  with->set_credential_id("cred-1");
  with->mutable_secret_set_by()->set_service_id("ops");
  EXPECT_THAT(DecidedBody(response),
              HasSubstr("Decided by human:user-alice with cred-1 (secret set by service:ops, not "
                        "by the decider)."));
  with->set_held_by_decider_alone(true);
  EXPECT_THAT(DecidedBody(response), HasSubstr("with cred-1 (secret set by itself)"));
}

// T2: a credential that is not the operator's is not shown the whole chain's verification.
TEST(RecordBodyTest, WithoutTheOperatorsVerificationItSaysWhoVerifies) {
  const std::string body = RecordBody({{"namespace", "world-b"}}, std::nullopt, {}, false);
  EXPECT_THAT(body, HasSubstr("verified by the operator"));
  EXPECT_THAT(body, Not(HasSubstr("status-ok")));
}

}  // namespace
}  // namespace sharedos::console
