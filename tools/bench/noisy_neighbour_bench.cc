// The noisy-neighbour benchmark (issue 34): four tenants run turns through one sharedosd; in the
// second phase one of them turns hostile. Reported in one run: the three quiet tenants' p50 and
// p99 mediated InvokeTool latency without and with the hostile tenant (and their ratio),
// sharedosd's peak RSS, and what the hostile tenant was answered (RESOURCE_EXHAUSTED and in-band
// refusals naming its limits).
//
//   bazel run //tools/bench:noisy_neighbour_bench -- --seconds=10
//
// Starts sharedosd from this target's runfiles (--demo, SQLite audit --durability=normal, gRPC and
// the MCP door on loopback, every limit at its default but --max_open_turns_per_host, 200 here so
// that a 10 s flood reaches it). Each tenant is a namespace world-t<i> with
// its own host credential (scope: that namespace, owner human:user-alice) and a copy of the demo
// grant (read Workspace/**, grep there). Quiet tenants, one thread each: open a turn, 20 calls of
// files.read Workspace/notes.txt (each timed), complete it; again until the phase ends. The hostile
// tenant, from the start of phase 2, on five threads:
//   open      floods OpenTurn (every other one ends at admission, actor_mismatch)
//   refusals  floods InvokeTool on a turn with max_tool_calls 1 (then on the ended turn)
//   grep      files.grep with 100 lines of context each way over ~120 KB of matching lines
//   polls     WatchTurn long-polls, as many as it is allowed
//   slow      40 connections to the MCP door sending half a request each, reconnecting
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedosd/demo.h"
#include "sharedosd/demo_turn.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tools/bench/bench_deployment.h"

ABSL_FLAG(int, seconds, 10, "Length of each phase (quiet alone, then with the hostile tenant).");
ABSL_FLAG(int, max_open_turns_per_host, 200,
          "sharedosd's --max_open_turns_per_host (the default, 1000, is not reached in a short "
          "phase on two cores).");

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace gs = ::sharedos::grantstore::v1;
using ::sharedos::bench::Percentile;
using ::sharedos::testing::SharedosdDeployment;
using Clock = std::chrono::steady_clock;

constexpr int kTenants = 4;
constexpr int kHostile = 3;

int Fail(const std::string& what) {
  std::fprintf(stderr, "noisy_neighbour_bench: %s\n", what.c_str());
  return 2;
}

std::unique_ptr<grpc::ClientContext> As(const std::string& token, int seconds = 30) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return context;
}

std::string Namespace(int tenant) { return absl::StrCat("world-t", tenant); }

ev1::OpenTurnRequest TurnRequest(int tenant, const std::string& execution_id,
                                 ev1::Runtime runtime = ev1::RUNTIME_DRIVER) {
  google::protobuf::Timestamp now;
  now.set_seconds(absl::ToUnixSeconds(absl::Now()));
  ev1::OpenTurnRequest request =
      sharedos::sharedosd::DemoTurnRequest(runtime, execution_id, "trace-" + execution_id, now);
  request.mutable_execution_request()->mutable_context()->set_namespace_id(Namespace(tenant));
  request.mutable_execution_request()->add_tools("files.grep");
  request.mutable_execution_request()->mutable_options()->set_max_tool_calls(1000);
  request.mutable_execution_request()->mutable_options()->set_timeout_ms(600000);
  return request;
}

ev1::InvokeToolRequest Invoke(const std::string& turn_id, const std::string& execution_id,
                              const std::string& tool, const std::string& arguments, int64_t call) {
  ev1::InvokeToolRequest invoke;
  invoke.set_turn_id(turn_id);
  pb::ToolCall* c = invoke.mutable_call();
  c->set_id(absl::StrCat("call-", call));
  c->set_tool(tool);
  c->set_trace_id("trace-" + execution_id);
  (void)google::protobuf::util::JsonStringToMessage(arguments, c->mutable_arguments());
  c->mutable_requested_at()->set_seconds(absl::ToUnixSeconds(absl::Now()));
  return invoke;
}

// What the hostile tenant was answered: per kind, count and the first message.
struct Answers {
  std::mutex mu;
  std::map<std::string, std::pair<int64_t, std::string>> seen;
  void Count(const std::string& kind, const std::string& message) {
    std::lock_guard<std::mutex> lock(mu);
    auto& entry = seen[kind];
    if (entry.first++ == 0) entry.second = message;
  }
};

// The quiet tenants' phase: each thread runs turns of 20 timed reads until `stop`.
std::vector<double> RunQuiet(ev1::Envelope::Stub& envelope, const std::vector<std::string>& tokens,
                             absl::Duration length, const std::string& phase) {
  std::mutex mu;
  std::vector<double> micros;
  std::atomic<int64_t> errors{0};
  std::string first_error;
  auto error = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    if (errors++ == 0) first_error = what;
  };
  const absl::Time end = absl::Now() + length;
  std::vector<std::thread> threads;
  for (int tenant = 0; tenant < kHostile; ++tenant) {
    threads.emplace_back([&, tenant] {
      int64_t call = 0;
      for (int turn_number = 0; absl::Now() < end; ++turn_number) {
        const std::string execution = absl::StrCat(phase, "-t", tenant, "-", turn_number);
        ev1::OpenTurnResponse opened;
        grpc::Status opened_status =
            envelope.OpenTurn(As(tokens[tenant]).get(), TurnRequest(tenant, execution), &opened);
        if (!opened_status.ok() || opened.has_result()) {
          error(absl::StrCat("OpenTurn ", opened_status.error_code(), " ",
                             opened_status.error_message(), opened.result().error().code()));
          continue;
        }
        for (int i = 0; i < 20 && absl::Now() < end; ++i) {
          ev1::InvokeToolResponse invoked;
          const auto start = Clock::now();
          grpc::Status status =
              envelope.InvokeTool(As(tokens[tenant]).get(),
                                  Invoke(opened.turn_id(), execution, "files.read",
                                         R"({"path": "Workspace/notes.txt"})", ++call),
                                  &invoked);
          const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
          if (!status.ok() || invoked.result().status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
            error(absl::StrCat("InvokeTool ", status.error_code(), " ", status.error_message(),
                               invoked.result().error().code()));
            continue;
          }
          std::lock_guard<std::mutex> lock(mu);
          micros.push_back(us);
        }
        ev1::FinishTurnRequest finish;
        finish.set_turn_id(opened.turn_id());
        finish.mutable_complete()->mutable_output()->set_string_value("done");
        ev1::FinishTurnResponse finished;
        grpc::Status finished_status =
            envelope.FinishTurn(As(tokens[tenant]).get(), finish, &finished);
        if (!finished_status.ok()) {
          error(absl::StrCat("FinishTurn ", finished_status.error_code(), " ",
                             finished_status.error_message()));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (errors > 0) {
    std::printf("  (%s: %lld quiet calls failed; the first: %s)\n", phase.c_str(),
                static_cast<long long>(errors.load()), first_error.c_str());
  }
  return micros;
}

// A connection to 127.0.0.1:`port` that sends half a request and stalls (-1: none).
int SlowConnection(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  const std::string half = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthoriz";
  (void)send(fd, half.data(), half.size(), MSG_NOSIGNAL);
  return fd;
}

int64_t PeakRssKb(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const absl::Duration phase = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  char dir_template[] = "/tmp/noisy-neighbour-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return Fail("mkdtemp");
  const std::string data = dir_template;
  SharedosdDeployment::Options options;
  options.data_dir = data + "/data";
  options.demo = true;
  options.mcp = true;
  options.registry =
      sharedos::testing::RunfilePath("envelope_svc/config/standard_tools.textproto", argv[0]);
  options.argv0 = argv[0];
  options.args = {
      absl::StrCat("--max_open_turns_per_host=", absl::GetFlag(FLAGS_max_open_turns_per_host))};
  auto sharedosd = SharedosdDeployment::Start(std::move(options));
  if (!sharedosd.ok()) return Fail(std::string(sharedosd.status().message()));
  auto channel = grpc::CreateChannel((*sharedosd)->address(), grpc::InsecureChannelCredentials());
  auto envelope = ev1::Envelope::NewStub(channel);
  auto grants = gs::GrantStore::NewStub(channel);
  const std::string admin = (*sharedosd)->admin_token();

  // The tenants: a namespace, a grant and a host credential each.
  std::vector<std::string> tokens;
  for (int tenant = 0; tenant < kTenants; ++tenant) {
    pb::CapabilityGrant grant = sharedos::sharedosd::DemoGrant();
    grant.set_id(absl::StrCat("grant-t", tenant));
    grant.set_namespace_id(Namespace(tenant));
    for (pb::Capability& capability : *grant.mutable_capabilities()) {
      if (capability.resource().namespace_() == "files") capability.add_actions("grep");
    }
    gs::IssueGrantRequest issue;
    *issue.mutable_grant() = grant;
    gs::IssueGrantResponse issued;
    grpc::Status status = grants->IssueGrant(As(admin).get(), issue, &issued);
    if (!status.ok()) return Fail("IssueGrant: " + status.error_message());
    gs::IssueCredentialRequest credential;
    if (!google::protobuf::TextFormat::ParseFromString(
            absl::StrCat("credential_id: 'host-t", tenant, "' principal { service_id: 'host-t",
                         tenant, "' } role: CREDENTIAL_ROLE_HOST scope { namespaces: '",
                         Namespace(tenant), "' owners: 'human:user-alice' }"),
            &credential)) {
      return Fail("credential text");
    }
    gs::IssueCredentialResponse made;
    status = grants->IssueCredential(As(admin).get(), credential, &made);
    if (!status.ok()) return Fail("IssueCredential: " + status.error_message());
    tokens.push_back(made.secret());
  }
  // ~120 KB of matching lines for the hostile grep.
  {
    std::ofstream big(data + "/data/files/human/user-alice/workspace/Workspace/big.txt");
    for (int i = 0; i < 600; ++i) big << "match " << std::string(200, 'x') << "\n";
  }

  std::printf("noisy_neighbour_bench: sharedosd pid %d, %d s per phase, 3 quiet tenants\n",
              static_cast<int>((*sharedosd)->pid()), absl::GetFlag(FLAGS_seconds));
  // Warm-up, unmeasured.
  RunQuiet(*envelope, tokens, absl::Seconds(2), "warmup");
  const std::vector<double> alone = RunQuiet(*envelope, tokens, phase, "alone");

  // The hostile tenant.
  const std::string hostile = tokens[kHostile];
  Answers answers;
  std::atomic<bool> stop{false};
  std::vector<std::thread> attackers;
  // Its standing turns first (the open flood then fills its quota).
  ev1::OpenTurnRequest budget_request = TurnRequest(kHostile, "h-budget");
  budget_request.mutable_execution_request()->mutable_options()->set_max_tool_calls(1);
  ev1::OpenTurnResponse budget_turn, grep_turn, watch_turn, mcp_turn;
  (void)envelope->OpenTurn(As(hostile).get(), budget_request, &budget_turn);
  (void)envelope->OpenTurn(As(hostile).get(), TurnRequest(kHostile, "h-grep"), &grep_turn);
  (void)envelope->OpenTurn(As(hostile).get(), TurnRequest(kHostile, "h-watch"), &watch_turn);
  (void)envelope->OpenTurn(As(hostile).get(), TurnRequest(kHostile, "h-mcp", ev1::RUNTIME_MCP),
                           &mcp_turn);
  attackers.emplace_back([&] {  // open
    for (int64_t i = 0; !stop; ++i) {
      ev1::OpenTurnRequest request = TurnRequest(kHostile, absl::StrCat("h-open-", i));
      if (i % 2 == 1) {
        request.mutable_execution_request()->mutable_context()->mutable_actor()->set_agent_id("x");
      }
      ev1::OpenTurnResponse opened;
      grpc::Status status = envelope->OpenTurn(As(hostile).get(), request, &opened);
      if (!status.ok()) {
        answers.Count(absl::StrCat("OpenTurn ", status.error_code()), status.error_message());
      } else if (opened.has_result()) {
        answers.Count("OpenTurn ended at admission " + opened.result().error().code(), "");
      } else {
        answers.Count("OpenTurn running", "");
      }
    }
  });
  attackers.emplace_back([&] {  // refusals
    for (int64_t i = 0; !stop; ++i) {
      ev1::InvokeToolResponse invoked;
      grpc::Status status =
          envelope->InvokeTool(As(hostile).get(),
                               Invoke(budget_turn.turn_id(), "h-budget", "files.read",
                                      R"({"path": "Workspace/notes.txt"})", i),
                               &invoked);
      if (!status.ok()) {
        answers.Count(absl::StrCat("InvokeTool ", status.error_code()), status.error_message());
      } else {
        answers.Count(invoked.result().has_error()
                          ? "InvokeTool in band " + invoked.result().error().code()
                          : std::string("InvokeTool succeeded"),
                      "");
      }
    }
  });
  attackers.emplace_back([&] {  // grep
    for (int64_t i = 0; !stop; ++i) {
      ev1::InvokeToolResponse invoked;
      grpc::Status status = envelope->InvokeTool(
          As(hostile).get(),
          Invoke(grep_turn.turn_id(), "h-grep", "files.grep",
                 R"({"path": "Workspace", "pattern": "match", "contextBefore": 100,
                     "contextAfter": 100})",
                 i),
          &invoked);
      if (!status.ok()) {
        answers.Count(absl::StrCat("grep ", status.error_code()), status.error_message());
      } else if (invoked.result().has_error()) {
        const auto& details = invoked.result().error().details().fields();
        auto cause = details.find("cause");
        answers.Count(absl::StrCat("grep in band ", invoked.result().error().code(), " cause ",
                                   cause == details.end() ? "" : cause->second.string_value()),
                      "");
      } else {
        answers.Count("grep succeeded", "");
      }
    }
  });
  std::vector<std::unique_ptr<grpc::ClientContext>> watch_contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<ev1::WatchTurnResponse>>> watches;
  attackers.emplace_back([&] {  // polls
    for (int i = 0; i < 64 && !stop; ++i) {
      watch_contexts.push_back(As(hostile, 600));
      ev1::WatchTurnRequest watch;
      watch.set_turn_id(watch_turn.turn_id());
      watches.push_back(envelope->WatchTurn(watch_contexts.back().get(), watch));
      ev1::WatchTurnResponse first;
      if (watches.back()->Read(&first)) {
        answers.Count("WatchTurn held", "");
      } else {
        grpc::Status status = watches.back()->Finish();
        answers.Count(absl::StrCat("WatchTurn ", status.error_code()), status.error_message());
      }
    }
  });
  const std::string mcp_url = mcp_turn.mcp().url();
  const int mcp_port = mcp_url.empty() ? 0 : std::stoi(mcp_url.substr(mcp_url.rfind(':') + 1));
  attackers.emplace_back([&] {  // slow
    std::vector<int> held;
    int64_t opened = 0;
    while (!stop) {
      while (held.size() < 40) {
        const int fd = SlowConnection(mcp_port);
        if (fd < 0) break;
        held.push_back(fd);
        ++opened;
      }
      // Connections the door closed (its read timeout) are replaced.
      for (auto it = held.begin(); it != held.end();) {
        char byte;
        const ssize_t n = recv(*it, &byte, 1, MSG_DONTWAIT);
        if (n == 0) {
          close(*it);
          it = held.erase(it);
          answers.Count("MCP slow connection closed by the door", "");
        } else {
          ++it;
        }
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    for (int fd : held) close(fd);
    answers.Count("MCP slow connections opened", absl::StrCat(opened));
  });
  const std::vector<double> hostile_phase = RunQuiet(*envelope, tokens, phase, "hostile");
  stop = true;
  for (auto& context : watch_contexts) context->TryCancel();
  for (std::thread& thread : attackers) thread.join();
  const int64_t peak_kb = PeakRssKb((*sharedosd)->pid());

  const double a50 = Percentile(alone, 0.50) / 1000, a99 = Percentile(alone, 0.99) / 1000;
  const double h50 = Percentile(hostile_phase, 0.50) / 1000;
  const double h99 = Percentile(hostile_phase, 0.99) / 1000;
  std::printf("quiet tenants' InvokeTool (files.read, mediated), ms:\n");
  std::printf("  %-22s %8s %8s %8s\n", "", "calls", "p50", "p99");
  std::printf("  %-22s %8zu %8.2f %8.2f\n", "alone", alone.size(), a50, a99);
  std::printf("  %-22s %8zu %8.2f %8.2f\n", "with the hostile one", hostile_phase.size(), h50, h99);
  std::printf("  ratio (hostile / alone)         %8.2f %8.2f   (target at p99: <= 1.5)\n",
              a50 > 0 ? h50 / a50 : 0, a99 > 0 ? h99 / a99 : 0);
  std::printf("sharedosd peak RSS: %lld KB\n", static_cast<long long>(peak_kb));
  std::printf("the hostile tenant was answered:\n");
  for (const auto& [kind, entry] : answers.seen) {
    std::printf("  %-50s %8lld  %s\n", kind.c_str(), static_cast<long long>(entry.first),
                entry.second.substr(0, 160).c_str());
  }
  watches.clear();
  watch_contexts.clear();
  (void)(*sharedosd)->Stop();
  return 0;
}
