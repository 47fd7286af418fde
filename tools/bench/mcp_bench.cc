// tools/call through the MCP front door against InvokeTool through gRPC, on the same turn, in one
// run (issue 8 "Speed"; the reference: 3.64 ms per MCP call).
//
//   bazel run //tools/bench:mcp_bench -- --rounds=5 --calls=1000
//
// Starts sharedosd from this target's runfiles (--demo world, SQLite audit --durability=normal,
// gRPC and MCP on loopback). Each round opens one RUNTIME_MCP turn (files.read,
// sharedos.escalate offered; the demo grant reads Workspace/**) and, after a warm-up, runs three
// series on it, their order rotated per round so machine load hits them alike, one caller:
//   grpc      Envelope.InvokeTool files.read Workspace/notes.txt (sync gRPC stub)
//   mcp       POST /mcp tools/call files.read, the same arguments (cpp-httplib client, keep-alive,
//             legacy era JSON): token check, the escalation latch, the same InvokeTool path
//   mcp.ping  POST /mcp ping: the MCP transport alone (HTTP, token, JSON-RPC), no tool
// and then, with --node (default on), the same tools/call from the official MCP SDK v1 client
// in node (mcp_bench_client.mjs, timed in the client; node_modules found beside //:package.json).
// Prints p50/p99 per series and the MCP overhead (mcp − grpc) at p50 and p99.
#include <httplib.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedosd/demo_turn.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tools/bench/bench_deployment.h"

ABSL_FLAG(int, rounds, 5, "Rounds (one turn each; every series each round).");
ABSL_FLAG(int, calls, 1000, "Calls per series per round (5 series share a turn's 10,000 calls).");
ABSL_FLAG(int, warmup, 200, "Unmeasured calls per series per round first.");
ABSL_FLAG(bool, node, true, "Also time tools/call from the official SDK v1 client (node).");

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace ev1 = ::sharedos::envelope::v1;
using Json = nlohmann::json;
using ::sharedos::bench::Percentile;
using ::sharedos::testing::SharedosdDeployment;
using Clock = std::chrono::steady_clock;

int Fail(const std::string& what) {
  std::fprintf(stderr, "mcp_bench: %s\n", what.c_str());
  return 2;
}

// The workspace root: where //:package.json really lives (node_modules beside it).
std::string WorkspaceRoot(const char* argv0) {
  char resolved[PATH_MAX];
  const std::string link = sharedos::testing::RunfilePath("package.json", argv0);
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string root = resolved;
  return root.substr(0, root.rfind('/'));
}

// The official client's series for one turn (and bare node fetch's, appended to `fetch`): its
// microseconds, or empty on failure.
std::vector<double> NodeSeries(std::vector<double>& fetch, const std::string& root,
                               const std::string& url, const std::string& token, int warmup,
                               int calls) {
  const std::string command = absl::StrCat(
      "cd '", root, "' && PATH=\"$PATH:/usr/local/bin\" node tools/bench/mcp_bench_client.mjs '",
      url, "' '", token, "' ", warmup, " ", calls, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::string output;
  char buffer[65536];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  if (pclose(pipe) != 0) {
    std::fprintf(stderr, "mcp_bench: node client failed:\n%s\n", output.c_str());
    return {};
  }
  const Json json = Json::parse(output.substr(output.rfind("{\"micros\"")), nullptr, false);
  if (!json.is_object()) return {};
  for (double micros : json["fetchMicros"].get<std::vector<double>>()) fetch.push_back(micros);
  return json["micros"].get<std::vector<double>>();
}

struct Series {
  std::string name;
  // One call; false when it did not answer as expected.
  std::function<bool()> call;
  std::vector<double> micros;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  const int calls = absl::GetFlag(FLAGS_calls);
  const int warmup = absl::GetFlag(FLAGS_warmup);
  if (5 * (calls + warmup) > 10000) return Fail("--calls + --warmup: at most 2,000 per round");

  char temp_template[] = "/tmp/mcp_bench.XXXXXX";
  const char* temp = mkdtemp(temp_template);
  if (temp == nullptr) return Fail("cannot create a temporary directory");
  const std::string data = absl::StrCat(temp, "/sharedosd-data");
  SharedosdDeployment::Options options;
  options.data_dir = data;
  options.demo = true;
  options.mcp = true;
  options.registry =
      sharedos::testing::RunfilePath("envelope_svc/config/standard_tools.textproto", argv[0]);
  options.argv0 = argv[0];
  auto sharedosd = SharedosdDeployment::Start(std::move(options));
  if (!sharedosd.ok()) return Fail(std::string(sharedosd.status().message()));
  const std::string url = (*sharedosd)->mcp_url();
  const std::string host_token = (*sharedosd)->host_token();
  // "http://127.0.0.1:<port>/mcp"
  const std::string authority = url.substr(7, url.rfind("/mcp") - 7);
  int mcp_port = 0;
  if (!absl::SimpleAtoi(authority.substr(authority.rfind(':') + 1), &mcp_port)) {
    return Fail("cannot read the MCP port from " + url);
  }

  auto channel = grpc::CreateChannel((*sharedosd)->address(), grpc::InsecureChannelCredentials());
  auto envelope = ev1::Envelope::NewStub(channel);
  httplib::Client http("127.0.0.1", mcp_port);
  http.set_keep_alive(true);
  http.set_tcp_nodelay(true);

  const bool node = absl::GetFlag(FLAGS_node);
  const std::string root = node ? WorkspaceRoot(argv[0]) : "";
  if (node && root.empty()) return Fail("--node: //:package.json is not among the runfiles");
  std::vector<double> node_micros;
  std::vector<double> fetch_micros;
  std::vector<Series> series(3);
  series[0].name = "grpc InvokeTool";
  series[1].name = "mcp tools/call";
  series[2].name = "mcp ping (transport)";
  std::string turn_id;
  std::string token;
  int64_t next_id = 0;

  for (int round = 0; round < rounds; ++round) {
    google::protobuf::Timestamp now;
    now.set_seconds(absl::ToUnixSeconds(absl::Now()));
    ev1::OpenTurnRequest open = sharedos::sharedosd::DemoTurnRequest(
        ev1::RUNTIME_MCP, absl::StrCat("exec-bench-", round), "trace-bench", now);
    pb::ExecutionRequest* execution = open.mutable_execution_request();
    // files.read (measured) and the escalation affordance (so the latch is on the path).
    execution->clear_tools();
    execution->add_tools("files.read");
    execution->add_tools("sharedos.escalate");
    execution->mutable_options()->set_max_tool_calls(10000);
    execution->mutable_options()->set_timeout_ms(600000);
    ev1::OpenTurnResponse opened;
    grpc::ClientContext open_context;
    open_context.AddMetadata("authorization", "Bearer " + host_token);
    grpc::Status status = envelope->OpenTurn(&open_context, open, &opened);
    if (!status.ok() || opened.has_result()) return Fail("OpenTurn: " + status.error_message());
    turn_id = opened.turn_id();
    token = opened.mcp().token();

    series[0].call = [&] {
      ev1::InvokeToolRequest request;
      request.set_turn_id(turn_id);
      pb::ToolCall* call = request.mutable_call();
      call->set_id(absl::StrCat("call-", ++next_id));
      call->set_tool("files.read");
      call->set_trace_id("trace-bench");
      (*call->mutable_arguments()->mutable_fields())["path"].set_string_value(
          "Workspace/notes.txt");
      call->mutable_requested_at()->set_seconds(absl::ToUnixSeconds(absl::Now()));
      grpc::ClientContext context;
      context.AddMetadata("authorization", "Bearer " + host_token);
      ev1::InvokeToolResponse response;
      return envelope->InvokeTool(&context, request, &response).ok() &&
             response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED;
    };
    const httplib::Headers headers = {{"Authorization", "Bearer " + token},
                                      {"Accept", "application/json, text/event-stream"},
                                      {"MCP-Protocol-Version", "2025-11-25"}};
    series[1].call = [&] {
      const Json body = {
          {"jsonrpc", "2.0"},
          {"id", ++next_id},
          {"method", "tools/call"},
          {"params", {{"name", "files.read"}, {"arguments", {{"path", "Workspace/notes.txt"}}}}}};
      auto result = http.Post("/mcp", headers, body.dump(), "application/json");
      if (!result || result->status != 200) return false;
      const Json answer = Json::parse(result->body, nullptr, false);
      return answer.is_object() && answer["result"].value("isError", true) == false;
    };
    series[2].call = [&] {
      const Json body = {{"jsonrpc", "2.0"}, {"id", ++next_id}, {"method", "ping"}};
      auto result = http.Post("/mcp", headers, body.dump(), "application/json");
      return result && result->status == 200;
    };

    for (Series& s : series) {
      for (int i = 0; i < warmup; ++i) {
        if (!s.call()) return Fail(s.name + " failed during warm-up");
      }
    }
    for (size_t k = 0; k < series.size(); ++k) {
      Series& s = series[(k + round) % series.size()];
      for (int i = 0; i < calls; ++i) {
        const auto start = Clock::now();
        if (!s.call()) return Fail(s.name + " failed");
        s.micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
    }
    if (node) {
      std::vector<double> micros = NodeSeries(fetch_micros, root, url, token, warmup / 2, calls);
      if (micros.empty()) return Fail("the official client's series failed");
      node_micros.insert(node_micros.end(), micros.begin(), micros.end());
    }
    ev1::FinishTurnRequest finish;
    finish.set_turn_id(turn_id);
    finish.mutable_harness_exited()->set_outcome_status("completed");
    finish.mutable_harness_exited()->mutable_output()->set_string_value("done");
    grpc::ClientContext finish_context;
    finish_context.AddMetadata("authorization", "Bearer " + host_token);
    ev1::FinishTurnResponse finished;
    status = envelope->FinishTurn(&finish_context, finish, &finished);
    if (!status.ok()) return Fail("FinishTurn: " + status.error_message());
  }

  std::printf(
      "mcp_bench: sharedosd --durability=normal, %d rounds x %d calls per series, one "
      "caller, loopback\n",
      rounds, calls);
  std::printf("%-24s %10s %10s\n", "series (us)", "p50", "p99");
  for (const Series& s : series) {
    std::printf("%-24s %10.1f %10.1f\n", s.name.c_str(), Percentile(s.micros, 0.5),
                Percentile(s.micros, 0.99));
  }
  if (node) {
    std::printf("%-24s %10.1f %10.1f\n", "mcp tools/call (SDK v1)", Percentile(node_micros, 0.5),
                Percentile(node_micros, 0.99));
    std::printf("%-24s %10.1f %10.1f\n", "mcp tools/call (fetch)", Percentile(fetch_micros, 0.5),
                Percentile(fetch_micros, 0.99));
  }
  const double p50 = Percentile(series[1].micros, 0.5) - Percentile(series[0].micros, 0.5);
  const double p99 = Percentile(series[1].micros, 0.99) - Percentile(series[0].micros, 0.99);
  std::printf(
      "MCP overhead (mcp - grpc): p50 %+.1f us, p99 %+.1f us; mcp tools/call p50 is %.3f "
      "ms against the reference's 3.64 ms per MCP call\n",
      p50, p99, Percentile(series[1].micros, 0.5) / 1000.0);
  std::fflush(stdout);
  envelope.reset();
  (*sharedosd)->Stop().IgnoreError();
  return 0;
}
