// The `audit` commands of sharedosctl (AuditLog): query records, tail them as they are written,
// and verify the hash chain.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_AUDIT_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_AUDIT_COMMANDS_H_

#include <ostream>

#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

int AuditQuery(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err);
int AuditTail(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
              std::ostream& out, std::ostream& err);
int AuditVerify(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_AUDIT_COMMANDS_H_
