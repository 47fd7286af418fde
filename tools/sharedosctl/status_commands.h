// The `status` command of sharedosctl (sharedos.status.v1 and grpc.health.v1): each process's
// health, version, services with their dependencies and stores, the audit head and the audit
// outboxes' depth.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_STATUS_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_STATUS_COMMANDS_H_

#include <ostream>
#include <string>

#include "sharedos/status/v1/status.pb.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

// --targets=<host:port>,... (default: --target): one block per process. Exit 0 only when every
// process answered and reports every service SERVING.
int Status(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
           std::ostream& out, std::ostream& err);

// The block of one process at `target` (its whole-server grpc.health.v1 answer is `health`).
std::string RenderStatus(const std::string& target, const std::string& health,
                         const sharedos::status::v1::GetStatusResponse& status);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_STATUS_COMMANDS_H_
