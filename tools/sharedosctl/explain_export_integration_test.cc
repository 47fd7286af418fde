// `sharedosctl explain` and `sharedosctl audit export` through the real sharedosctl against a real
// `sharedosd --demo` (with a checkpoint key), after the README quickstart's turns:
//   explain — a kernel denial (no_matching_grant: the rejected demo grant and why, the required
//   authority, the escalation and its next step), the same record by its event id, the
//   escalation by its id, an envelope denial (tool_unavailable, cause not_offered), a host-policy
//   refusal (the rule that denied it), and an allowed record (nothing to do) — and the reviewer
//   console's /explain page, signed in as the admin, for the same records;
//   export — every record in jsonl and in ocsf, each line valid against its schema
//   (docs/schemas/), sequences 1..head without a gap; resumed from a sequence, exactly the rest;
//   a signed checkpoint at the end; --follow streams a record made after it started.
// (A fail-closed refusal is explained in //tests/clients:quickstarts_test, which can stop a
// service.)

#include <chrono>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedosd/demo_turn.h"
#include "tests/testing/process.h"
#include "tools/sharedosctl/export_schemas_testing.h"
#include "tools/sharedosctl/sharedosd_fixture.h"

namespace sharedos {
namespace {

namespace ev1 = ::sharedos::envelope::v1;
using sharedosctl::testing::ExportSchema;
using sharedosctl::testing::Result;
using ::testing::HasSubstr;
using ::testing::Not;

std::string CheckpointKey() {
  const std::string key = ::sharedos::testing::TempPath("checkpoint.key");
  const std::string command = absl::StrCat("openssl genpkey -algorithm ed25519 -out '", key, "'");
  EXPECT_EQ(std::system(command.c_str()), 0);
  return key;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

class ExplainExportIntegrationTest : public sharedosctl::testing::SharedosdFixture {
 protected:
  ExplainExportIntegrationTest()
      : SharedosdFixture("explain-export-data", {"--demo", "--console_port=0",
                                                 "--checkpoint_key_file=" + CheckpointKey()}) {}

  // The console's explain page for `id`, signed in with the admin credential: "<status> <body>".
  std::string ConsoleExplain(const std::string& id) {
    if (console_ == nullptr) {
      const std::string output = daemon_->output();
      const std::string marker = "sharedosd console on http://";
      const size_t at = output.find(marker);
      if (at == std::string::npos) return "no console line";
      const std::string url = output.substr(
          at + marker.size(), output.find('/', at + marker.size()) - at - marker.size());
      const std::string host = url.substr(0, url.rfind(':'));
      console_ = std::make_unique<httplib::Client>(host, std::stoi(url.substr(url.rfind(':') + 1)));
      httplib::Result form = console_->Get("/signin");
      if (!form) return "no sign-in page";
      const std::string set = form->get_header_value("Set-Cookie");
      const std::string token = set.substr(11, set.find(';') - 11);  // sos_signin=<token>
      httplib::Result signed_in = console_->Post(
          "/signin", {{"Cookie", "sos_signin=" + token}},
          absl::StrCat("signin=", token,
                       "&secret=", ::sharedos::testing::ReadFirstLine(data_ + "/admin.token")),
          "application/x-www-form-urlencoded");
      if (!signed_in) return "no sign-in answer";
      for (const auto& [name, value] : signed_in->headers) {
        if (name == "Set-Cookie" && value.rfind("sos_session=", 0) == 0) {
          cookie_ = value.substr(0, value.find(';'));
        }
      }
    }
    httplib::Result page = console_->Get(("/explain?id=" + id).c_str(), {{"Cookie", cookie_}});
    return page ? absl::StrCat(page->status, " ", page->body) : "no answer";
  }

  std::unique_ptr<httplib::Client> console_;
  std::string cookie_;

  Result Turn() { return Ctl({"turn", "--host_token_file=" + data_ + "/host.token"}); }

  // The records of `audit query --json` with these filters.
  nlohmann::json Query(std::vector<std::string> filters) {
    filters.insert(filters.begin(), {"--json", "audit", "query"});
    Result result = Ctl(filters);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    const nlohmann::json parsed = nlohmann::json::parse(result.output, nullptr, false);
    return parsed.is_object() && parsed.contains("records") ? parsed["records"]
                                                            : nlohmann::json::array();
  }

  // A host call the demo turn does not make: a tool the turn was not offered.
  void InvokeUnofferedTool() {
    auto envelope =
        ev1::Envelope::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
    const std::string token = ::sharedos::testing::ReadFirstLine(data_ + "/host.token");
    auto as_host = [&] {
      auto context = std::make_unique<grpc::ClientContext>();
      context->AddMetadata("authorization", "Bearer " + token);
      context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      return context;
    };
    google::protobuf::Timestamp now;
    now.set_seconds(std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count());
    ev1::OpenTurnResponse opened;
    ASSERT_TRUE(envelope
                    ->OpenTurn(as_host().get(),
                               sharedosd::DemoTurnRequest(ev1::RUNTIME_DRIVER, "exec-unoffered",
                                                          "trace-unoffered", now),
                               &opened)
                    .ok());
    ev1::InvokeToolRequest invoke;
    invoke.set_turn_id(opened.turn_id());
    invoke.mutable_call()->set_id("call-delete");
    invoke.mutable_call()->set_tool("files.delete");
    invoke.mutable_call()->set_trace_id("trace-unoffered");
    *invoke.mutable_call()->mutable_requested_at() = now;
    ASSERT_TRUE(
        google::protobuf::util::JsonStringToMessage(R"({"path": "Workspace/notes.txt"})",
                                                    invoke.mutable_call()->mutable_arguments())
            .ok());
    ev1::InvokeToolResponse invoked;
    ASSERT_TRUE(envelope->InvokeTool(as_host().get(), invoke, &invoked).ok());
    ASSERT_EQ(invoked.result().error().code(), "tool_unavailable");
    ev1::CancelTurnRequest cancel;
    cancel.set_turn_id(opened.turn_id());
    ev1::CancelTurnResponse cancelled;
    envelope->CancelTurn(as_host().get(), cancel, &cancelled);
  }
};

TEST_F(ExplainExportIntegrationTest, ExplainsEachKindOfRefusalAndExportsTheRecord) {
  // The quickstart's first turn: the read allowed, the write refused, escalated.
  Result turn = Turn();
  ASSERT_EQ(turn.exit_code, 0) << turn.output;
  std::string escalation;
  for (const std::string& line : Lines(turn.output)) {
    if (absl::StartsWith(line, "escalation: ")) escalation = line.substr(12);
  }
  ASSERT_FALSE(escalation.empty()) << turn.output;

  const nlohmann::json denials = Query({"--type=tool.invoked", "--outcome=denied"});
  ASSERT_EQ(denials.size(), 1u);
  const std::string denial = denials[0]["sequence"].get<std::string>();

  // A kernel denial by sequence.
  Result by_sequence = Ctl({"explain", "--id=" + denial});
  ASSERT_EQ(by_sequence.exit_code, 0) << by_sequence.output;
  const std::string& text = by_sequence.output;
  EXPECT_THAT(text, HasSubstr(absl::StrCat("record ", denial, ": tool.invoked denied")));
  EXPECT_THAT(text, HasSubstr("source: kernel"));
  EXPECT_THAT(text, HasSubstr("reason: no_matching_grant — "));
  EXPECT_THAT(text, HasSubstr("rejected grant grant-demo-assistant: capability: none of its "
                              "capabilities covers this resource and action; it holds "));
  EXPECT_THAT(text, HasSubstr("required authority: agent:agent-assistant needs "
                              "files:Workspace/summary.txt [create] of human:user-alice"));
  EXPECT_THAT(text, HasSubstr("host ceiling: "));
  EXPECT_THAT(text, HasSubstr("namespace settings: no host policy"));
  EXPECT_THAT(text, HasSubstr("escalation: " + escalation));
  EXPECT_THAT(text, HasSubstr("escalation status: pending"));
  EXPECT_THAT(text, HasSubstr("next:\n"));
  EXPECT_THAT(text, HasSubstr("escalations approve --id=" + escalation));
  // The console's page says the same.
  const std::string page = ConsoleExplain(denial);
  EXPECT_THAT(page, ::testing::StartsWith("200 "));
  EXPECT_THAT(page, HasSubstr("<dt>source</dt><dd>kernel"));
  EXPECT_THAT(page, HasSubstr("<dt>rejected grant grant-demo-assistant</dt><dd>capability: "));
  EXPECT_THAT(page, HasSubstr("<dt>required authority</dt><dd>agent:agent-assistant needs "));
  EXPECT_THAT(page, HasSubstr("<h3>Next step</h3>"));

  // The same record by its event id.
  Result by_id = Ctl({"explain", "--id=" + denials[0]["event"]["id"].get<std::string>()});
  ASSERT_EQ(by_id.exit_code, 0) << by_id.output;
  EXPECT_THAT(by_id.output, HasSubstr(absl::StrCat("record ", denial, ": tool.invoked denied")));

  // The escalation by its id: where it stands and the denial that led to it.
  Result by_escalation = Ctl({"explain", "--id=" + escalation});
  ASSERT_EQ(by_escalation.exit_code, 0) << by_escalation.output;
  EXPECT_THAT(by_escalation.output, HasSubstr("escalation " + escalation + ": pending"));
  EXPECT_THAT(by_escalation.output, HasSubstr("reviewer: human:user-alice"));
  EXPECT_THAT(by_escalation.output, HasSubstr("required authority: files:Workspace/summary.txt"));
  EXPECT_THAT(by_escalation.output, HasSubstr("denial: record " + denial));
  EXPECT_THAT(by_escalation.output, HasSubstr("rejected grant grant-demo-assistant: capability"));
  const std::string escalation_page = ConsoleExplain(escalation);
  EXPECT_THAT(escalation_page, HasSubstr("<dt>escalation status</dt><dd>pending</dd>"));
  EXPECT_THAT(escalation_page, HasSubstr("<dt>denial</dt><dd>record " + denial));

  // --json: one object.
  Result json = Ctl({"--json", "explain", "--id=" + denial});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_FALSE(nlohmann::json::parse(json.output)["nextSteps"].empty());

  // An envelope denial: a tool the turn was not offered.
  InvokeUnofferedTool();
  const nlohmann::json unoffered = Query({"--reason=tool_unavailable"});
  ASSERT_EQ(unoffered.size(), 1u);
  Result envelope = Ctl({"explain", "--id=" + unoffered[0]["sequence"].get<std::string>()});
  ASSERT_EQ(envelope.exit_code, 0) << envelope.output;
  EXPECT_THAT(envelope.output, HasSubstr("source: envelope"));
  EXPECT_THAT(envelope.output, HasSubstr("cause: not_offered — The host did not offer"));
  EXPECT_THAT(envelope.output, HasSubstr("ExecutionRequest.tools"));
  const std::string envelope_page = ConsoleExplain(unoffered[0]["sequence"].get<std::string>());
  EXPECT_THAT(envelope_page, HasSubstr("<dt>source</dt><dd>envelope"));
  EXPECT_THAT(envelope_page, HasSubstr("<dt>cause</dt><dd>not_offered"));

  // A host-policy refusal: a rule denying the read.
  const std::string policy = ::sharedos::testing::TempPath("policy.textproto");
  ASSERT_TRUE(::sharedos::testing::WriteFile(policy, R"pb(
                namespace_id: "world-demo"
                version: "v1"
                rules {
                  id: "no-notes"
                  resource_namespace: "files"
                  path: "Workspace"
                  path: "notes.txt"
                  scope: SCOPE_EXACT
                  actions: "read"
                }
              )pb")
                  .ok());
  Result put = Ctl({"policy", "put", "--file=" + policy});
  ASSERT_EQ(put.exit_code, 0) << put.output;
  Turn();  // the read is refused now
  const nlohmann::json denied_by_policy =
      Query({"--reason=host_policy_denied", "--type=tool.invoked"});
  ASSERT_EQ(denied_by_policy.size(), 1u);
  Result host_policy =
      Ctl({"explain", "--id=" + denied_by_policy[0]["sequence"].get<std::string>()});
  ASSERT_EQ(host_policy.exit_code, 0) << host_policy.output;
  EXPECT_THAT(host_policy.output, HasSubstr("reason: host_policy_denied"));
  EXPECT_THAT(host_policy.output, HasSubstr("host policy rule: no-notes (policy version v1)"));
  EXPECT_THAT(host_policy.output, HasSubstr("namespace settings: host policy version v1, 1 deny"));
  EXPECT_THAT(host_policy.output, HasSubstr("sharedosctl policy put"));
  EXPECT_THAT(ConsoleExplain(denied_by_policy[0]["sequence"].get<std::string>()),
              HasSubstr("<dt>host policy rule</dt><dd>no-notes (policy version v1) denied it"));

  // An allowed record: nothing refused.
  const nlohmann::json allowed = Query({"--type=tool.invoked", "--outcome=succeeded"});
  ASSERT_FALSE(allowed.empty());
  Result fine = Ctl({"explain", "--id=" + allowed[0]["sequence"].get<std::string>()});
  EXPECT_THAT(fine.output, HasSubstr("Nothing was refused: grant grant-demo-assistant"));

  // Unknown ids.
  EXPECT_EQ(Ctl({"explain", "--id=999999"}).exit_code, 1);
  EXPECT_EQ(Ctl({"explain", "--id=esc-nope"}).exit_code, 1);
  EXPECT_THAT(ConsoleExplain("esc-nope"), ::testing::StartsWith("404 "));

  // ---- export ----
  const nlohmann::json all = Query({});
  const int64_t head = std::stoll(all.back()["sequence"].get<std::string>());
  ASSERT_EQ(static_cast<int64_t>(all.size()), head);
  const auto jsonl = ExportSchema::Load("audit-export-v1.schema.json");
  const auto ocsf = ExportSchema::Load("audit-export-ocsf-v1.schema.json");
  for (const char* format : {"jsonl", "ocsf"}) {
    const auto& schema = std::string(format) == "jsonl" ? *jsonl : *ocsf;
    Result exported = Ctl({"audit", "export", std::string("--format=") + format});
    ASSERT_EQ(exported.exit_code, 0) << exported.output;
    std::vector<int64_t> sequences;
    for (const std::string& line : Lines(exported.output)) {
      EXPECT_EQ(schema.Violations(line), "") << format << ": " << line;
      const nlohmann::json parsed = nlohmann::json::parse(line);
      sequences.push_back(std::string(format) == "jsonl"
                              ? parsed["sequence"].get<int64_t>()
                              : parsed["metadata"]["sequence"].get<int64_t>());
    }
    ASSERT_EQ(static_cast<int64_t>(sequences.size()), head) << format;
    for (int64_t i = 0; i < head; ++i) EXPECT_EQ(sequences[i], i + 1) << format;

    // Resumed after sequence 7: exactly 8..head, then the head signed.
    Result resumed = Ctl(
        {"audit", "export", std::string("--format=") + format, "--since=7", "--with_checkpoint"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
    const std::vector<std::string> lines = Lines(resumed.output);
    ASSERT_EQ(static_cast<int64_t>(lines.size()), head - 7 + 1) << resumed.output;
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      EXPECT_EQ(schema.Violations(lines[i]), "") << lines[i];
      EXPECT_EQ(lines[i], Lines(exported.output)[7 + i]);  // the same line, no gap, no repeat
    }
    EXPECT_EQ(schema.Violations(lines.back()), "") << lines.back();
    EXPECT_THAT(lines.back(), HasSubstr("heckpoint"));
  }

  // --follow: the backlog after the head, then a record made while it runs.
  auto follow = ::sharedos::testing::Process::Start(
      "tools/sharedosctl/sharedosctl",
      {"--target=" + address_, "--token_file=" + data_ + "/admin.token", "audit", "export",
       "--format=jsonl", "--follow", absl::StrCat("--since=", head)});
  ASSERT_TRUE(follow.ok()) << follow.status();
  Result issued = Ctl({"credentials", "issue", "--role=reviewer", "--principal=human:user-bob",
                       "--namespace=world-demo"});
  ASSERT_EQ(issued.exit_code, 0) << issued.output;
  auto streamed = follow->WaitForLine(
      absl::StrCat(R"({"schema":"sharedos.audit.export/1","kind":"record","sequence":)", head + 1,
                   ","),
      absl::Seconds(30));
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_THAT(*streamed, HasSubstr("credential.changed"));
  EXPECT_THAT(follow->output(), Not(HasSubstr(absl::StrCat("\"sequence\":", head, ","))));
  follow->Terminate();
}

}  // namespace
}  // namespace sharedos
