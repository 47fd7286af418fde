#include "tools/sharedosctl/commands.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/sharedosctl/audit_commands.h"
#include "tools/sharedosctl/backup_command.h"
#include "tools/sharedosctl/credential_commands.h"
#include "tools/sharedosctl/escalation_commands.h"
#include "tools/sharedosctl/explain_command.h"
#include "tools/sharedosctl/grant_commands.h"
#include "tools/sharedosctl/mcp_config.h"
#include "tools/sharedosctl/status_commands.h"

namespace sharedos::sharedosctl {

int RunCommand(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err) {
  static const std::pair<const char*, CommandHandler> kHandlers[] = {
      {"grants issue", GrantsIssue},
      {"grants derive", GrantsDerive},
      {"grants revoke", GrantsRevoke},
      {"grants list", GrantsList},
      {"grants show", GrantsShow},
      {"grants accept-restore", GrantsAcceptRestore},
      {"policy put", PolicyPut},
      {"policy get", PolicyGet},
      {"escalations list", EscalationsList},
      {"escalations show", EscalationsShow},
      {"escalations approve", EscalationsApprove},
      {"escalations deny", EscalationsDeny},
      {"audit query", AuditQuery},
      {"audit tail", AuditTail},
      {"audit verify", AuditVerify},
      {"audit export", AuditExport},
      {"audit checkpoint", AuditCheckpoint},
      {"audit witnessed", AuditWitnessed},
      {"credentials issue", CredentialsIssue},
      {"credentials list", CredentialsList},
      {"credentials revoke", CredentialsRevoke},
      {"credentials rotate", CredentialsRotate},
      {"explain", ExplainCommand},
      {"status", Status},
      {"backup", Backup},
      {"mcp-config", McpConfigCommand},
      {"turn", RunDemoTurn},
  };
  for (const auto& [name, handler] : kHandlers) {
    if (inv.command == name) return handler(inv, globals, clients, out, err);
  }
  return UsageError(
      err, absl::InvalidArgumentError(absl::StrCat("unknown command \"", inv.command, "\"")));
}

}  // namespace sharedos::sharedosctl
