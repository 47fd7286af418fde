// A full mediated InvokeTool against the gRPC floor, through real deployments, in one run.
//
//   bazel run //tools/bench:invoke_bench -- --rounds=5 --calls=1000 --audit_durability=normal
//
// Starts, from this target's runfiles, the deployments a host can talk to (--deployments):
//   four      audit_svc (SQLite, --audit_durability), grantstore_svc, authorizer_svc and
//             envelope_svc, each its own process on loopback; every writer with its outbox
//             (--outbox_durability), pre-effect records appended to audit_svc before the answer
//             (--audit_mode=remote, as the e2e tests in tests/e2e wire them) or made durable
//             in the writer's outbox and shipped from there (--audit_mode=local);
//   sharedosd the one-process default (--audit_durability), in-process authorizer and audit.
// Both serve the same one-tool registry (files.read over the built-in files provider, reading a
// 9-byte file) and the same grant, from the demo world (tests/testing/demo_world.h), started by
// the cross-service harness (tests/testing/deployment.h). For each deployment, series interleaved
// round by round so machine load hits them alike, one caller, synchronous stubs:
//   floor   grpc.health.v1.Health/Check on the envelope's own server (a no-op unary call)
//   invoke  InvokeTool files.read: envelope checks, discovery + consuming Authorize (one
//           authorizer call), authorization.checked durable before the answer, the provider,
//           result check, tool.invoked (post-effect)
// p50/p99 over all rounds, each invoke's ratio to the floor of its own server, and the CPU the
// deployment's server processes used per call (user + system, from /proc, all their threads:
// background checkpoints and outbox shipping included), in total and, for a deployment of several
// processes, per process (which process a call's CPU goes to).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/client_unary_call.h"
#include "grpcpp/impl/rpc_method.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tools/bench/bench_deployment.h"

ABSL_FLAG(int, rounds, 5, "Latency rounds (every series each round).");
ABSL_FLAG(int, calls, 1000, "Calls per series per round.");
ABSL_FLAG(int, warmup, 300, "Unmeasured calls per series first.");
ABSL_FLAG(std::string, audit_durability, "normal",
          "audit_svc and sharedosd --durability (normal | full).");
ABSL_FLAG(std::string, deployments, "four,sharedosd",
          "Which deployments to start and measure: four (the four binaries), sharedosd, or both "
          "(comma-separated; one alone is for profiling it).");
ABSL_FLAG(std::string, audit_mode, "remote",
          "Four processes: how authorizer_svc and envelope_svc write pre-effect records (remote: "
          "appended to audit_svc before the answer; local: made durable in the writer's own outbox "
          "and shipped from there). Post-effect records always go through the outbox.");
ABSL_FLAG(std::string, outbox_durability, "full",
          "grantstore_svc, authorizer_svc and envelope_svc --audit_outbox_durability "
          "(full | normal).");

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace gs = ::sharedos::grantstore::v1;
using ::sharedos::bench::Authenticate;
using ::sharedos::bench::Die;
using ::sharedos::bench::Percentile;
using ::sharedos::bench::ProcessCpuMicros;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::SharedosdDeployment;
using Clock = std::chrono::steady_clock;

constexpr char kAdminToken[] = "bench-admin-token";
constexpr char kHostToken[] = "bench-host-token";

// The command name of a process (/proc/<pid>/comm), for the per-process CPU lines.
std::string ProcessName(pid_t pid) {
  std::FILE* file = std::fopen(absl::StrCat("/proc/", pid, "/comm").c_str(), "r");
  if (file == nullptr) return absl::StrCat("pid ", pid);
  char buffer[64] = {};
  const size_t read = std::fread(buffer, 1, sizeof(buffer) - 1, file);
  std::fclose(file);
  std::string name(buffer, read);
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

// p50 of one fdatasync after a 4 KiB append to a file in `dir` (the disk the audit log is on):
// the part a `full` commit adds. -1 when the file cannot be written.
double FsyncP50Micros(const std::string& dir, int samples) {
  const std::string file = dir + "/fsync-probe";
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) return -1;
  const std::string block(4096, 'x');
  std::vector<double> micros;
  for (int i = 0; i < samples; ++i) {
    if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) break;
    const auto begin = Clock::now();
    if (fdatasync(fd) != 0) break;
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - begin).count());
  }
  close(fd);
  unlink(file.c_str());
  if (micros.empty()) return -1;
  return Percentile(micros, 0.5);
}

// One deployment as a host sees it: the envelope's address and the tokens.
class Deployment {
 public:
  Deployment(std::string name, const std::string& address, std::string admin, std::string host)
      : name_(std::move(name)),
        admin_(std::move(admin)),
        host_(std::move(host)),
        channel_(grpc::CreateChannel(address, grpc::InsecureChannelCredentials())),
        envelope_(ev1::Envelope::NewStub(channel_)),
        grants_(gs::GrantStore::NewStub(channel_)) {}

  const std::string& name() const { return name_; }
  // The deployment's server processes, whose CPU per call is reported.
  std::vector<pid_t>& pids() { return pids_; }

  // The grant both deployments serve (bench_deployment.h): the demo grant without its write and
  // escalation capabilities. The bench only reads, and each decision then matches against the
  // same two capabilities (run the agent, read Workspace/**) as in the runs docs/performance.md
  // cites.
  void IssueGrant(const std::string& grantstore_address) {
    sharedos::bench::IssueGrantOrDie(grantstore_address, admin_, sharedos::bench::FilesReadGrant(),
                                     name_ + ": IssueGrant");
  }

  bool Floor() {
    static const grpc::internal::RpcMethod health("/grpc.health.v1.Health/Check",
                                                  grpc::internal::RpcMethod::NORMAL_RPC);
    grpc::Slice empty("");
    const grpc::ByteBuffer request(&empty, 1);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::ByteBuffer response;
    return grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
               channel_.get(), health, &context, request, &response)
        .ok();
  }

  bool Invoke() {
    if (turn_id_.empty() || ++calls_on_turn_ > 9000) {  // under the turn's 10,000-call budget
      if (!turn_id_.empty()) Cancel();
      if (!Open()) return false;
      calls_on_turn_ = 1;
    }
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn_id_);
    *request.mutable_call() =
        sharedos::bench::FilesReadCall(absl::StrCat("call-", next_call_++), "trace-bench");
    grpc::ClientContext context;
    Authenticate(context, host_);
    ev1::InvokeToolResponse response;
    const grpc::Status status = envelope_->InvokeTool(&context, request, &response);
    if (!status.ok() || response.result().status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      std::fprintf(stderr, "%s: InvokeTool: %s %s\n", name_.c_str(), status.error_message().c_str(),
                   response.result().DebugString().c_str());
      return false;
    }
    return true;
  }

  void Cancel() {
    ev1::CancelTurnRequest request;
    request.set_turn_id(turn_id_);
    ev1::CancelTurnResponse response;
    grpc::ClientContext context;
    Authenticate(context, host_);
    (void)envelope_->CancelTurn(&context, request, &response);
    turn_id_.clear();
  }

 private:
  bool Open() {
    ev1::OpenTurnRequest request;
    request.set_runtime(ev1::RUNTIME_DRIVER);
    // The demo turn offering files.read alone, with budgets for long series.
    *request.mutable_execution_request() =
        sharedos::bench::FilesReadExecution(absl::StrCat("exec-", next_turn_++), "trace-bench");
    ev1::OpenTurnResponse response;
    grpc::ClientContext context;
    Authenticate(context, host_);
    const grpc::Status status = envelope_->OpenTurn(&context, request, &response);
    if (!status.ok() || response.has_result()) {
      std::fprintf(stderr, "%s: OpenTurn: %s %s\n", name_.c_str(), status.error_message().c_str(),
                   response.result().DebugString().c_str());
      return false;
    }
    turn_id_ = response.turn_id();
    return true;
  }

  const std::string name_;
  const std::string admin_;
  const std::string host_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<ev1::Envelope::Stub> envelope_;
  std::unique_ptr<gs::GrantStore::Stub> grants_;
  std::vector<pid_t> pids_;
  std::string turn_id_;
  int calls_on_turn_ = 0;
  int64_t next_call_ = 0;
  int next_turn_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string durability = absl::GetFlag(FLAGS_audit_durability);
  const std::string dir = absl::StrCat("/tmp/sharedos-invoke-bench-", getpid());
  const auto path = [&](const std::string& name) { return absl::StrCat(dir, "/", name); };
  sharedos::bench::FreshDirectory(dir);
  sharedos::bench::WriteFilesReadWorld(dir);  // files/, registry.textproto

  const std::vector<std::string> wanted =
      absl::StrSplit(absl::GetFlag(FLAGS_deployments), ',', absl::SkipEmpty());
  const auto wants = [&](const std::string& name) {
    return std::find(wanted.begin(), wanted.end(), name) != wanted.end();
  };
  for (const std::string& name : wanted) {
    if (name != "four" && name != "sharedosd") Die("--deployments: unknown deployment " + name);
  }
  if (wanted.empty()) Die("--deployments: empty");
  std::unique_ptr<FourProcessDeployment> four;
  std::unique_ptr<SharedosdDeployment> sharedosd;
  std::vector<Deployment> deployments;

  // ---- Four processes ----
  if (wants("four")) {
    FourProcessDeployment::Options options;
    options.dir = dir;
    options.registry = path("registry.textproto");
    options.files_root = path("files");
    options.credentials.admin_token = kAdminToken;
    options.credentials.host_token = kHostToken;
    options.credentials.lease_secret = "bench-lease-secret-0123456789abcdef0123";
    options.audit_durability = durability;
    options.audit_mode = absl::GetFlag(FLAGS_audit_mode);
    options.outbox_durability = absl::GetFlag(FLAGS_outbox_durability);
    options.argv0 = argv[0];
    auto started = FourProcessDeployment::Start(std::move(options));
    if (!started.ok()) Die(std::string(started.status().message()));
    four = *std::move(started);
    deployments.emplace_back("four processes", four->envelope_address(), kAdminToken, kHostToken);
    deployments.back().pids() = four->pids();
    deployments.back().IssueGrant(four->grantstore_address());
  }

  // ---- sharedosd ----
  if (wants("sharedosd")) {
    SharedosdDeployment::Options options;
    options.data_dir = path("sharedosd-data");
    options.files_root = path("files");
    options.registry = path("registry.textproto");
    options.durability = durability;
    options.argv0 = argv[0];
    auto started = SharedosdDeployment::Start(std::move(options));
    if (!started.ok()) Die(std::string(started.status().message()));
    sharedosd = *std::move(started);
    std::fprintf(stderr, "invoke_bench: sharedosd pid %d\n", sharedosd->pid());
    deployments.emplace_back("sharedosd", sharedosd->address(), sharedosd->admin_token(),
                             sharedosd->host_token());
    deployments.back().pids().push_back(sharedosd->pid());
    deployments.back().IssueGrant(sharedosd->address());
  }

  struct Series {
    std::string name;
    std::function<bool()> call;
    std::vector<pid_t> pids;
    std::vector<double> micros;
    double server_cpu_micros = 0;
    std::vector<double> process_cpu_micros;  // per pid, in the order of `pids`
  };
  std::vector<Series> series;
  for (Deployment& d : deployments) {
    series.push_back({d.name() + ": floor", [&d] { return d.Floor(); }, d.pids(), {}, 0, {}});
    series.push_back({d.name() + ": InvokeTool", [&d] { return d.Invoke(); }, d.pids(), {}, 0, {}});
  }
  for (Series& s : series) {
    for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
      if (!s.call()) Die(s.name + ": warm-up call failed");
    }
  }
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    for (Series& s : series) {
      std::vector<double> cpu_start;
      for (pid_t pid : s.pids) cpu_start.push_back(ProcessCpuMicros(pid));
      for (int i = 0; i < absl::GetFlag(FLAGS_calls); ++i) {
        const auto begin = Clock::now();
        if (!s.call()) Die(s.name + ": call failed");
        s.micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - begin).count());
      }
      s.process_cpu_micros.resize(s.pids.size());
      for (size_t p = 0; p < s.pids.size(); ++p) {
        const double used = ProcessCpuMicros(s.pids[p]) - cpu_start[p];
        s.process_cpu_micros[p] += used;
        s.server_cpu_micros += used;
      }
    }
  }
  for (Deployment& d : deployments) d.Cancel();

  std::printf(
      "invoke_bench: %d rounds x %d calls, one caller, loopback TCP, audit durability %s, "
      "four processes' audit mode %s, outbox durability %s\n",
      absl::GetFlag(FLAGS_rounds), absl::GetFlag(FLAGS_calls), durability.c_str(),
      absl::GetFlag(FLAGS_audit_mode).c_str(), absl::GetFlag(FLAGS_outbox_durability).c_str());
  std::printf("%-30s %9s %9s %9s %9s %13s\n", "series", "p50 us", "p99 us", "p50/floor",
              "p99/floor", "server cpu us");
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& floor = series[i - i % 2];
    const double p50 = Percentile(series[i].micros, 0.5);
    const double p99 = Percentile(series[i].micros, 0.99);
    std::printf("%-30s %9.1f %9.1f %9.2f %9.2f %13.1f\n", series[i].name.c_str(), p50, p99,
                p50 / Percentile(floor.micros, 0.5), p99 / Percentile(floor.micros, 0.99),
                series[i].server_cpu_micros / static_cast<double>(series[i].micros.size()));
  }
  // Where the server CPU went, per process (a deployment of several processes only).
  for (const Series& s : series) {
    if (s.pids.size() < 2) continue;
    std::printf("  %s, server cpu us per call by process:", s.name.c_str());
    for (size_t p = 0; p < s.pids.size(); ++p) {
      std::printf(" %s %.1f", ProcessName(s.pids[p]).c_str(),
                  s.process_cpu_micros[p] / static_cast<double>(s.micros.size()));
    }
    std::printf("\n");
  }
  std::printf("fsync p50 us (4 KiB append + fdatasync, same disk, 200 samples): %.1f\n",
              FsyncP50Micros(dir, 200));
  std::fflush(stdout);

  sharedosd.reset();  // stopped in reverse order of start
  four.reset();
  // The scratch directory is only ours; failing to remove it is reported, not fatal.
  std::error_code error_on_cleanup;
  if (std::filesystem::remove_all(dir, error_on_cleanup) == static_cast<std::uintmax_t>(-1)) {
    std::fprintf(stderr, "cannot remove %s: %s\n", dir.c_str(), error_on_cleanup.message().c_str());
  }
  return 0;
}
