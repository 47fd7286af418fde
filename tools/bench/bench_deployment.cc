#include "tools/bench/bench_deployment.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/demo_world.h"

namespace sharedos::bench {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace demo = ::sharedos::testing::demo;

}  // namespace

void Die(absl::string_view what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, std::string(what).c_str());
  std::exit(1);
}

void Authenticate(grpc::ClientContext& context, absl::string_view token, absl::Duration deadline) {
  context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMicroseconds(deadline));
}

void FreshDirectory(const std::string& dir) {
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  if (!std::filesystem::create_directories(dir, error)) Die("cannot create " + dir);
}

std::unique_ptr<testing::Process> StartServiceOrDie(const std::string& runfile,
                                                    const std::vector<std::string>& args,
                                                    const std::string& name, const char* argv0,
                                                    absl::Duration timeout) {
  auto child = testing::Process::StartService(runfile, args, name, argv0, timeout);
  if (!child.ok()) Die(absl::StrCat(name, ": ", child.status().message()));
  return *std::move(child);
}

double ProcessCpuMicros(pid_t pid, bool waited_children) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The fields after the command name, which is in parentheses and may hold spaces: utime and
  // stime are the 12th and 13th of them (fields 14 and 15 of the file), cutime and cstime next.
  const size_t after = text.rfind(')');
  if (after == std::string::npos || after + 2 > text.size()) return 0;
  const std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(text).substr(after + 2), ' ');
  unsigned long long ticks = 0;
  for (size_t field : {11, 12, 13, 14}) {
    if (field > 12 && !waited_children) break;
    unsigned long long value = 0;
    if (fields.size() <= field || !absl::SimpleAtoi(fields[field], &value)) return 0;
    ticks += value;
  }
  return 1e6 * static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(q * values.size()))];
}

pb::CapabilityGrant FilesReadGrant() {
  pb::CapabilityGrant grant = demo::Grant();
  demo::RemoveCapability(grant, "files", {"Scratch"});
  demo::RemoveCapability(grant, "sharedos", {"escalation"});
  return grant;
}

pb::ExecutionRequest FilesReadExecution(const std::string& execution_id,
                                        const std::string& trace_id) {
  pb::ExecutionRequest execution = demo::TurnRequest(execution_id, trace_id).execution_request();
  execution.clear_tools();
  execution.add_tools("files.read");
  execution.mutable_context()->clear_enabled_tool_namespaces();
  execution.mutable_context()->add_enabled_tool_namespaces("files");
  execution.mutable_options()->set_max_steps(1000);
  execution.mutable_options()->set_max_tool_calls(10000);
  execution.mutable_options()->set_timeout_ms(600000);
  return execution;
}

pb::ToolCall FilesReadCall(const std::string& call_id, const std::string& trace_id) {
  pb::ToolCall call;
  call.set_id(call_id);
  call.set_tool("files.read");
  call.set_trace_id(trace_id);
  (*call.mutable_arguments()->mutable_fields())["path"].set_string_value("Workspace/notes.txt");
  call.mutable_requested_at()->set_seconds(demo::kNowSeconds);
  return call;
}

void WriteFilesReadWorld(const std::string& dir) {
  if (!demo::WriteWorkspace(dir + "/files").ok() ||
      !testing::WriteFile(dir + "/registry.textproto", demo::RegistryText({"files.read"})).ok()) {
    Die("cannot write configuration");
  }
}

void IssueGrantOrDie(const std::string& address, absl::string_view admin_token,
                     const pb::CapabilityGrant& grant, absl::string_view what) {
  auto stub =
      gs::GrantStore::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  gs::IssueGrantRequest request;
  *request.mutable_grant() = grant;
  gs::IssueGrantResponse response;
  grpc::ClientContext context;
  Authenticate(context, admin_token);
  const grpc::Status status = stub->IssueGrant(&context, request, &response);
  if (!status.ok()) Die(absl::StrCat(what, ": ", status.error_message()));
}

}  // namespace sharedos::bench
