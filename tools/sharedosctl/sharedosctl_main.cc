// sharedosctl: the operators' command-line tool for a SharedOS control plane (GrantStore and
// AuditLog on sharedosd's port), authenticated with the admin token read from --token_file.
//
// Flags are parsed by cli.h rather than absl flags: each sub-command has its own flag set, which
// absl's process-wide flags (and ParseCommandLine's exit code on an unknown flag) cannot express.
#include <iostream>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/commands.h"

int main(int argc, char** argv) {
  namespace ctl = sharedos::sharedosctl;
  const std::vector<std::string> args(argv + 1, argv + argc);
  ctl::GlobalOptions globals;
  auto invocation = ctl::ParseArgs(args, &globals);
  if (!invocation.ok()) {
    std::cerr << "sharedosctl: " << invocation.status().message() << "\n\n" << ctl::UsageText();
    return ctl::kExitUsage;
  }
  if (invocation->help) {
    std::cout << ctl::UsageText();
    return ctl::kExitOk;
  }
  auto token = ctl::ReadToken(globals.token_file);
  if (!token.ok()) {
    std::cerr << "sharedosctl: " << token.status().message() << "\n";
    return ctl::kExitFailed;
  }
  int code;
  {
    auto channel = grpc::CreateChannel(globals.target, grpc::InsecureChannelCredentials());
    auto grants = sharedos::grantstore::v1::GrantStore::NewStub(channel);
    auto audit = sharedos::audit::v1::AuditLog::NewStub(channel);
    ctl::Clients clients{grants.get(), audit.get(), *token};
    code = ctl::RunCommand(*invocation, globals, clients, std::cout, std::cerr);
  }
  std::cout.flush();
  return code;
}
