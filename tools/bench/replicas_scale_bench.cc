// Issue 37's replicas curve (run_scale.sh, step `replicas`): Authorize and InvokeTool throughput
// with 1, 2 and 3 replicas of every service on ONE PostgreSQL database, real processes on
// loopback, in one run.
//
//   bazel run //tools/bench:replicas_scale_bench -- --replicas=1,2,3 --threads=16 --seconds=5
//
// For each count N (--replicas), a fresh database on one throwaway PostgreSQL cluster
// (tests/testing/postgres_cluster.h: the server's defaults; it needs the PostgreSQL server
// binaries, tools/setup.sh, and exits 2 naming them when they are missing), and from this
// target's runfiles:
//   N audit_svc       --db=<the database>, --durability=normal, one checkpoint key;
//   N grantstore_svc  --db=<the database>, pre-effect records to the audit replicas;
//   N authorizer_svc  dialing the N grant stores and the N audit logs as one target each
//                     ("ipv4:a,b,c", spread round-robin by the gRPC client), --audit=remote;
//   N envelope_svc    --replica_name=r<i>, each the others' peer (ADR 0011), dialing the N
//                     authorizers and grant stores as one target each; files.read over the
//                     files provider (the demo world's 9-byte notes.txt, as invoke_bench).
// The demo grant is issued once; then --threads callers, spread over the replicas (caller t
// calls replica t mod N, its own channel per replica), each run for --seconds after a warm-up:
//   Authorize   on a lease each caller's authorizer opened (OpenTurnAuthority as the envelope),
//               consuming, unbounded grant: decide + authorization.checked appended to audit_svc
//               (on PostgreSQL: one chain, its head row locked per group commit);
//   InvokeTool  files.read on a turn the caller opened at its envelope: the full mediated call.
// Reported per N, one line each: calls/s, p50 of the calls (all callers), and the CPU (user +
// system, from /proc) per call of the service processes and of PostgreSQL (the postmaster and
// its backends, through the postmaster's pid file):
//   replicas_scale replicas=N processes=P authorize_per_s=... authorize_p50_us=...
//   authorize_services_cpu_us=... authorize_postgres_cpu_us=... invoke_per_s=...
//   invoke_p50_us=... invoke_services_cpu_us=... invoke_postgres_cpu_us=... load=...
// With --audit_commits each audit_svc also serves /metrics, and a second line gives the Authorize
// series' audit group commits (warm-up included), per replica, and the records per commit:
//   replicas_scale_commits replicas=N authorize_audit_commits=... per_replica=a/b/c
//   records_per_commit=...
// On a machine with fewer cores than processes, more replicas can only add overhead (more
// processes, connections and hops sharing the same cores, and one audit chain head for all):
// the curve then measures that overhead, not a speed-up (docs/performance.md, session 45).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "httplib.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/testing/deployment.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/process.h"
#include "tools/bench/bench_deployment.h"

ABSL_FLAG(std::string, replicas, "1,2,3", "Replica counts (of every service), ascending.");
ABSL_FLAG(int, threads, 16, "Concurrent callers, spread over the replicas.");
ABSL_FLAG(double, seconds, 5, "Duration of each throughput series.");
ABSL_FLAG(double, warmup_seconds, 1, "Unmeasured calls before each series.");
ABSL_FLAG(bool, audit_commits, false,
          "Also serve each audit_svc's /metrics and report the group commits of the Authorize "
          "series (warm-up included): commits per replica and records per commit.");

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace av1 = ::sharedos::authorizer::v1;
namespace ev1 = ::sharedos::envelope::v1;
using ::sharedos::bench::Authenticate;
using ::sharedos::bench::Die;
using ::sharedos::bench::Percentile;
using ::sharedos::bench::ProcessCpuMicros;
using ::sharedos::testing::DeploymentCredentials;
using ::sharedos::testing::PostgresCluster;
using ::sharedos::testing::Process;
using ::sharedos::testing::WriteFile;
using Clock = std::chrono::steady_clock;

// A loopback port that was free a moment ago (an envelope replica's, chosen before it starts so
// that its peers know it).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Die("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  if (port <= 0) Die("no free port");
  return port;
}

// audit_svc on PostgreSQL signs its checkpoints with a key it is given: a fresh Ed25519 key,
// PEM, shared by the audit replicas.
void WriteCheckpointKey(const std::string& path) {
  EVP_PKEY* key = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr);
  const bool made =
      ctx != nullptr && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &key) == 1;
  EVP_PKEY_CTX_free(ctx);
  if (!made) Die("Ed25519 key generation failed");
  FILE* file = std::fopen(path.c_str(), "w");
  const bool written = file != nullptr && chmod(path.c_str(), 0600) == 0 &&
                       PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (file != nullptr) std::fclose(file);
  EVP_PKEY_free(key);
  if (!written) Die("cannot write " + path);
}

// /proc/<pid>/stat fields after the command name (which may hold spaces); empty when unreadable.
std::vector<std::string> StatFields(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t after = text.rfind(')');
  if (after == std::string::npos || after + 2 > text.size()) return {};
  return absl::StrSplit(text.substr(after + 2), ' ');
}

// CPU of PostgreSQL: the postmaster (with the backends that have ended) and its live children.
double PostgresCpuMicros(pid_t postmaster) {
  if (postmaster <= 0) return 0;
  double micros = ProcessCpuMicros(postmaster, /*waited_children=*/true);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::vector<std::string> fields = StatFields(pid);
    pid_t parent = 0;
    if (fields.size() > 1 && absl::SimpleAtoi(fields[1], &parent) && parent == postmaster) {
      micros += ProcessCpuMicros(pid);
    }
  }
  return micros;
}

double ServicesCpuMicros(const std::vector<std::unique_ptr<Process>>& processes) {
  double micros = 0;
  for (const auto& process : processes) micros += ProcessCpuMicros(process->pid());
  return micros;
}

// The demo turn offering files.read alone, with budgets for long series (bench_deployment.h).
pb::ExecutionRequest BenchExecution(const std::string& execution_id) {
  return sharedos::bench::FilesReadExecution(execution_id, "trace-replicas");
}

// One caller: its replica's channels, its lease and its turn.
class Caller {
 public:
  Caller(int id, const std::string& authorizer, const std::string& envelope,
         const DeploymentCredentials& credentials)
      : id_(id),
        credentials_(credentials),
        authorizer_(av1::Authorizer::NewStub(
            grpc::CreateChannel(authorizer, grpc::InsecureChannelCredentials()))),
        envelope_(ev1::Envelope::NewStub(
            grpc::CreateChannel(envelope, grpc::InsecureChannelCredentials()))) {}

  // Opens the lease (at its authorizer) and the turn (at its envelope).
  void Open() {
    av1::OpenTurnAuthorityRequest open;
    *open.mutable_context() = BenchExecution("x").context();
    open.mutable_context()->set_trace_id(absl::StrCat("trace-lease-", id_));
    open.set_turn_id(absl::StrCat("lease-turn-", id_));
    av1::OpenTurnAuthorityResponse lease;
    {
      grpc::ClientContext context;
      Authenticate(context, credentials_.envelope_token);
      const grpc::Status status = authorizer_->OpenTurnAuthority(&context, open, &lease);
      if (!status.ok() || lease.status() != av1::LEASE_STATUS_RESOLVED) {
        Die(absl::StrCat("OpenTurnAuthority: ", status.error_message(), " ",
                         lease.ShortDebugString()));
      }
    }
    authorize_.set_lease_id(lease.lease_id());
    pb::CapabilityRequirement* requirement = authorize_.mutable_requirement();
    requirement->mutable_resource()->set_namespace_("files");
    requirement->mutable_resource()->add_path("Workspace");
    requirement->mutable_resource()->add_path("notes.txt");
    requirement->set_action("read");
    authorize_.set_consume(true);
    authorize_.set_operation_id(absl::StrCat("call-authorize-", id_));
    authorize_.set_tool("files.read");
    OpenTurn();
  }

  // A turn at its envelope (a new one when the last neared its 10,000-call budget).
  void OpenTurn() {
    calls_on_turn_ = 0;
    ev1::OpenTurnRequest request;
    request.set_runtime(ev1::RUNTIME_DRIVER);
    *request.mutable_execution_request() =
        BenchExecution(absl::StrCat("exec-replicas-", id_, "-", next_turn_++));
    ev1::OpenTurnResponse response;
    grpc::ClientContext context;
    Authenticate(context, credentials_.host_token);
    const grpc::Status status = envelope_->OpenTurn(&context, request, &response);
    if (!status.ok() || response.has_result()) {
      Die(absl::StrCat("OpenTurn: ", status.error_message(), " ",
                       response.result().ShortDebugString()));
    }
    turn_id_ = response.turn_id();
  }

  bool Authorize() {
    av1::AuthorizeResponse response;
    grpc::ClientContext context;
    Authenticate(context, credentials_.envelope_token);
    const grpc::Status status = authorizer_->Authorize(&context, authorize_, &response);
    if (!status.ok() || !response.decision().allowed()) {
      std::fprintf(stderr, "Authorize: %s %s\n", status.error_message().c_str(),
                   response.ShortDebugString().c_str());
      return false;
    }
    return true;
  }

  bool Invoke() {
    if (++calls_on_turn_ > 9000) {
      Close();
      OpenTurn();
      calls_on_turn_ = 1;
    }
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn_id_);
    *request.mutable_call() = sharedos::bench::FilesReadCall(
        absl::StrCat("call-", id_, "-", next_call_++), "trace-replicas");
    grpc::ClientContext context;
    Authenticate(context, credentials_.host_token);
    ev1::InvokeToolResponse response;
    const grpc::Status status = envelope_->InvokeTool(&context, request, &response);
    if (!status.ok() || response.result().status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      std::fprintf(stderr, "InvokeTool: %s %s\n", status.error_message().c_str(),
                   response.result().ShortDebugString().c_str());
      return false;
    }
    return true;
  }

  void Close() {
    ev1::CancelTurnRequest request;
    request.set_turn_id(turn_id_);
    ev1::CancelTurnResponse response;
    grpc::ClientContext context;
    Authenticate(context, credentials_.host_token);
    (void)envelope_->CancelTurn(&context, request, &response);
  }

 private:
  const int id_;
  const DeploymentCredentials& credentials_;
  std::unique_ptr<av1::Authorizer::Stub> authorizer_;
  std::unique_ptr<ev1::Envelope::Stub> envelope_;
  av1::AuthorizeRequest authorize_;
  std::string turn_id_;
  int calls_on_turn_ = 0;
  int next_turn_ = 0;
  int64_t next_call_ = 0;
};

struct Throughput {
  double per_second = 0;
  double p50_micros = 0;
  double services_cpu_micros = 0;  // per call
  double postgres_cpu_micros = 0;  // per call
};

// Every caller calls `call` in a loop: `warmup` unmeasured, then `seconds` measured.
Throughput Run(std::vector<std::unique_ptr<Caller>>& callers,
               const std::function<bool(Caller&)>& call, double warmup, double seconds,
               const std::vector<std::unique_ptr<Process>>& processes, pid_t postmaster) {
  std::atomic<int> phase{0};  // 0 warm-up, 1 measured, 2 stop
  std::atomic<int64_t> done{0};
  absl::Mutex mu;
  std::vector<double> micros;
  std::vector<std::thread> threads;
  for (auto& caller : callers) {
    threads.emplace_back([&, c = caller.get()] {
      std::vector<double> mine;
      while (true) {
        const int now = phase.load(std::memory_order_relaxed);
        if (now == 2) break;
        const auto start = Clock::now();
        if (!call(*c)) Die("a call failed");
        if (now == 1 && phase.load(std::memory_order_relaxed) == 1) {
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        }
      }
      done += static_cast<int64_t>(mine.size());
      absl::MutexLock lock(&mu);
      micros.insert(micros.end(), mine.begin(), mine.end());
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  const double services_start = ServicesCpuMicros(processes);
  const double postgres_start = PostgresCpuMicros(postmaster);
  const auto start = Clock::now();
  phase = 1;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  phase = 2;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double services = ServicesCpuMicros(processes) - services_start;
  const double postgres = PostgresCpuMicros(postmaster) - postgres_start;
  for (std::thread& thread : threads) thread.join();
  Throughput result;
  const double calls = static_cast<double>(done.load());
  result.per_second = calls / elapsed;
  result.p50_micros = Percentile(micros, 0.5);
  if (calls > 0) {
    result.services_cpu_micros = services / calls;
    result.postgres_cpu_micros = postgres / calls;
  }
  return result;
}

// The port of the /metrics endpoint `process` printed ("<name> metrics on http://127.0.0.1:P/").
int MetricsPort(const Process& process, const std::string& name) {
  const std::string line = name + " metrics on http://127.0.0.1:";
  const std::string output = process.output();
  const size_t at = output.find(line);
  int port = 0;
  if (at == std::string::npos) return 0;
  const size_t from = at + line.size();
  if (!absl::SimpleAtoi(output.substr(from, output.find('/', from) - from), &port)) return 0;
  return port;
}

// An audit replica's group commits so far: their count and the records they held (the
// sharedos_audit_group_commit_size histogram's _count and _sum).
struct Commits {
  double commits = 0;
  double records = 0;
};

Commits ReadCommits(int port) {
  Commits commits;
  httplib::Client client("127.0.0.1", port);
  httplib::Result result = client.Get("/metrics");
  if (!result || result->status != 200) Die(absl::StrCat("no /metrics on port ", port));
  for (const auto& [name, value] :
       {std::pair<const char*, double*>{"\nsharedos_audit_group_commit_size_count ",
                                        &commits.commits},
        {"\nsharedos_audit_group_commit_size_sum ", &commits.records}}) {
    const size_t at = result->body.find(name);
    if (at == std::string::npos) continue;
    const size_t from = at + std::strlen(name);
    (void)absl::SimpleAtod(result->body.substr(from, result->body.find('\n', from) - from), value);
  }
  return commits;
}

std::string Target(const std::vector<std::string>& addresses) {
  if (addresses.size() == 1) return addresses[0];
  return "ipv4:" + absl::StrJoin(addresses, ",");
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::vector<int> counts;
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_replicas), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n <= 0 || n > 8 || (!counts.empty() && n <= counts.back())) {
      Die("--replicas: ascending counts in 1..8");
    }
    counts.push_back(n);
  }
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads <= 0 || threads > 256) Die("--threads: 1..256");

  // Exits 2 ("no PostgreSQL") when the server binaries are missing: run_scale.sh skips the step.
  std::unique_ptr<PostgresCluster> cluster =
      sharedos::testing::CreateClusterOrExit("replicas_scale_bench");
  const pid_t postmaster = std::max<pid_t>(cluster->pid(), 0);
  const std::string root = absl::StrCat("/tmp/sharedos-replicas-bench-", getpid());
  std::error_code error;
  std::filesystem::remove_all(root, error);
  DeploymentCredentials credentials;

  std::printf(
      "replicas_scale_bench: %s, %d callers spread over the replicas, %.1fs per series (after "
      "%.1fs warm-up), audit_svc durability normal, --audit=remote, %ld cores\n",
      "throwaway PostgreSQL cluster (server defaults)", threads, absl::GetFlag(FLAGS_seconds),
      absl::GetFlag(FLAGS_warmup_seconds), sysconf(_SC_NPROCESSORS_ONLN));
  std::fflush(stdout);
  for (const int n : counts) {
    const std::string dir = absl::StrCat(root, "/n", n);
    sharedos::bench::FreshDirectory(dir);
    const auto path = [&](const std::string& name) { return absl::StrCat(dir, "/", name); };
    auto database = cluster->CreateDatabase(absl::StrCat("replicas_", n));
    if (!database.ok()) Die(std::string(database.status().message()));
    const std::string uri = *database;
    if (!WriteFile(path("credentials.json"), sharedos::testing::CredentialsJson(credentials))
             .ok() ||
        !WriteFile(path("authorizer.token"), credentials.authorizer_token + "\n").ok() ||
        !WriteFile(path("envelope.token"), credentials.envelope_token + "\n").ok() ||
        !WriteFile(path("grantstore.token"), credentials.grantstore_token + "\n").ok() ||
        !WriteFile(path("lease.secret"), credentials.lease_secret).ok()) {
      Die("cannot write configuration");
    }
    sharedos::bench::WriteFilesReadWorld(dir);  // files/, registry.textproto
    WriteCheckpointKey(path("checkpoint.key"));
    const std::string credentials_flag = "--credentials=" + path("credentials.json");

    std::vector<std::unique_ptr<Process>> processes;
    const auto start = [&](const std::string& binary, const std::string& name,
                           const std::vector<std::string>& args) {
      processes.push_back(
          sharedos::bench::StartServiceOrDie(binary, args, name, argv[0], absl::Seconds(120)));
      return processes.back()->address();
    };
    std::vector<std::string> audits, grantstores, authorizers, envelopes;
    const bool audit_commits = absl::GetFlag(FLAGS_audit_commits);
    std::vector<int> audit_metrics;
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> args = {"--port=0", "--db=" + uri, "--durability=normal",
                                       credentials_flag,
                                       "--checkpoint_key_file=" + path("checkpoint.key")};
      if (audit_commits) args.push_back("--metrics_port=0");
      audits.push_back(start("audit_svc/server/audit_svc", "audit_svc", args));
      if (audit_commits) audit_metrics.push_back(MetricsPort(*processes.back(), "audit_svc"));
    }
    const auto audit_flags = [&](const std::string& writer, const std::string& token) {
      return std::vector<std::string>{"--audit=remote", "--audit_target=" + Target(audits),
                                      "--audit_token_file=" + path(token + ".token"),
                                      "--audit_outbox=" + path(writer + ".outbox")};
    };
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> args = {"--port=0", "--db=" + uri, credentials_flag};
      for (auto& flag : audit_flags(absl::StrCat("grantstore-", i), "grantstore")) {
        args.push_back(flag);
      }
      grantstores.push_back(start("grantstore_svc/server/grantstore_svc", "grantstore_svc", args));
    }
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> args = {"--port=0", credentials_flag,
                                       "--grantstore_target=" + Target(grantstores),
                                       "--grantstore_token_file=" + path("authorizer.token"),
                                       "--lease_secret_file=" + path("lease.secret")};
      for (auto& flag : audit_flags(absl::StrCat("authorizer-", i), "authorizer")) {
        args.push_back(flag);
      }
      authorizers.push_back(start("authorizer_svc/server/authorizer_svc", "authorizer_svc", args));
    }
    std::vector<int> ports;
    for (int i = 0; i < n; ++i) ports.push_back(FreePort());
    for (int i = 0; i < n; ++i) {
      std::vector<std::string> args = {absl::StrCat("--port=", ports[i]),
                                       credentials_flag,
                                       "--authorizer_target=" + Target(authorizers),
                                       "--authorizer_token_file=" + path("envelope.token"),
                                       "--grantstore_target=" + Target(grantstores),
                                       "--grantstore_token_file=" + path("envelope.token"),
                                       "--registry=" + path("registry.textproto"),
                                       "--files_root=" + path("files")};
      for (auto& flag : audit_flags(absl::StrCat("envelope-", i), "envelope")) {
        args.push_back(flag);
      }
      if (n > 1) {
        args.push_back(absl::StrCat("--replica_name=r", i + 1));
        args.push_back("--replica_token_file=" + path("envelope.token"));
        std::vector<std::string> peers;
        for (int j = 0; j < n; ++j) {
          if (j != i) peers.push_back(absl::StrCat("r", j + 1, "=127.0.0.1:", ports[j]));
        }
        args.push_back("--replica_peers=" + absl::StrJoin(peers, ","));
      }
      envelopes.push_back(start("envelope_svc/server/envelope_svc", "envelope_svc", args));
    }

    sharedos::bench::IssueGrantOrDie(grantstores[0], credentials.admin_token,
                                     sharedos::bench::FilesReadGrant());
    std::vector<std::unique_ptr<Caller>> callers;
    for (int t = 0; t < threads; ++t) {
      callers.push_back(
          std::make_unique<Caller>(t, authorizers[t % n], envelopes[t % n], credentials));
      callers.back()->Open();
    }
    const double warmup = absl::GetFlag(FLAGS_warmup_seconds);
    const double seconds = absl::GetFlag(FLAGS_seconds);
    std::vector<Commits> commits_before;
    for (int port : audit_metrics) commits_before.push_back(ReadCommits(port));
    const Throughput authorize = Run(
        callers, [](Caller& c) { return c.Authorize(); }, warmup, seconds, processes, postmaster);
    if (audit_commits) {
      double commits = 0, records = 0;
      std::vector<std::string> per_replica;
      for (size_t i = 0; i < audit_metrics.size(); ++i) {
        const Commits now = ReadCommits(audit_metrics[i]);
        commits += now.commits - commits_before[i].commits;
        records += now.records - commits_before[i].records;
        per_replica.push_back(absl::StrCat(now.commits - commits_before[i].commits));
      }
      std::printf(
          "replicas_scale_commits replicas=%d authorize_audit_commits=%.0f per_replica=%s "
          "records_per_commit=%.2f\n",
          n, commits, absl::StrJoin(per_replica, "/").c_str(), commits > 0 ? records / commits : 0);
    }
    const Throughput invoke = Run(
        callers, [](Caller& c) { return c.Invoke(); }, warmup, seconds, processes, postmaster);
    for (auto& caller : callers) caller->Close();
    double load = 0;
    {
      std::ifstream loadavg("/proc/loadavg");
      loadavg >> load;
    }
    std::printf(
        "replicas_scale replicas=%d processes=%zu authorize_per_s=%.0f authorize_p50_us=%.1f "
        "authorize_services_cpu_us=%.1f authorize_postgres_cpu_us=%.1f invoke_per_s=%.0f "
        "invoke_p50_us=%.1f invoke_services_cpu_us=%.1f invoke_postgres_cpu_us=%.1f load=%.2f\n",
        n, processes.size(), authorize.per_second, authorize.p50_micros,
        authorize.services_cpu_micros, authorize.postgres_cpu_micros, invoke.per_second,
        invoke.p50_micros, invoke.services_cpu_micros, invoke.postgres_cpu_micros, load);
    std::fflush(stdout);
    callers.clear();
    // Envelopes first, audit_svc last: each dependent stops before what it calls.
    while (!processes.empty()) processes.pop_back();
  }
  std::filesystem::remove_all(root, error);
  return 0;
}
