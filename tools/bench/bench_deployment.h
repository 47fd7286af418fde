// What the benchmarks that start real deployments share (invoke_bench, turns_scale_bench,
// replicas_scale_bench, authorizer_bench; audit_scale_bench, envelope_bench, mcp_bench and
// noisy_neighbour_bench take the measuring helpers): how a bench stops on a failure, calls a
// service as a credential, starts a service process, measures a process's CPU and a series'
// percentiles, and the one world the files.read benches run — the demo grant and turn
// (tests/testing/demo_world.h) narrowed to files.read of Workspace/notes.txt.
//
// A bench is a main that measures once and exits: every step that cannot go on calls Die. The
// deployments themselves are tests/testing/deployment.h's; PostgreSQL's throwaway cluster is
// tests/testing/postgres_cluster.h's (CreateClusterOrExit). Stateless; thread-safe.

#ifndef SHAREDOS_TOOLS_BENCH_BENCH_DEPLOYMENT_H_
#define SHAREDOS_TOOLS_BENCH_BENCH_DEPLOYMENT_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"
#include "tests/testing/process.h"

namespace sharedos::bench {

// Prints "<program>: <what>" to stderr (the program: the running binary's file name, e.g.
// invoke_bench) and exits with status 1.
[[noreturn]] void Die(absl::string_view what);

// Adds "authorization: Bearer <token>" and a deadline `deadline` from now to `context`.
void Authenticate(grpc::ClientContext& context, absl::string_view token,
                  absl::Duration deadline = absl::Seconds(30));

// Removes `dir` if it exists and creates it (and its parents) afresh; dies when it cannot.
void FreshDirectory(const std::string& dir);

// Starts the service binary `runfile` (a path in the calling binary's runfiles, found from
// `argv0`) with `args` and waits for its port (testing::Process::StartService); dies naming
// `name` when it does not start within `timeout`.
std::unique_ptr<testing::Process> StartServiceOrDie(const std::string& runfile,
                                                    const std::vector<std::string>& args,
                                                    const std::string& name, const char* argv0,
                                                    absl::Duration timeout = absl::Seconds(60));

// CPU time (user + system, every thread) `pid` has used so far, from /proc/<pid>/stat; with
// `waited_children`, also that of its children that have exited and been waited for. 0 when
// the file cannot be read.
double ProcessCpuMicros(pid_t pid, bool waited_children = false);

// The `q` quantile of `values` (the element at index q·n, the last for q·n ≥ n); 0 when empty.
double Percentile(std::vector<double> values, double q);

// ---- The files.read world (invoke_bench, turns_scale_bench, replicas_scale_bench) ----

// The demo grant without its write and escalation capabilities: every decision matches against
// the same two capabilities (run the agent, read Workspace/**).
protocol::v1::CapabilityGrant FilesReadGrant();

// The demo turn `execution_id` (trace `trace_id`) offering files.read alone (tool namespace
// files), with budgets for long series: 1,000 steps, 10,000 tool calls, 600 s.
protocol::v1::ExecutionRequest FilesReadExecution(const std::string& execution_id,
                                                  const std::string& trace_id);

// The call `call_id` of files.read {path: Workspace/notes.txt} (the demo world's 9-byte file),
// requested at the demo world's instant.
protocol::v1::ToolCall FilesReadCall(const std::string& call_id, const std::string& trace_id);

// Writes, in `dir`, what a deployment of the files.read world is given: the demo workspace under
// files/ (--files_root) and the files.read registry as registry.textproto (--registry); dies with
// "cannot write configuration" when it cannot.
void WriteFilesReadWorld(const std::string& dir);

// Issues `grant` at the grant store `address` as the admin `admin_token`; dies with
// "<what>: <the error>" when it is refused.
void IssueGrantOrDie(const std::string& address, absl::string_view admin_token,
                     const protocol::v1::CapabilityGrant& grant,
                     absl::string_view what = "IssueGrant");

}  // namespace sharedos::bench

#endif  // SHAREDOS_TOOLS_BENCH_BENCH_DEPLOYMENT_H_
