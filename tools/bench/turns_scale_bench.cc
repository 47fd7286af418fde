// How sharedosd's cost grows with the turns it holds open: one real sharedosd (durability
// normal, the quotas raised past the largest size), the files.read registry and grant of
// invoke_bench, and turns opened up to each size of --turns in turn. At each size, in one run:
//   rss        sharedosd's resident memory (VmRSS), and its growth since the first turn was open
//              and warm, per open turn;
//   invoke     p50 of InvokeTool files.read on an open turn picked at random (the whole mediated
//              call: the turn looked up among all those open), and sharedosd's CPU per call
//              (all its threads, from /proc: the steadier figure on a shared machine);
//   open       p50 of the OpenTurn calls that opened this size's turns (--openers callers).
// Memory per turn that rises with the number of turns, or an InvokeTool that slows as turns are
// added, is a defect (docs/performance.md, scale table).
//
//   bazel run //tools/bench:turns_scale_bench -- --turns=1000,10000,50000
//
// One line per size: "turns_scale turns=N rss_kb=... bytes_per_turn=... invoke_p50_us=...
// invoke_server_cpu_us=... open_p50_us=...".
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tools/bench/bench_deployment.h"

ABSL_FLAG(std::string, turns, "1000,10000,50000", "Open turns (ascending) at which to measure.");
ABSL_FLAG(int, calls, 300, "Timed InvokeTool calls per size (after --warmup on the first turn).");
ABSL_FLAG(int, warmup, 300, "Unmeasured InvokeTool calls before the baseline memory is read.");
ABSL_FLAG(int, openers, 2, "Callers opening turns at once.");

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace ev1 = ::sharedos::envelope::v1;
using ::sharedos::bench::Authenticate;
using ::sharedos::bench::Die;
using ::sharedos::bench::ProcessCpuMicros;
using ::sharedos::testing::SharedosdDeployment;
using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double P50(const std::vector<double>& values) { return sharedos::bench::Percentile(values, 0.5); }

// VmRSS of `pid` in KiB (0 when unreadable).
int64_t RssKib(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    int64_t kib = 0;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line.substr(6), ' ', absl::SkipWhitespace());
    if (!fields.empty() && absl::SimpleAtoi(fields[0], &kib)) return kib;
  }
  return 0;
}

// invoke_bench's turn (bench_deployment.h): files.read alone, with budgets for long series.
ev1::OpenTurnRequest OpenRequest(int64_t n) {
  ev1::OpenTurnRequest request;
  request.set_runtime(ev1::RUNTIME_DRIVER);
  *request.mutable_execution_request() =
      sharedos::bench::FilesReadExecution(absl::StrCat("exec-scale-", n), "trace-scale");
  return request;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::vector<int64_t> sizes;
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_turns), ',')) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size <= 0 || (!sizes.empty() && size <= sizes.back())) {
      Die("--turns: positive and ascending");
    }
    sizes.push_back(size);
  }
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/sharedos-turns-scale-", getpid());
  const auto path = [&](const std::string& name) { return absl::StrCat(dir, "/", name); };
  sharedos::bench::FreshDirectory(dir);
  sharedos::bench::WriteFilesReadWorld(dir);  // files/, registry.textproto

  const std::string room = absl::StrCat(sizes.back() + 100);
  SharedosdDeployment::Options options;
  options.data_dir = path("sharedosd-data");
  options.files_root = path("files");
  options.registry = path("registry.textproto");
  options.durability = "normal";
  options.args = {"--max_open_turns_per_namespace=" + room, "--max_open_turns_per_host=" + room,
                  absl::StrCat("--max_turns=", sizes.back() + 1000)};
  options.argv0 = argv[0];
  auto started = SharedosdDeployment::Start(std::move(options));
  if (!started.ok()) Die(std::string(started.status().message()));
  std::unique_ptr<SharedosdDeployment> sharedosd = *std::move(started);
  const pid_t pid = sharedosd->pid();
  const std::string host = sharedosd->host_token();

  auto channel = grpc::CreateChannel(sharedosd->address(), grpc::InsecureChannelCredentials());
  sharedos::bench::IssueGrantOrDie(sharedosd->address(), sharedosd->admin_token(),
                                   sharedos::bench::FilesReadGrant());

  std::vector<std::string> turns;  // the open turns' ids
  std::mutex turns_mu;
  std::atomic<int64_t> next_turn{0};
  std::vector<double> open_micros;
  // Opens turns until `size` are open; false when an OpenTurn fails.
  const auto open_until = [&](int64_t size) {
    std::atomic<bool> failed{false};
    std::vector<std::thread> openers;
    for (int o = 0; o < absl::GetFlag(FLAGS_openers); ++o) {
      openers.emplace_back([&] {
        auto stub = ev1::Envelope::NewStub(channel);
        while (!failed) {
          const int64_t n = next_turn.fetch_add(1);
          if (n >= size) return;
          ev1::OpenTurnRequest request = OpenRequest(n);
          ev1::OpenTurnResponse response;
          grpc::ClientContext context;
          Authenticate(context, host);
          const auto start = Clock::now();
          const grpc::Status status = stub->OpenTurn(&context, request, &response);
          const double micros = Micros(Clock::now() - start);
          if (!status.ok() || response.has_result()) {
            std::fprintf(stderr, "OpenTurn %lld: %s %s\n", static_cast<long long>(n),
                         status.error_message().c_str(), response.result().DebugString().c_str());
            failed = true;
            return;
          }
          std::lock_guard<std::mutex> lock(turns_mu);
          turns.push_back(response.turn_id());
          open_micros.push_back(micros);
        }
      });
    }
    for (auto& opener : openers) opener.join();
    next_turn = std::min<int64_t>(next_turn.load(), size);
    return !failed;
  };

  auto envelope = ev1::Envelope::NewStub(channel);
  int64_t next_call = 0;
  const auto invoke = [&](const std::string& turn_id) {
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    *request.mutable_call() =
        sharedos::bench::FilesReadCall(absl::StrCat("call-", next_call++), "trace-scale");
    grpc::ClientContext context;
    Authenticate(context, host);
    ev1::InvokeToolResponse response;
    const grpc::Status status = envelope->InvokeTool(&context, request, &response);
    if (!status.ok() || response.result().status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      Die(absl::StrCat("InvokeTool: ", status.error_message(), " ",
                       response.result().DebugString()));
    }
  };

  // The baseline: one turn open and warm.
  if (!open_until(1)) Die("OpenTurn failed");
  for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) invoke(turns.front());
  const int64_t base_kib = RssKib(pid);
  std::printf(
      "turns_scale_bench: sharedosd pid %d, durability normal, %d openers; "
      "rss with one warm turn %lld KiB\n",
      pid, absl::GetFlag(FLAGS_openers), static_cast<long long>(base_kib));
  std::fflush(stdout);

  std::mt19937_64 rng(37);
  for (const int64_t size : sizes) {
    open_micros.clear();
    if (!open_until(size)) Die("OpenTurn failed");
    const int64_t kib = RssKib(pid);
    std::uniform_int_distribution<size_t> pick(0, turns.size() - 1);
    std::vector<double> invoked;
    const double cpu_start = ProcessCpuMicros(pid);
    for (int i = 0; i < absl::GetFlag(FLAGS_calls); ++i) {
      const std::string& turn_id = turns[pick(rng)];
      const auto start = Clock::now();
      invoke(turn_id);
      invoked.push_back(Micros(Clock::now() - start));
    }
    std::printf(
        "turns_scale turns=%lld rss_kb=%lld bytes_per_turn=%.0f invoke_p50_us=%.1f "
        "invoke_server_cpu_us=%.1f open_p50_us=%.1f\n",
        static_cast<long long>(turns.size()), static_cast<long long>(kib),
        1024.0 * static_cast<double>(kib - base_kib) /
            static_cast<double>(std::max<size_t>(1, turns.size() - 1)),
        P50(invoked), (ProcessCpuMicros(pid) - cpu_start) / static_cast<double>(invoked.size()),
        P50(open_micros));
    std::fflush(stdout);
  }
  sharedosd.reset();
  std::error_code error_on_cleanup;
  std::filesystem::remove_all(dir, error_on_cleanup);
  return 0;
}
