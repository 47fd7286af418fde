// envelope_svc latency against the gRPC floor, measured in one run (one process, loopback TCP).
//
//   bazel run //tools/bench:envelope_bench -- --rounds=5 --calls=2000
//
// Wiring, all in this process but every hop a real gRPC call over 127.0.0.1:
//   client ──gRPC──▶ envelope_svc (EnvelopeService + TurnEngine, no-op files provider,
//                    --tools extra registry tools) ──gRPC──▶ authorizer_svc (AuthorizerService +
//                    AuthorizerCore over an in-memory grant store)
// Audit: an in-memory writer on both services (pre-effect records cost nothing here; the
// authorizer_bench measures them against audit_svc).
// Series, interleaved per round so machine load hits them alike:
//   floor        grpc.health.v1.Health/Check on the envelope server (a no-op unary call)
//   authorize    Authorize(lease, consume) straight to the authorizer (one hop of InvokeTool)
//   invoke       InvokeTool files.read: envelope checks, Authorize (declared ceiling checked for
//                discovery, then consuming), the no-op provider, result check, tool.invoked —
//                one authorizer hop inside
//   two hops     the same against a second envelope whose authorizer client splits that call
//                into Discover + Authorize, as the mediator did before (the cost of the hop saved)
//   engine only  the same TurnEngine::InvokeTool called directly over an in-memory authorizer
//                (the envelope's own work: no gRPC hop at all)
//   in-process   sharedosd's path minus the host's gRPC hop: the engine over a real
//                AuthorizerCore called directly, both writing a real SQLite audit log directly
//   sharedosd shape, no audit / audit
//                sharedosd's path with the host's gRPC hop (an EnvelopeService served from this
//                process over the engine and AuthorizerCore called directly, no-op provider):
//                every record kept in memory, then appended to the real SQLite log. The first
//                is the least a mediated call can cost here, whatever the audit log does.
// Each series also reports the calling thread's CPU per call and the allocations per call of the
// whole process (client and servers, every thread: malloc, calloc, new blocks of realloc).
// Then OpenTurn with the whole registry requested (lease, admission, resolution, Discover of
// every tool, listing, reach), its catalogue-resolution share from the engine's own counters,
// and --turns turns held open at once (opened from --threads callers, one call each, all
// finished).
#include <google/protobuf/text_format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "audit_svc/client/log_audit_writer.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "authorizer_svc/client/grpc_authorizer_client.h"
#include "authorizer_svc/client/local_authorizer_client.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "authorizer_svc/server/authorizer_service.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/server/envelope_service.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/client_unary_call.h"
#include "grpcpp/impl/rpc_method.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tools/bench/bench_deployment.h"

// Every heap allocation of this process (malloc, calloc, realloc to a new block; operator new
// goes through malloc), counted so each series reports allocations per call: this binary's
// malloc family wraps glibc's and adds one relaxed increment.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void __libc_free(void* pointer);
}
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace
extern "C" void* malloc(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
extern "C" void* calloc(size_t count, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, size);
}
extern "C" void* realloc(void* pointer, size_t size) {
  if (pointer == nullptr) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(pointer, size);
}
extern "C" void free(void* pointer) { __libc_free(pointer); }

ABSL_FLAG(int, rounds, 5, "Latency rounds (floor, authorize, invoke each).");
ABSL_FLAG(int, calls, 2000, "Calls per series per round.");
ABSL_FLAG(int, warmup, 300, "Unmeasured calls per series first.");
ABSL_FLAG(int, tools, 200, "Extra registry tools (the OpenTurn registry size).");
ABSL_FLAG(int, opens, 300, "OpenTurn calls measured.");
ABSL_FLAG(int, turns, 1000, "Turns held open at once.");
ABSL_FLAG(int, threads, 4, "Callers opening the held turns.");
ABSL_FLAG(std::string, series, "",
          "Only the latency series whose name contains this (e.g. \"in-process\"; for profiling). "
          "The floor always runs.");
ABSL_FLAG(std::string, audit_durability, "normal",
          "SQLite audit log of the in-process series (normal | full).");

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace av1 = ::sharedos::authorizer::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::bench::Authenticate;
using ::sharedos::bench::Percentile;
using Clock = std::chrono::steady_clock;

// The envelope's own service credential (service:envelope), the one the authorizer admits
// (ADR 0014, T4): the envelope and this process call the authorizer with it.
constexpr char kEnvelopeToken[] = "bench-envelope-token";
constexpr char kHostToken[] = "bench-host-token";

// The mediator's former pattern, for comparison in the same run: an Authorize carrying the
// declared ceiling is sent as a Discover of that ceiling, then the Authorize without it.
class TwoHopAuthorizerClient final : public sharedos::authorizer::client::AuthorizerClient {
 public:
  explicit TwoHopAuthorizerClient(sharedos::authorizer::client::AuthorizerClient& inner)
      : inner_(inner) {}
  absl::StatusOr<av1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const av1::OpenTurnAuthorityRequest& r, absl::Duration t) override {
    return inner_.OpenTurnAuthority(r, t);
  }
  absl::StatusOr<av1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const av1::CloseTurnAuthorityRequest& r, absl::Duration t) override {
    return inner_.CloseTurnAuthority(r, t);
  }
  absl::StatusOr<av1::AuthorizeResponse> Authorize(const av1::AuthorizeRequest& r,
                                                   absl::Duration t) override {
    if (!r.has_declared_ceiling()) return inner_.Authorize(r, t);
    av1::DiscoverRequest discover;
    discover.set_lease_id(r.lease_id());
    av1::ToolRequirement* tool = discover.add_tools();
    tool->set_name(r.tool());
    *tool->mutable_requirement() = r.declared_ceiling();
    *discover.mutable_operation_instant() = r.operation_instant();
    absl::StatusOr<av1::DiscoverResponse> discovered = inner_.Discover(discover, t);
    if (!discovered.ok()) return discovered.status();
    av1::AuthorizeRequest decide = r;
    decide.clear_declared_ceiling();
    absl::StatusOr<av1::AuthorizeResponse> decided = inner_.Authorize(decide, t);
    if (decided.ok()) *decided->mutable_discovery() = discovered->entries(0);
    return decided;
  }
  absl::StatusOr<av1::DiscoverResponse> Discover(const av1::DiscoverRequest& r,
                                                 absl::Duration t) override {
    return inner_.Discover(r, t);
  }
  absl::StatusOr<av1::AdmitTurnResponse> AdmitTurn(const av1::AdmitTurnRequest& r,
                                                   absl::Duration t) override {
    return inner_.AdmitTurn(r, t);
  }
  absl::StatusOr<av1::ReachResponse> Reach(const av1::ReachRequest& r, absl::Duration t) override {
    return inner_.Reach(r, t);
  }
  absl::StatusOr<av1::RecordEscalationResponse> RecordEscalation(
      const av1::RecordEscalationRequest& r, absl::Duration t) override {
    return inner_.RecordEscalation(r, t);
  }

 private:
  sharedos::authorizer::client::AuthorizerClient& inner_;
};

// CPU time of the calling thread (user + system), in µs: for an in-process series, the work of
// the call itself whatever else the machine runs (the gRPC series' servers run on other threads).
double ThreadCpuMicros() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

template <typename T>
T Parse(const std::string& text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    std::fprintf(stderr, "bad text proto\n");
    std::abort();
  }
  return message;
}

// The grant: the demo grant (tests/testing/demo_world.h) reading the whole files namespace instead
// of Workspace/** (the turn tests' registry reads under files/, its --tools bulk tools under
// files/Bulk), without the Scratch write no series makes.
pb::CapabilityGrant BenchGrant() {
  pb::CapabilityGrant grant = demo::Grant();
  demo::FindCapability(grant, "files", {"Workspace"})->mutable_resource()->clear_path();
  demo::RemoveCapability(grant, "files", {"Scratch"});
  return grant;
}

// The demo turn with budgets for long series; each series adds the tools it asks for.
pb::ExecutionRequest BenchExecution() {
  pb::ExecutionRequest execution =
      demo::TurnRequest("exec-bench", "trace-bench").execution_request();
  execution.clear_tools();
  execution.mutable_options()->set_max_steps(1000);
  execution.mutable_options()->set_max_tool_calls(10000);
  execution.mutable_options()->set_timeout_ms(600000);
  return execution;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  namespace server = ::sharedos::common::server;
  namespace env = ::sharedos::envelope;
  // As every service binary does (sharedosd among them), so the in-process series run as they
  // would there.
  server::ConfigureServiceProcess();

  // ---- authorizer_svc (in process, its own gRPC server) ----
  sharedos::grantstore::client::FakeGrantStoreClient grantstore;
  grantstore.IssueGrant(BenchGrant());
  sharedos::audit::client::FakeAuditWriter authorizer_audit;
  sharedos::authorizer::core::AuthorizerCore authorizer_core(
      grantstore, authorizer_audit, sharedos::common::RealClock(),
      "bench-lease-secret-0123456789abcdef0123", {});
  const std::string credentials =
      absl::StrCat(R"({"credentials": [{"name": "envelope", "role": "service", "token_sha256": ")",
                   server::TokenDigestHex(kEnvelopeToken),
                   R"("}, {"name": "host", "role": "host", "token_sha256": ")",
                   server::TokenDigestHex(kHostToken), R"(", "scope": {"namespaces": [")",
                   demo::kNamespace, R"("], "owners": ["*"]}}]})");
  auto authenticator = server::Authenticator::FromJson(credentials);
  if (!authenticator.ok()) return 2;
  sharedos::authorizer::server::AuthorizerService authorizer_service(authorizer_core,
                                                                     **authenticator);
  auto authorizer_runner = server::ServerRunner::Start({}, {&authorizer_service});
  if (!authorizer_runner.ok()) return 2;
  auto authorizer_channel =
      grpc::CreateChannel((*authorizer_runner)->address(), grpc::InsecureChannelCredentials());

  // ---- envelope_svc (in process, its own gRPC server) ----
  std::unique_ptr<env::tools::ToolRegistry> registry =
      env::core::testing::TestRegistry(absl::GetFlag(FLAGS_tools));
  env::core::testing::FakeToolProvider noop("files");
  env::tools::AttachedProviders providers;
  providers.files = &noop;
  sharedos::authorizer::client::GrpcAuthorizerClient authorizer_client(
      av1::Authorizer::NewStub(authorizer_channel), kEnvelopeToken);
  sharedos::audit::client::FakeAuditWriter envelope_audit;
  env::core::TurnEngine engine(authorizer_client, *registry, providers, envelope_audit,
                               sharedos::common::RealClock(), {});
  env::server::EnvelopeService envelope_service(engine, **authenticator);
  auto envelope_runner = server::ServerRunner::Start({}, {&envelope_service});
  if (!envelope_runner.ok()) return 2;
  auto channel =
      grpc::CreateChannel((*envelope_runner)->address(), grpc::InsecureChannelCredentials());
  auto envelope = ev1::Envelope::NewStub(channel);
  auto authorizer = av1::Authorizer::NewStub(authorizer_channel);

  const pb::ExecutionRequest base = BenchExecution();
  int next_execution = 0;
  auto open = [&](bool all_tools, std::string* turn_id) {
    ev1::OpenTurnRequest request;
    *request.mutable_execution_request() = base;
    request.mutable_execution_request()->set_execution_id(absl::StrCat("exec-", next_execution++));
    if (all_tools) {
      for (const auto& tool : registry->tools()) {
        request.mutable_execution_request()->add_tools(tool->name());
      }
    } else {
      request.mutable_execution_request()->add_tools("files.read");
    }
    request.set_runtime(ev1::RUNTIME_DRIVER);
    grpc::ClientContext context;
    Authenticate(context, kHostToken);
    ev1::OpenTurnResponse response;
    const bool ok = envelope->OpenTurn(&context, request, &response).ok() && !response.has_result();
    *turn_id = response.turn_id();
    return ok;
  };
  auto cancel = [&](const std::string& turn_id) {
    grpc::ClientContext context;
    Authenticate(context, kHostToken);
    ev1::CancelTurnRequest request;
    request.set_turn_id(turn_id);
    ev1::CancelTurnResponse response;
    return envelope->CancelTurn(&context, request, &response).ok();
  };

  // ---- Latency series ----
  std::string turn_id;
  if (!open(false, &turn_id)) {
    std::fprintf(stderr, "OpenTurn failed\n");
    return 1;
  }
  int calls_on_turn = 0;
  ev1::InvokeToolRequest invoke = Parse<ev1::InvokeToolRequest>(R"pb(
    call {
      tool: "files.read"
      trace_id: "trace-bench"
      arguments {
        fields {
          key: "path"
          value { string_value: "Workspace/notes.txt" }
        }
      }
      requested_at { seconds: 1786438800 }
    })pb");
  int64_t next_call = 0;
  std::function<bool()> invoke_call = [&] {
    if (++calls_on_turn > 9000) {  // stay under the turn's 10,000-call budget
      cancel(turn_id);
      if (!open(false, &turn_id)) return false;
      calls_on_turn = 1;
    }
    invoke.set_turn_id(turn_id);
    invoke.mutable_call()->set_id(absl::StrCat("call-", next_call++));
    grpc::ClientContext context;
    Authenticate(context, kHostToken);
    ev1::InvokeToolResponse response;
    return envelope->InvokeTool(&context, invoke, &response).ok() &&
           response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED;
  };

  // One lease for the direct Authorize series.
  av1::OpenTurnAuthorityRequest lease_request;
  *lease_request.mutable_context() = base.context();
  lease_request.set_turn_id("bench-direct");
  av1::OpenTurnAuthorityResponse lease;
  {
    grpc::ClientContext context;
    Authenticate(context, kEnvelopeToken);
    if (!authorizer->OpenTurnAuthority(&context, lease_request, &lease).ok()) return 1;
  }
  av1::AuthorizeRequest authorize_request;
  authorize_request.set_lease_id(lease.lease_id());
  *authorize_request.mutable_requirement() = Parse<pb::CapabilityRequirement>(
      R"pb(resource { namespace: "files" path: "Workspace" path: "notes.txt" }
           action: "read")pb");
  authorize_request.set_consume(true);
  authorize_request.set_tool("files.read");
  std::function<bool()> authorize_call = [&] {
    authorize_request.set_operation_id(absl::StrCat("op-", next_call++));
    grpc::ClientContext context;
    Authenticate(context, kEnvelopeToken);
    av1::AuthorizeResponse response;
    return authorizer->Authorize(&context, authorize_request, &response).ok() &&
           response.decision().allowed();
  };

  const grpc::internal::RpcMethod health("/grpc.health.v1.Health/Check",
                                         grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::Slice empty("");
  const grpc::ByteBuffer health_request(&empty, 1);
  std::function<bool()> floor_call = [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::ByteBuffer response;
    return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
               channel.get(), health, &context, health_request, &response)
        .ok();
  };

  // The envelope's own work: the same engine code over an in-memory authorizer, no gRPC.
  sharedos::authorizer::client::FakeAuthorizerClient memory_authorizer;
  sharedos::audit::client::FakeAuditWriter memory_audit;
  env::core::TurnEngine memory_engine(memory_authorizer, *registry, providers, memory_audit,
                                      sharedos::common::RealClock(), {});
  const sharedos::common::server::HostScope bench_scope{{demo::kNamespace}, {"*"}, {}};
  std::string memory_turn;
  int memory_calls = 0;
  auto memory_open = [&] {
    ev1::OpenTurnRequest request;
    *request.mutable_execution_request() = base;
    request.mutable_execution_request()->set_execution_id(absl::StrCat("mem-", next_execution++));
    request.mutable_execution_request()->add_tools("files.read");
    request.set_runtime(ev1::RUNTIME_DRIVER);
    auto opened = memory_engine.OpenTurn(request, bench_scope);
    if (!opened.ok() || opened->has_result()) return false;
    memory_turn = opened->turn_id();
    memory_calls = 0;
    return true;
  };
  if (!memory_open()) return 1;
  std::function<bool()> engine_call = [&] {
    if (++memory_calls > 9000 && !memory_open()) return false;
    ev1::InvokeToolRequest request = invoke;
    request.set_turn_id(memory_turn);
    request.mutable_call()->set_id(absl::StrCat("mem-call-", next_call++));
    auto result = memory_engine.InvokeTool(request, bench_scope);
    return result.ok() && result->result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED;
  };

  // sharedosd's hot path without its gRPC hop: the engine calling a real AuthorizerCore
  // directly (LocalAuthorizerClient), every record appended to a real SQLite audit log
  // (LogAuditWriter; durability --audit_durability): authorization.checked before the provider,
  // tool.invoked after it.
  const std::string audit_path = absl::StrCat("/tmp/sharedos-envelope-bench-", getpid(), ".db");
  sharedos::audit::storage::SqliteAuditStore::Options store_options;
  store_options.durability = absl::GetFlag(FLAGS_audit_durability) == "full"
                                 ? sharedos::audit::storage::SqliteAuditStore::Durability::kFull
                                 : sharedos::audit::storage::SqliteAuditStore::Durability::kNormal;
  auto audit_store = sharedos::audit::storage::SqliteAuditStore::Open(audit_path, store_options);
  if (!audit_store.ok()) return 2;
  sharedos::audit::core::AuditLog audit_log(*std::move(audit_store), sharedos::common::RealClock(),
                                            {});
  sharedos::audit::client::FakeAuditWriter unused_outbox;
  // As sharedosd: each service writes as its own principal (ADR 0014).
  sharedos::audit::client::LogAuditWriter log_writer(audit_log, unused_outbox,
                                                     "service:authorizer");
  sharedos::audit::client::LogAuditWriter envelope_writer(audit_log, unused_outbox,
                                                          "service:envelope");
  sharedos::authorizer::core::AuthorizerCore local_authorizer_core(
      grantstore, log_writer, sharedos::common::RealClock(),
      "bench-lease-secret-0123456789abcdef0123", {});
  sharedos::authorizer::client::LocalAuthorizerClient local_client(local_authorizer_core);
  env::core::TurnEngine local_engine(local_client, *registry, providers, envelope_writer,
                                     sharedos::common::RealClock(), {});
  std::string local_turn;
  int local_calls = 0;
  std::function<bool()> local_call = [&] {
    if (local_turn.empty() || ++local_calls > 9000) {
      ev1::OpenTurnRequest request;
      *request.mutable_execution_request() = base;
      request.mutable_execution_request()->set_execution_id(
          absl::StrCat("local-", next_execution++));
      request.mutable_execution_request()->add_tools("files.read");
      request.set_runtime(ev1::RUNTIME_DRIVER);
      auto opened = local_engine.OpenTurn(request, bench_scope);
      if (!opened.ok() || opened->has_result()) return false;
      local_turn = opened->turn_id();
      local_calls = 1;
    }
    ev1::InvokeToolRequest request = invoke;
    request.set_turn_id(local_turn);
    request.mutable_call()->set_id(absl::StrCat("local-call-", next_call++));
    auto result = local_engine.InvokeTool(request, bench_scope);
    return result.ok() && result->result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED;
  };

  // A host's turn on one of the in-bench envelope servers: InvokeTool over `stub`, opening a turn
  // first and again every 9,000 calls (the turn's budget is 10,000).
  struct GrpcTurn {
    std::unique_ptr<ev1::Envelope::Stub> stub;
    std::string prefix;
    std::string turn;
    int calls = 0;
  };
  auto grpc_turn_call = [&](GrpcTurn& t) {
    if (t.turn.empty() || ++t.calls > 9000) {
      ev1::OpenTurnRequest request;
      *request.mutable_execution_request() = base;
      request.mutable_execution_request()->set_execution_id(
          absl::StrCat(t.prefix, next_execution++));
      request.mutable_execution_request()->add_tools("files.read");
      request.set_runtime(ev1::RUNTIME_DRIVER);
      grpc::ClientContext context;
      Authenticate(context, kHostToken);
      ev1::OpenTurnResponse response;
      if (!t.stub->OpenTurn(&context, request, &response).ok() || response.has_result()) {
        return false;
      }
      t.turn = response.turn_id();
      t.calls = 1;
    }
    ev1::InvokeToolRequest request = invoke;
    request.set_turn_id(t.turn);
    request.mutable_call()->set_id(absl::StrCat(t.prefix, "call-", next_call++));
    grpc::ClientContext context;
    Authenticate(context, kHostToken);
    ev1::InvokeToolResponse response;
    return t.stub->InvokeTool(&context, request, &response).ok() &&
           response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED;
  };

  // sharedosd's shape over gRPC, served from this process: the host's hop into an EnvelopeService
  // whose engine calls an AuthorizerCore directly, with the no-op provider. Once with every record
  // kept in memory (what the hop, the engine and the decision cost with the audit log free) and
  // once over local_engine's real SQLite log. Against the floor these two bound what any audit
  // design can win: the first is the best a mediated call can do here.
  sharedos::audit::client::FakeAuditWriter quiet_authorizer_audit;
  sharedos::authorizer::core::AuthorizerCore quiet_authorizer_core(
      grantstore, quiet_authorizer_audit, sharedos::common::RealClock(),
      "bench-lease-secret-0123456789abcdef0123", {});
  sharedos::authorizer::client::LocalAuthorizerClient quiet_client(quiet_authorizer_core);
  sharedos::audit::client::FakeAuditWriter quiet_audit;
  env::core::TurnEngine quiet_engine(quiet_client, *registry, providers, quiet_audit,
                                     sharedos::common::RealClock(), {});
  env::server::EnvelopeService quiet_service(quiet_engine, **authenticator);
  env::server::EnvelopeService local_service(local_engine, **authenticator);
  auto shaped_runner = server::ServerRunner::Start({}, {&quiet_service});
  auto shaped_audit_runner = server::ServerRunner::Start({}, {&local_service});
  if (!shaped_runner.ok() || !shaped_audit_runner.ok()) return 2;
  GrpcTurn shaped{ev1::Envelope::NewStub(grpc::CreateChannel((*shaped_runner)->address(),
                                                             grpc::InsecureChannelCredentials())),
                  "shaped-", "", 0};
  GrpcTurn shaped_audit{ev1::Envelope::NewStub(grpc::CreateChannel(
                            (*shaped_audit_runner)->address(), grpc::InsecureChannelCredentials())),
                        "shaped-audit-", "", 0};
  std::function<bool()> shaped_call = [&] { return grpc_turn_call(shaped); };
  std::function<bool()> shaped_audit_call = [&] { return grpc_turn_call(shaped_audit); };

  // The former two-hop mediation, same run: a second envelope over the same authorizer.
  TwoHopAuthorizerClient two_hop_client(authorizer_client);
  sharedos::audit::client::FakeAuditWriter two_hop_audit;
  env::core::TurnEngine two_hop_engine(two_hop_client, *registry, providers, two_hop_audit,
                                       sharedos::common::RealClock(), {});
  env::server::EnvelopeService two_hop_service(two_hop_engine, **authenticator);
  auto two_hop_runner = server::ServerRunner::Start({}, {&two_hop_service});
  if (!two_hop_runner.ok()) return 2;
  GrpcTurn two_hop{ev1::Envelope::NewStub(grpc::CreateChannel((*two_hop_runner)->address(),
                                                              grpc::InsecureChannelCredentials())),
                   "two-hop-", "", 0};
  std::function<bool()> two_hop_call = [&] { return grpc_turn_call(two_hop); };

  struct Series {
    std::string name;
    std::function<bool()>* call;
    std::vector<double> micros;
    double thread_cpu_micros = 0;  // the calling thread's CPU time over the measured calls
    uint64_t allocations = 0;      // every thread's, client and servers, over the measured calls
  };
  std::vector<Series> series = {{"floor (health Check)", &floor_call, {}},
                                {"Authorize (1 hop)", &authorize_call, {}},
                                {"InvokeTool (mediated)", &invoke_call, {}},
                                {"  before: two auth hops", &two_hop_call, {}},
                                {"  engine only, no gRPC", &engine_call, {}},
                                {"  in-process, real audit", &local_call, {}},
                                {"sharedosd shape, no audit", &shaped_call, {}},
                                {"sharedosd shape, audit", &shaped_audit_call, {}}};
  if (const std::string only = absl::GetFlag(FLAGS_series); !only.empty()) {
    series.erase(std::remove_if(series.begin() + 1, series.end(),
                                [&](const Series& s) { return !absl::StrContains(s.name, only); }),
                 series.end());
  }
  for (Series& s : series) {
    for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
      if (!(*s.call)()) {
        std::fprintf(stderr, "%s failed\n", s.name.c_str());
        return 1;
      }
    }
  }
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    for (Series& s : series) {
      const double cpu_start = ThreadCpuMicros();
      const uint64_t allocations_start = g_allocations.load();
      for (int i = 0; i < absl::GetFlag(FLAGS_calls); ++i) {
        const auto start = Clock::now();
        if (!(*s.call)()) {
          std::fprintf(stderr, "%s failed\n", s.name.c_str());
          return 1;
        }
        s.micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      s.allocations += g_allocations.load() - allocations_start;
      s.thread_cpu_micros += ThreadCpuMicros() - cpu_start;
    }
  }
  const double floor_p50 = Percentile(series[0].micros, 0.5);
  const double floor_p99 = Percentile(series[0].micros, 0.99);
  std::printf("envelope_bench: %d rounds x %d calls, one caller, loopback TCP, one process\n",
              absl::GetFlag(FLAGS_rounds), absl::GetFlag(FLAGS_calls));
  std::printf("%-26s %9s %9s %9s %9s %9s %9s\n", "series", "p50 us", "p99 us", "p50/floor",
              "p99/floor", "cpu us", "allocs");
  for (const Series& s : series) {
    const double p50 = Percentile(s.micros, 0.5);
    const double p99 = Percentile(s.micros, 0.99);
    std::printf("%-26s %9.1f %9.1f %9.2f %9.2f %9.1f %9.1f\n", s.name.c_str(), p50, p99,
                p50 / floor_p50, p99 / floor_p99,
                s.thread_cpu_micros / static_cast<double>(s.micros.size()),
                static_cast<double>(s.allocations) / static_cast<double>(s.micros.size()));
  }
  cancel(turn_id);
  {
    grpc::ClientContext context;
    Authenticate(context, kHostToken);
    ev1::CancelTurnRequest request;
    request.set_turn_id(two_hop.turn);
    ev1::CancelTurnResponse response;
    (void)two_hop.stub->CancelTurn(&context, request, &response);
  }

  // ---- OpenTurn with the whole registry ----
  // Per open: the whole RPC as the host sees it, and the engine's own counters around it.
  std::vector<double> opens, resolutions, publications, discoveries;
  for (int i = 0; i < absl::GetFlag(FLAGS_opens); ++i) {
    const env::core::TurnEngine::Stats before = engine.stats();
    const auto start = Clock::now();
    std::string id;
    if (!open(true, &id)) {
      std::fprintf(stderr, "OpenTurn (all tools) failed\n");
      return 1;
    }
    opens.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    const env::core::TurnEngine::Stats after = engine.stats();
    resolutions.push_back(
        absl::ToDoubleMicroseconds(after.catalog_resolution - before.catalog_resolution));
    publications.push_back(
        absl::ToDoubleMicroseconds(after.catalog_publication - before.catalog_publication));
    discoveries.push_back(absl::ToDoubleMicroseconds(after.discovery - before.discovery));
    cancel(id);
  }
  const double open_p50 = Percentile(opens, 0.5);
  std::printf("\nOpenTurn, %zu-tool registry, every tool requested (%d opens; p50 / p99)\n",
              registry->tools().size(), absl::GetFlag(FLAGS_opens));
  auto line = [&](const char* name, const std::vector<double>& values) {
    const double p50 = Percentile(values, 0.5);
    std::printf("  %-32s %8.1f / %8.1f us  (p50 = %4.1f%% of OpenTurn p50)\n", name, p50,
                Percentile(values, 0.99), 100 * p50 / open_p50);
  };
  line("OpenTurn (host's view)", opens);
  line("catalogue resolution", resolutions);
  line("publication (copy into response)", publications);
  line("Discover (request + round trip)", discoveries);

  // ---- Many turns held open at once ----
  const int turns = absl::GetFlag(FLAGS_turns);
  const int threads = absl::GetFlag(FLAGS_threads);
  std::vector<std::string> ids(turns);
  std::atomic<int> failures{0};
  std::atomic<int> execution{1000000};
  auto start = Clock::now();
  {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int i = t; i < turns; i += threads) {
          ev1::OpenTurnRequest request;
          *request.mutable_execution_request() = base;
          request.mutable_execution_request()->set_execution_id(absl::StrCat("held-", execution++));
          request.mutable_execution_request()->add_tools("files.read");
          request.set_runtime(ev1::RUNTIME_DRIVER);
          grpc::ClientContext context;
          Authenticate(context, kHostToken);
          ev1::OpenTurnResponse response;
          if (!envelope->OpenTurn(&context, request, &response).ok() || response.has_result()) {
            ++failures;
            continue;
          }
          ids[i] = response.turn_id();
        }
      });
    }
    for (auto& worker : workers) worker.join();
  }
  const double open_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const size_t held = engine.running_turns();
  start = Clock::now();
  {
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        for (int i = t; i < turns; i += threads) {
          ev1::InvokeToolRequest call = invoke;
          call.set_turn_id(ids[i]);
          call.mutable_call()->set_id(absl::StrCat("held-call-", i));
          grpc::ClientContext context;
          Authenticate(context, kHostToken);
          ev1::InvokeToolResponse response;
          if (!envelope->InvokeTool(&context, call, &response).ok() ||
              response.result().status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
            ++failures;
          }
          ev1::FinishTurnRequest finish;
          finish.set_turn_id(ids[i]);
          finish.mutable_complete()->mutable_output()->set_bool_value(true);
          grpc::ClientContext finish_context;
          Authenticate(finish_context, kHostToken);
          ev1::FinishTurnResponse finished;
          if (!envelope->FinishTurn(&finish_context, finish, &finished).ok() ||
              finished.result().status() != pb::EXECUTION_STATUS_SUCCEEDED) {
            ++failures;
          }
        }
      });
    }
    for (auto& worker : workers) worker.join();
  }
  const double use_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("\n%d turns held open at once (%d callers): %zu running after opening, %d errors\n",
              turns, threads, held, failures.load());
  std::printf(
      "  open all: %.2f s (%.0f turns/s); one call + finish each: %.2f s; running after: "
      "%zu; authorizer leases held after: %d\n",
      open_seconds, turns / open_seconds, use_seconds, engine.running_turns(),
      authorizer_core.held_leases());
  std::remove(audit_path.c_str());
  std::remove((audit_path + "-wal").c_str());
  std::remove((audit_path + "-shm").c_str());
  (*envelope_runner)->Shutdown();
  (*two_hop_runner)->Shutdown();
  (*shaped_runner)->Shutdown();
  (*shaped_audit_runner)->Shutdown();
  (*authorizer_runner)->Shutdown();
  return failures.load() == 0 && held == static_cast<size_t>(turns) ? 0 : 1;
}
