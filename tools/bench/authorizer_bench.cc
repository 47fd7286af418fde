// authorizer_svc latency and throughput against the gRPC floor, measured in one run on loopback.
//
//   bazel run //tools/bench:authorizer_bench -- --rounds=5 --calls=3000
//
// Spawns the real binaries (the runfiles of this target): audit_svc (SQLite, --durability as
// flagged), grantstore_svc, and two authorizer_svc processes, one with --audit=remote and one
// with --audit=local. Issues a 100-grant authority (99 grants that do not serve the request, then
// the one that does, so every decision walks the worst allow case), opens one lease per
// authorizer and measures, from this process with synchronous stubs:
//   floor      grpc.health.v1.Health/Check on the remote-mode authorizer (a no-op unary call
//              through the same server, ServerRunner and loopback)
//   remote     Authorize(lease, consume, unbounded grant): decide + authorization.checked
//              appended to audit_svc synchronously + answer
//   local      the same with the record fsynced into the authorizer's outbox
//   local, no fsync   the same with --audit_outbox_durability=normal (the outbox commits
//              without fsync: the record survives a crash of the authorizer, not a power loss)
// Latency: one caller, rounds interleaved (floor, remote, local per round) so machine load hits
// all three alike; p50/p99 over all rounds and the ratios to the floor's. Throughput: --threads
// callers sharing one channel for --seconds each, as calls per second and as a ratio, with the
// CPU (user + system, every thread) the serving process used per call over that phase.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/server/auth.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/client_unary_call.h"
#include "grpcpp/impl/rpc_method.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/process.h"
#include "tools/bench/bench_deployment.h"

ABSL_FLAG(int, rounds, 5, "Latency rounds (floor, remote, local each).");
ABSL_FLAG(int, calls, 3000, "Calls per series per round.");
ABSL_FLAG(int, warmup, 500, "Unmeasured calls per series before the first round.");
ABSL_FLAG(int, threads, 16, "Concurrent callers for the throughput phase.");
ABSL_FLAG(double, seconds, 3, "Duration of each throughput series.");
ABSL_FLAG(std::string, audit_durability, "normal", "audit_svc --durability (normal | full).");

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::authorizer::v1;
using ::sharedos::bench::Die;
using ::sharedos::bench::Percentile;
using ::sharedos::bench::ProcessCpuMicros;
using ::sharedos::testing::Process;
using ::sharedos::testing::WriteFile;
using Clock = std::chrono::steady_clock;

constexpr char kAdminToken[] = "bench-admin-token";
// Each service its own credential (ADR 0014, T4): the authorizers present the authorizer's to
// the grant store and the audit log (so does the audit diagnostic, an authorizer record); this
// process calls the authorizers as the envelope, their only caller.
constexpr char kAuthorizerToken[] = "bench-authorizer-token";
constexpr char kEnvelopeToken[] = "bench-envelope-token";
constexpr int kGrants = 100;

void Authenticate(grpc::ClientContext& context, const char* token) {
  sharedos::bench::Authenticate(context, token, absl::Seconds(10));
}

pb::CapabilityGrant Grant(int i, bool serves) {
  pb::CapabilityGrant grant;
  grant.set_id(absl::StrCat("bench-grant-", i));
  grant.set_namespace_id("world-1");
  grant.mutable_subject()->set_agent_id("alice-assistant");
  grant.mutable_issuer()->set_human_user_id("alice");
  for (int c = 0; c < 4; ++c) {
    pb::Capability* capability = grant.add_capabilities();
    capability->mutable_resource()->set_namespace_("files");
    capability->mutable_resource()->add_path("projects");
    capability->mutable_resource()->add_path(
        serves && c == 3 ? "target-project" : absl::StrCat("project-", i, "-", c));
    capability->add_actions(c % 2 == 0 ? "read" : "write");
    capability->set_scope(pb::SCOPE_DESCENDANTS);
  }
  grant.mutable_constraints();
  grant.mutable_issued_at()->set_seconds(1767225600 - 3600);  // T0 − 1h.
  return grant;
}

pb::AccessContext Context() {
  pb::AccessContext context;
  context.set_namespace_id("world-1");
  context.mutable_actor()->set_agent_id("alice-assistant");
  context.mutable_authority()->set_human_user_id("alice");
  context.mutable_owner()->set_human_user_id("alice");
  context.set_purpose("assist");
  context.set_trace_id("bench-trace");
  context.mutable_now()->set_seconds(1767225600);  // 2026-01-01T00:00:00Z.
  return context;
}

// One kind of call, repeatable from any thread.
using Caller = std::function<bool()>;

struct Series {
  std::string name;
  Caller call;
  std::vector<double> micros;
  double throughput = 0;
  // The server process the call lands on, and its CPU (user + system, all threads) per call
  // over the throughput phase.
  pid_t server = 0;
  double server_cpu_micros = 0;
};

void Measure(Series& series, int calls) {
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    if (!series.call()) Die(absl::StrCat(series.name, ": call failed"));
    series.micros.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
}

// Calls per second; `calls` receives how many were made.
double Throughput(const Caller& call, int threads, double seconds, int64_t* calls) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> done{0};
  std::vector<std::thread> workers;
  const auto start = Clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      int64_t mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        if (!call()) Die("throughput call failed");
        ++mine;
      }
      done += mine;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& worker : workers) worker.join();
  *calls = done.load();
  return done.load() / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string dir = absl::StrCat("/tmp/sharedos-authorizer-bench-", getpid());
  sharedos::bench::FreshDirectory(dir);
  const auto path = [&](const std::string& name) { return absl::StrCat(dir, "/", name); };
  using sharedos::common::server::TokenDigestHex;
  if (!WriteFile(
           path("credentials.json"),
           absl::StrCat(R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")",
                        TokenDigestHex(kAdminToken),
                        R"("}, {"name": "authorizer", "role": "service", "token_sha256": ")",
                        TokenDigestHex(kAuthorizerToken),
                        R"("}, {"name": "envelope", "role": "service", "token_sha256": ")",
                        TokenDigestHex(kEnvelopeToken), R"("}]})"))
           .ok() ||
      !WriteFile(path("authorizer.token"), kAuthorizerToken).ok() ||
      !WriteFile(path("lease.secret"), "bench-lease-secret-0123456789abcdef").ok()) {
    Die("cannot write configuration");
  }
  const auto start = [&](const std::string& runfile, const std::string& name,
                         std::vector<std::string> args) {
    return sharedos::bench::StartServiceOrDie(runfile, args, name, argv[0]);
  };
  const std::string credentials = "--credentials=" + path("credentials.json");
  auto audit = start("audit_svc/server/audit_svc", "audit_svc",
                     {"--port=0", "--db=" + path("audit.db"),
                      "--durability=" + absl::GetFlag(FLAGS_audit_durability), credentials});
  auto grantstore =
      start("grantstore_svc/server/grantstore_svc", "grantstore_svc",
            {"--port=0", "--db=" + path("grantstore.db"), credentials, "--audit=discard"});
  const auto authorizer = [&](const std::string& mode, const std::string& outbox_durability) {
    return start(
        "authorizer_svc/server/authorizer_svc", "authorizer_svc",
        {"--port=0", credentials, "--grantstore_target=" + grantstore->address(),
         "--grantstore_token_file=" + path("authorizer.token"),
         "--lease_secret_file=" + path("lease.secret"), "--audit=" + mode,
         "--audit_target=" + audit->address(), "--audit_token_file=" + path("authorizer.token"),
         "--audit_outbox=" + path("outbox-" + mode + "-" + outbox_durability + ".db"),
         "--audit_outbox_durability=" + outbox_durability});
  };
  auto remote = authorizer("remote", "full");
  auto local = authorizer("local", "full");
  auto local_normal = authorizer("local", "normal");
  auto discard = authorizer("discard", "full");

  auto store = gs::GrantStore::NewStub(
      grpc::CreateChannel(grantstore->address(), grpc::InsecureChannelCredentials()));
  for (int i = 0; i < kGrants; ++i) {
    gs::IssueGrantRequest request;
    *request.mutable_grant() = Grant(i, i == kGrants - 1);
    gs::IssueGrantResponse response;
    grpc::ClientContext context;
    Authenticate(context, kAdminToken);
    const grpc::Status status = store->IssueGrant(&context, request, &response);
    if (!status.ok()) Die("IssueGrant: " + status.error_message());
  }

  struct Target {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<av1::Authorizer::Stub> stub;
    av1::AuthorizeRequest request;
  };
  const auto target = [&](const Process& process) {
    Target t;
    t.channel = grpc::CreateChannel(process.address(), grpc::InsecureChannelCredentials());
    t.stub = av1::Authorizer::NewStub(t.channel);
    av1::OpenTurnAuthorityRequest open;
    *open.mutable_context() = Context();
    open.set_turn_id("bench-turn");
    av1::OpenTurnAuthorityResponse lease;
    grpc::ClientContext context;
    Authenticate(context, kEnvelopeToken);
    const grpc::Status status = t.stub->OpenTurnAuthority(&context, open, &lease);
    if (!status.ok() || lease.status() != av1::LEASE_STATUS_RESOLVED ||
        lease.grant_count() != kGrants) {
      Die("OpenTurnAuthority did not resolve the 100-grant authority");
    }
    t.request.set_lease_id(lease.lease_id());
    pb::CapabilityRequirement* requirement = t.request.mutable_requirement();
    requirement->mutable_resource()->set_namespace_("files");
    requirement->mutable_resource()->add_path("projects");
    requirement->mutable_resource()->add_path("target-project");
    requirement->mutable_resource()->add_path("notes.md");
    requirement->set_action("write");
    t.request.set_consume(true);
    t.request.set_operation_id("call-bench");
    t.request.set_tool("files.write");
    return t;
  };
  Target remote_target = target(*remote);
  Target local_target = target(*local);
  Target local_normal_target = target(*local_normal);
  Target discard_target = target(*discard);

  const auto authorize = [](Target& t) {
    return [&t] {
      av1::AuthorizeResponse response;
      grpc::ClientContext context;
      Authenticate(context, kEnvelopeToken);
      return t.stub->Authorize(&context, t.request, &response).ok() &&
             response.decision().allowed();
    };
  };
  const grpc::internal::RpcMethod health("/grpc.health.v1.Health/Check",
                                         grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::Slice empty("");
  const grpc::ByteBuffer health_request(&empty, 1);
  Caller floor = [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::ByteBuffer response;
    return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
               remote_target.channel.get(), health, &context, health_request, &response)
        .ok();
  };

  // Diagnostic: the pre-effect hop alone, one authorization.checked-sized event per Append.
  auto audit_stub = sharedos::audit::v1::AuditLog::NewStub(
      grpc::CreateChannel(audit->address(), grpc::InsecureChannelCredentials()));
  std::atomic<int64_t> next_event{0};
  Caller append = [&] {
    sharedos::audit::v1::AppendRequest request;
    pb::AuditEvent* event = request.add_events();
    event->set_version("1");
    event->set_id(absl::StrCat("bench-", next_event++, "-0000-4000-8000-000000000000"));
    event->set_type(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
    event->set_outcome(pb::AUDIT_OUTCOME_ALLOWED);
    *event->mutable_at() = Context().now();
    event->set_trace_id("bench-trace");
    event->set_namespace_id("world-1");
    *event->mutable_actor() = Context().actor();
    *event->mutable_authority() = Context().authority();
    *event->mutable_owner() = Context().owner();
    event->set_purpose("assist");
    *event->mutable_resource() = remote_target.request.requirement().resource();
    event->set_action("write");
    event->set_grant_id("bench-grant-99");
    event->set_authority_hash(std::string(64, 'a'));
    event->set_operation_id("call-bench");
    event->set_tool("files.write");
    event->set_consumed(false);
    event->set_source(pb::AUDIT_SOURCE_KERNEL);
    sharedos::audit::v1::AppendResponse response;
    grpc::ClientContext context;
    Authenticate(context, kAuthorizerToken);
    return audit_stub->Append(&context, request, &response).ok();
  };

  std::vector<Series> series = {
      {"floor (health Check)", floor, {}, 0, remote->pid()},
      {"Authorize, remote audit", authorize(remote_target), {}, 0, remote->pid()},
      {"Authorize, local audit", authorize(local_target), {}, 0, local->pid()},
      {"Authorize, local, no fsync", authorize(local_normal_target), {}, 0, local_normal->pid()},
      {"Authorize, audit discarded", authorize(discard_target), {}, 0, discard->pid()},
      {"audit Append, 1 event", append, {}, 0, audit->pid()}};
  for (Series& s : series) {
    for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
      if (!s.call()) Die(s.name + ": warm-up call failed");
    }
  }
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    for (Series& s : series) Measure(s, absl::GetFlag(FLAGS_calls));
  }
  for (Series& s : series) {
    int64_t calls = 0;
    const double cpu_start = ProcessCpuMicros(s.server);
    s.throughput =
        Throughput(s.call, absl::GetFlag(FLAGS_threads), absl::GetFlag(FLAGS_seconds), &calls);
    if (calls > 0) s.server_cpu_micros = (ProcessCpuMicros(s.server) - cpu_start) / calls;
  }

  const double floor_p50 = Percentile(series[0].micros, 0.5);
  const double floor_p99 = Percentile(series[0].micros, 0.99);
  std::printf(
      "authorizer_bench: %d grants, %d rounds x %d calls, audit_svc durability %s, "
      "%d callers x %.1fs\n",
      kGrants, absl::GetFlag(FLAGS_rounds), absl::GetFlag(FLAGS_calls),
      absl::GetFlag(FLAGS_audit_durability).c_str(), absl::GetFlag(FLAGS_threads),
      absl::GetFlag(FLAGS_seconds));
  std::printf("%-26s %9s %9s %9s %9s %12s %9s %13s\n", "series", "p50 us", "p99 us", "p50/floor",
              "p99/floor", "calls/s", "tput/floor", "server cpu us");
  for (const Series& s : series) {
    const double p50 = Percentile(s.micros, 0.5);
    const double p99 = Percentile(s.micros, 0.99);
    std::printf("%-26s %9.1f %9.1f %9.2f %9.2f %12.0f %9.2f %13.1f\n", s.name.c_str(), p50, p99,
                p50 / floor_p50, p99 / floor_p99, s.throughput, s.throughput / series[0].throughput,
                s.server_cpu_micros);
  }
  remote.reset();
  local.reset();
  local_normal.reset();
  discard.reset();
  grantstore.reset();
  audit.reset();
  // The scratch directory is only ours; failing to remove it is reported, not fatal.
  std::error_code error_on_cleanup;
  if (std::filesystem::remove_all(dir, error_on_cleanup) == static_cast<std::uintmax_t>(-1)) {
    std::fprintf(stderr, "cannot remove %s: %s\n", dir.c_str(), error_on_cleanup.message().c_str());
  }
  return 0;
}
