#include "tools/sharedosctl/explain_command.h"

#include "grantstore_svc/client/explain.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::Explain;
using ::sharedos::grantstore::client::ExplainClients;
using ::sharedos::grantstore::client::Explanation;
using ::sharedos::grantstore::client::ExplanationJson;
using ::sharedos::grantstore::client::RenderExplanation;

int ExplainCommand(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                   std::ostream& out, std::ostream& err) {
  ExplainClients explain{clients.grants, clients.audit,
                         [&clients, &globals] { return Context(clients, globals); }};
  absl::StatusOr<Explanation> explanation = Explain(explain, inv.Get("id"));
  if (!explanation.ok()) {
    return explanation.status().code() == absl::StatusCode::kInvalidArgument
               ? UsageError(err, explanation.status())
               : CallError(err, explanation.status());
  }
  out << (globals.json ? ExplanationJson(*explanation) : RenderExplanation(*explanation));
  return kExitOk;
}

}  // namespace sharedos::sharedosctl
