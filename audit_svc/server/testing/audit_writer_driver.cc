// A test driver for audit_svc's process-level fault tests (audit_fault_test.sh). Modes:
//   append --target=A --token=T --prefix=P --count=N --ids_out=F
//       Appends N single-event batches straight to audit_svc; writes each acknowledged id to F
//       (one line, flushed) so the test knows exactly what was acknowledged. Stops after N or
//       after 20 consecutive failures (audit_svc gone).
//   post --target=A --token=T --outbox=O --prefix=P --count=N
//       Records N post-effect events through AuditClient (into the outbox O), prints
//       "recorded N", then waits to be killed.
//   flush --target=A --token=T --outbox=O
//       Opens the outbox O and exits 0 once audit_svc has taken everything in it.
//   check --target=A --token=ADMIN --ids_in=F[,F…] [--expect_count=N]
//       Every id listed is present exactly once, the log holds no other ids unless
//       --expect_count allows, and Verify passes. Exit 0 when all hold.
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "audit_svc/client/audit_client.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

ABSL_FLAG(std::string, target, "", "audit_svc address");
ABSL_FLAG(std::string, token, "", "bearer token");
ABSL_FLAG(std::string, prefix, "id", "event id prefix");
ABSL_FLAG(int, count, 0, "events");
ABSL_FLAG(std::string, ids_out, "", "file of acknowledged ids");
ABSL_FLAG(std::string, ids_in, "", "comma-separated files of ids that must be present");
ABSL_FLAG(std::string, outbox, "", "outbox file");
ABSL_FLAG(int, expect_count, -1, "exact number of records expected (-1: the listed ids)");

namespace {

namespace v1 = ::sharedos::audit::v1;
using ::sharedos::protocol::v1::AuditEvent;

AuditEvent MakeEvent(const std::string& id) {
  AuditEvent event;
  event.set_version("1");
  event.set_id(id);
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-fault");
  event.set_namespace_id("world-fault");
  event.mutable_actor()->set_agent_id("writer");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("fault-test");
  event.set_source(sharedos::protocol::v1::AUDIT_SOURCE_KERNEL);
  return event;
}

std::unique_ptr<v1::AuditLog::Stub> Stub() {
  return v1::AuditLog::NewStub(
      grpc::CreateChannel(absl::GetFlag(FLAGS_target), grpc::InsecureChannelCredentials()));
}

void Authorize(grpc::ClientContext& context) {
  context.AddMetadata("authorization", "Bearer " + absl::GetFlag(FLAGS_token));
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

int Append() {
  auto stub = Stub();
  std::ofstream out(absl::GetFlag(FLAGS_ids_out), std::ios::app);
  int consecutive_failures = 0;
  for (int i = 0; i < absl::GetFlag(FLAGS_count) && consecutive_failures < 20; ++i) {
    const std::string id = absl::StrCat(absl::GetFlag(FLAGS_prefix), "-", i);
    v1::AppendRequest request;
    *request.add_events() = MakeEvent(id);
    v1::AppendResponse response;
    grpc::ClientContext context;
    Authorize(context);
    if (stub->Append(&context, request, &response).ok()) {
      out << id << "\n";
      out.flush();
      consecutive_failures = 0;
    } else {
      ++consecutive_failures;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return 0;
}

std::unique_ptr<sharedos::audit::client::AuditClient> Client() {
  sharedos::audit::client::AuditClientOptions options;
  options.token = absl::GetFlag(FLAGS_token);
  options.outbox_path = absl::GetFlag(FLAGS_outbox);
  options.min_backoff = absl::Milliseconds(20);
  options.max_backoff = absl::Milliseconds(200);
  auto client = sharedos::audit::client::AuditClient::Create(Stub(), options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    std::exit(2);
  }
  return *std::move(client);
}

int Post() {
  auto client = Client();
  for (int i = 0; i < absl::GetFlag(FLAGS_count); ++i) {
    absl::Status status =
        client->RecordPostEffect(MakeEvent(absl::StrCat(absl::GetFlag(FLAGS_prefix), "-", i)));
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
  }
  std::printf("recorded %d\n", absl::GetFlag(FLAGS_count));
  std::fflush(stdout);
  while (true) std::this_thread::sleep_for(std::chrono::seconds(60));
}

int Flush() {
  auto client = Client();
  return client->Flush(absl::Seconds(60)) ? 0 : 1;
}

int Check() {
  std::set<std::string> expected;
  for (absl::string_view file :
       absl::StrSplit(absl::GetFlag(FLAGS_ids_in), ',', absl::SkipEmpty())) {
    std::ifstream in{std::string(file)};
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty()) expected.insert(line);
    }
  }
  auto stub = Stub();
  std::map<std::string, int> seen;
  std::string token;
  do {
    v1::QueryRequest request;
    request.set_limit(1000);
    request.set_page_token(token);
    v1::QueryResponse response;
    grpc::ClientContext context;
    Authorize(context);
    grpc::Status status = stub->Query(&context, request, &response);
    if (!status.ok()) {
      std::fprintf(stderr, "query: %s\n", status.error_message().c_str());
      return 1;
    }
    for (const auto& record : response.records()) ++seen[record.event().id()];
    token = response.next_page_token();
  } while (!token.empty());

  int failures = 0;
  for (const std::string& id : expected) {
    auto it = seen.find(id);
    if (it == seen.end()) {
      std::fprintf(stderr, "acknowledged id missing: %s\n", id.c_str());
      ++failures;
    } else if (it->second != 1) {
      std::fprintf(stderr, "id present %d times: %s\n", it->second, id.c_str());
      ++failures;
    }
  }
  int64_t total = 0;
  for (const auto& [id, count] : seen) total += count;
  const int expect_count = absl::GetFlag(FLAGS_expect_count);
  if (expect_count >= 0 && total != expect_count) {
    std::fprintf(stderr, "expected %d records, found %lld\n", expect_count,
                 static_cast<long long>(total));
    ++failures;
  }
  v1::VerifyResponse verify;
  grpc::ClientContext context;
  Authorize(context);
  grpc::Status status = stub->Verify(&context, v1::VerifyRequest(), &verify);
  if (!status.ok() || !verify.ok()) {
    std::fprintf(stderr, "verify failed: %s %s\n", status.error_message().c_str(),
                 verify.detail().c_str());
    ++failures;
  }
  std::printf("checked %zu acknowledged ids against %lld records; verify %s (%lld)\n",
              expected.size(), static_cast<long long>(total), verify.ok() ? "ok" : "FAILED",
              static_cast<long long>(verify.checked()));
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    std::fprintf(stderr, "usage: audit_writer_driver append|post|flush|check --flags\n");
    return 2;
  }
  const std::string mode = args[1];
  if (mode == "append") return Append();
  if (mode == "post") return Post();
  if (mode == "flush") return Flush();
  if (mode == "check") return Check();
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
