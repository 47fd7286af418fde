#include "tests/crash/campaign.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/process.h"

namespace sharedos::crash {

namespace pb = ::sharedos::protocol::v1;
namespace demo = ::sharedos::testing::demo;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

std::unique_ptr<grpc::ClientContext> As(const std::string& token, absl::Duration timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  return context;
}

std::shared_ptr<grpc::Channel> Connect(const std::string& address) {
  grpc::ChannelArguments args;
  // A list of replicas ("ipv4:<a>,<b>") takes calls in turn, as the services' own channels do.
  args.SetLoadBalancingPolicyName("round_robin");
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 50);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

std::string MakeDir(const std::string& name) {
  const std::string dir = sharedos::testing::TempPath(name);
  EXPECT_EQ(mkdir(dir.c_str(), 0700), 0) << dir;
  return dir;
}

absl::StatusOr<::sharedos::testing::FourProcessDeployment::Options> DemoFourProcessOptions(
    const std::string& dir) {
  ::sharedos::testing::FourProcessDeployment::Options options;
  options.dir = dir;
  options.registry = dir + "/registry.textproto";
  options.files_root = dir + "/files";
  if (absl::Status written = demo::WriteWorkspace(options.files_root); !written.ok()) {
    return written;
  }
  if (absl::Status written = ::sharedos::testing::WriteFile(options.registry, demo::RegistryText());
      !written.ok()) {
    return written;
  }
  return options;
}

void Clients::Aim(const Targets& targets) {
  absl::MutexLock lock(&mu_);
  envelope_ = envelope::v1::Envelope::NewStub(Connect(targets.envelope));
  grants_ = grantstore::v1::GrantStore::NewStub(Connect(targets.grantstore));
}

void Clients::Start(int turn_runners) {
  threads_.emplace_back([this] { IssueGrants(); });
  for (int i = 0; i < turn_runners; ++i) threads_.emplace_back([this, i] { RunTurns(i); });
}

void Clients::Stop() {
  stop_ = true;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

std::shared_ptr<envelope::v1::Envelope::Stub> Clients::Envelope() {
  absl::MutexLock lock(&mu_);
  return envelope_;
}

std::shared_ptr<grantstore::v1::GrantStore::Stub> Clients::Grants() {
  absl::MutexLock lock(&mu_);
  return grants_;
}

void Clients::IssueGrants() {
  for (int n = 0; !stop_; ++n) {
    grantstore::v1::IssueGrantRequest request;
    *request.mutable_grant() = demo::Grant();
    request.mutable_grant()->set_id(absl::StrCat("grant-load-", n));
    request.mutable_grant()->mutable_subject()->set_agent_id(absl::StrCat("agent-load-", n));
    grantstore::v1::IssueGrantResponse response;
    ++ledger_.attempts;
    grpc::Status status =
        Grants()->IssueGrant(As(admin_, absl::Seconds(5)).get(), request, &response);
    if (status.ok()) {
      absl::MutexLock lock(&ledger_.mu);
      ledger_.grants.insert(request.grant().id());
    } else {
      Note(status.error_message());
    }
  }
}

void Clients::RunTurns(int runner) {
  for (int n = 0; !stop_; ++n) {
    const std::string execution = absl::StrCat("exec-load-", runner, "-", n);
    auto envelope = Envelope();
    envelope::v1::OpenTurnResponse opened;
    ++ledger_.attempts;
    grpc::Status status = envelope->OpenTurn(As(host_, absl::Seconds(5)).get(),
                                             demo::TurnRequest(execution, "trace-load"), &opened);
    if (!status.ok() || opened.has_result()) {
      Note(status.ok() ? opened.result().error().code() : status.error_message());
      continue;
    }
    {
      // A replica's turn ids start "turn-<replica>." (ADR 0011); one envelope's have no owner.
      const std::string& id = opened.turn_id();
      const size_t dot = id.find('.');
      absl::MutexLock lock(&ledger_.mu);
      ++ledger_.opened_by[dot == std::string::npos ? "" : id.substr(0, dot)];
    }
    const std::string call_id = absl::StrCat("call-", execution);
    Read(*envelope, opened.turn_id(), call_id);
    Finish(*envelope, opened.turn_id(), execution, n % 3 == 0);
  }
}

// Counts a refusal by its text (printed at the end: what the clients met while services were
// down). A refused call backs off briefly, as a real client would, instead of spinning.
void Clients::Note(const std::string& what) {
  {
    absl::MutexLock lock(&ledger_.mu);
    ++ledger_.refusals[what.substr(0, 120)];
  }
  absl::SleepFor(absl::Milliseconds(10));
}

void Clients::Read(envelope::v1::Envelope::Stub& envelope, const std::string& turn_id,
                   const std::string& call_id) {
  envelope::v1::InvokeToolRequest request;
  request.set_turn_id(turn_id);
  pb::ToolCall* call = request.mutable_call();
  call->set_id(call_id);
  call->set_tool("files.read");
  call->set_trace_id("trace-load");
  (*call->mutable_arguments()->mutable_fields())["path"].set_string_value("Workspace/notes.txt");
  call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
  envelope::v1::InvokeToolResponse response;
  grpc::Status status = envelope.InvokeTool(As(host_, absl::Seconds(5)).get(), request, &response);
  if (!status.ok()) return Note(status.error_message());
  if (response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED) {
    absl::MutexLock lock(&ledger_.mu);
    ledger_.allowed_calls.insert(call_id);
  } else {
    Note(response.result().error().code());
  }
}

void Clients::Finish(envelope::v1::Envelope::Stub& envelope, const std::string& turn_id,
                     const std::string& execution, bool escalate) {
  envelope::v1::FinishTurnRequest request;
  request.set_turn_id(turn_id);
  if (escalate) {
    request.mutable_escalate()->set_reason("The assistant needs a person.");
  } else {
    request.mutable_complete()->mutable_output()->set_string_value("done");
  }
  envelope::v1::FinishTurnResponse response;
  if (!envelope.FinishTurn(As(host_, absl::Seconds(5)).get(), request, &response).ok()) return;
  if (escalate && response.result().status() == pb::EXECUTION_STATUS_ESCALATED) {
    absl::MutexLock lock(&ledger_.mu);
    ledger_.escalated_executions.insert(execution);
  }
}

void CheckAfterCampaign(const Targets& targets, const std::string& admin, Ledger& ledger) {
  auto grants = grantstore::v1::GrantStore::NewStub(Connect(targets.grantstore));
  auto audit = audit::v1::AuditLog::NewStub(Connect(targets.audit));
  absl::MutexLock lock(&ledger.mu);
  std::printf("acknowledged: %zu grants, %zu allowed calls, %zu escalations; %lld attempts\n",
              ledger.grants.size(), ledger.allowed_calls.size(), ledger.escalated_executions.size(),
              static_cast<long long>(ledger.attempts.load()));
  for (const auto& [what, count] : ledger.refusals) {
    std::printf("  %6d × %s\n", count, what.c_str());
  }
  EXPECT_FALSE(ledger.grants.empty());
  EXPECT_FALSE(ledger.allowed_calls.empty());

  for (const std::string& id : ledger.grants) {
    grantstore::v1::GetGrantRequest request;
    request.set_namespace_id(demo::kNamespace);
    request.set_grant_id(id);
    grantstore::v1::GetGrantResponse response;
    grpc::Status status = grants->GetGrant(As(admin, absl::Seconds(10)).get(), request, &response);
    EXPECT_TRUE(status.ok()) << "acknowledged grant " << id << " lost: " << status.error_message();
  }

  grantstore::v1::GetUsageRequest usage_request;
  usage_request.set_namespace_id(demo::kNamespace);
  usage_request.set_grant_id(demo::Grant().id());
  grantstore::v1::GetUsageResponse usage;
  ASSERT_TRUE(grants->GetUsage(As(admin, absl::Seconds(10)).get(), usage_request, &usage).ok());
  std::printf("bounded grant: %lld of %lld uses counted\n", static_cast<long long>(usage.uses()),
              static_cast<long long>(kMaxUses));
  EXPECT_LE(usage.uses(), kMaxUses);
  EXPECT_GE(usage.uses(), static_cast<int64_t>(ledger.allowed_calls.size()));

  std::map<std::string, int> escalations;
  grantstore::v1::ListEscalationsRequest list;
  list.set_namespace_id(demo::kNamespace);
  list.set_page_size(1000);
  do {
    grantstore::v1::ListEscalationsResponse page;
    ASSERT_TRUE(grants->ListEscalations(As(admin, absl::Seconds(10)).get(), list, &page).ok());
    for (const auto& record : page.escalations()) ++escalations[record.execution_id()];
    list.set_page_token(page.next_page_token());
  } while (!list.page_token().empty());
  for (const std::string& execution : ledger.escalated_executions) {
    EXPECT_EQ(escalations[execution], 1) << "escalation of " << execution;
  }

  // The writers' outboxes deliver post-effect records after a restart: read until every
  // acknowledged call's tool.invoked is in, or 60 s pass.
  std::map<std::string, int> invoked;
  std::set<std::string> event_ids;
  int duplicates = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  for (;;) {
    invoked.clear();
    event_ids.clear();
    duplicates = 0;
    audit::v1::QueryRequest query;
    query.mutable_filter()->set_namespace_id(demo::kNamespace);
    query.set_limit(1000);
    do {
      audit::v1::QueryResponse page;
      ASSERT_TRUE(audit->Query(As(admin, absl::Seconds(10)).get(), query, &page).ok());
      for (const auto& record : page.records()) {
        // Ids are unique across both kinds of record (control-plane ones: docs/adr/0008).
        const std::string& id =
            record.has_control_plane() ? record.control_plane().id() : record.event().id();
        if (!event_ids.insert(id).second) ++duplicates;
        if (record.event().type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) {
          ++invoked[record.event().operation_id()];
        }
      }
      query.set_page_token(page.next_page_token());
    } while (!query.page_token().empty());
    bool all = true;
    for (const std::string& call : ledger.allowed_calls) all = all && invoked.count(call) > 0;
    if (all || absl::Now() > give_up) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_EQ(duplicates, 0);
  for (const std::string& call : ledger.allowed_calls) {
    EXPECT_EQ(invoked[call], 1) << "tool.invoked of acknowledged call " << call;
  }
  const int64_t checked = ExpectAuditVerified(targets.audit, admin);
  std::printf("audit: %zu records, chain verified over %lld\n", event_ids.size(),
              static_cast<long long>(checked));
}

int64_t ExpectAuditVerified(const std::string& audit_address, const std::string& admin) {
  auto audit = audit::v1::AuditLog::NewStub(Connect(audit_address));
  audit::v1::VerifyResponse verified;
  grpc::Status status = audit->Verify(As(admin, absl::Seconds(30)).get(), {}, &verified);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(verified.ok()) << verified.detail();
  return verified.checked();
}

int InterruptedTurnEndedCount(const std::string& audit_address, const std::string& admin,
                              const std::string& execution, int want) {
  auto audit = audit::v1::AuditLog::NewStub(Connect(audit_address));
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  int count = 0;
  for (;;) {
    audit::v1::QueryRequest query;
    query.mutable_filter()->set_execution_id(execution);
    query.mutable_filter()->set_type(pb::AUDIT_EVENT_TYPE_TURN_ENDED);
    query.set_limit(100);
    audit::v1::QueryResponse page;
    grpc::Status status = audit->Query(As(admin, absl::Seconds(10)).get(), query, &page);
    EXPECT_TRUE(status.ok()) << status.error_message();
    count = page.records_size();
    for (const auto& record : page.records()) {
      EXPECT_EQ(record.event().outcome(), pb::AUDIT_OUTCOME_INTERRUPTED);
      EXPECT_EQ(record.event().reason(), "operation_aborted");
      EXPECT_TRUE(record.event().fail_closed());
      EXPECT_EQ(record.event().ended_by(), pb::ENDED_BY_ENVELOPE);
    }
    if (count >= want || absl::Now() > give_up) return count;
    absl::SleepFor(absl::Milliseconds(200));
  }
}

pb::CapabilityGrant BoundedDemoGrant() {
  pb::CapabilityGrant grant = demo::Grant();
  grant.mutable_constraints()->set_max_uses(kMaxUses);
  return grant;
}

void IssueBoundedGrant(const std::string& grantstore, const std::string& admin) {
  auto grants = grantstore::v1::GrantStore::NewStub(Connect(grantstore));
  grantstore::v1::IssueGrantRequest request;
  *request.mutable_grant() = BoundedDemoGrant();
  grantstore::v1::IssueGrantResponse response;
  grpc::Status status = grants->IssueGrant(As(admin, absl::Seconds(10)).get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

}  // namespace sharedos::crash
