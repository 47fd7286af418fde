#include "tools/sharedosctl/status_commands.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/client/channel.h"
#include "common/client/health_check.h"
#include "common/text/terminal_safe.h"
#include "grantstore_svc/client/operator_render.h"
#include "sharedos/status/v1/status.grpc.pb.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::ToJson;

namespace {

namespace v1 = ::sharedos::status::v1;
using common::text::TerminalSafe;

// At most this many targets on one command line.
constexpr size_t kMaxTargets = 16;

std::string RenderService(const v1::ServiceStatus& service) {
  std::string line =
      absl::StrCat("  ", TerminalSafe(service.service()), ": ", TerminalSafe(service.health()));
  if (service.has_store()) {
    absl::StrAppend(&line, "; store ", TerminalSafe(service.store().kind()), " ",
                    TerminalSafe(service.store().location()));
  }
  if (service.has_audit_head()) {
    absl::StrAppend(&line, "; audit head ", service.audit_head().sequence());
    if (!service.audit_head().hash_prefix().empty()) {
      absl::StrAppend(&line, " (", TerminalSafe(service.audit_head().hash_prefix()), "…)");
    }
  }
  std::vector<std::string> dependencies;
  for (const v1::DependencyStatus& dependency : service.dependencies()) {
    dependencies.push_back(
        absl::StrCat(TerminalSafe(dependency.name()), " ", dependency.up() ? "up" : "DOWN"));
  }
  if (!dependencies.empty()) {
    absl::StrAppend(&line, "; needs ", absl::StrJoin(dependencies, ", "));
  }
  return line + "\n";
}

// One process: its block on `out` (or its error on `err`); true when it and every service are
// SERVING.
bool OneTarget(const std::string& target, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      common::client::NewChannel(target, globals.tls, "--targets");
  if (!channel.ok()) {
    CallError(err, channel.status());
    return false;
  }
  absl::StatusOr<common::client::HealthStatus> health =
      common::client::CheckHealth(*channel, "", globals.timeout);
  const std::string health_name = health.ok() ? common::client::HealthStatusName(*health)
                                              : absl::StatusCodeToString(health.status().code());
  v1::GetStatusResponse response;
  grpc::Status status = v1::Status::NewStub(*channel)->GetStatus(Context(clients, globals).get(),
                                                                 v1::GetStatusRequest(), &response);
  if (!status.ok()) {
    err << "sharedosctl: " << TerminalSafe(target) << ": health " << health_name << "\n";
    CallError(err, status);
    return false;
  }
  if (globals.json) {
    out << ToJson(response, /*compact=*/true) << "\n";
  } else {
    out << RenderStatus(target, health_name, response);
  }
  bool serving = health.ok() && *health == common::client::HealthStatus::kServing;
  for (const v1::ServiceStatus& service : response.services()) {
    serving = serving && service.health() == "SERVING";
  }
  return serving;
}

}  // namespace

std::string RenderStatus(const std::string& target, const std::string& health,
                         const v1::GetStatusResponse& status) {
  std::string text = absl::StrCat(TerminalSafe(target), ": ", health, " (SharedOS ",
                                  TerminalSafe(status.version()), ")\n");
  for (const v1::ServiceStatus& service : status.services()) {
    absl::StrAppend(&text, RenderService(service));
  }
  for (const v1::OutboxStatus& outbox : status.outboxes()) {
    absl::StrAppend(&text, "  outbox ", TerminalSafe(outbox.writer()), ": ", outbox.depth(),
                    " waiting\n");
  }
  // Why a dependency is down, when it says (e.g. anchor: the grant store behind the audit log);
  // once per dependency, though every service of a process lists it.
  std::set<std::string> said;
  for (const v1::ServiceStatus& service : status.services()) {
    for (const v1::DependencyStatus& dependency : service.dependencies()) {
      if (dependency.up() || dependency.detail().empty()) continue;
      std::string line = absl::StrCat("  ", TerminalSafe(dependency.name()),
                                      " DOWN: ", TerminalSafe(dependency.detail()), "\n");
      if (said.insert(line).second) absl::StrAppend(&text, line);
    }
  }
  return text;
}

int Status(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
           std::ostream& out, std::ostream& err) {
  std::vector<std::string> targets =
      inv.Has("targets") ? absl::StrSplit(inv.Get("targets"), ',', absl::SkipWhitespace())
                         : std::vector<std::string>{globals.target};
  if (targets.empty() || targets.size() > kMaxTargets) {
    return UsageError(err,
                      absl::InvalidArgumentError("--targets: 1 to 16 host:port, comma-separated"));
  }
  bool all_serving = true;
  for (const std::string& target : targets) {
    all_serving = OneTarget(target, globals, clients, out, err) && all_serving;
  }
  return all_serving ? kExitOk : kExitFailed;
}

}  // namespace sharedos::sharedosctl
