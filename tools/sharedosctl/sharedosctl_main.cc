// sharedosctl: the operators' command-line tool for a SharedOS control plane (GrantStore and
// AuditLog on sharedosd's port), authenticated with the admin token read from --token_file;
// `turn` also plays a host (Envelope, with the host token) running the demo turn; `login` gets a
// token from the organisation's identity provider (login.h), used when no --token_file is given.
//
// Against the services run one by one (deploy/compose, deploy/k8s) rather than sharedosd,
// $SHAREDOS_GRANTSTORE_TARGET and $SHAREDOS_AUDIT_TARGET, when set, are where the GrantStore and
// AuditLog calls go (with the same TLS flags); --target (or $SHAREDOS_TARGET) then reaches the
// envelope for `turn`.
//
// Flags are parsed by cli.h rather than absl flags: each sub-command has its own flag set, which
// absl's process-wide flags (and ParseCommandLine's exit code on an unknown flag) cannot express.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "common/client/channel.h"
#include "envelope_svc/client/grpc_envelope_client.h"
#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/commands.h"
#include "tools/sharedosctl/login.h"

int main(int argc, char** argv) {
  namespace ctl = sharedos::sharedosctl;
  const std::vector<std::string> args(argv + 1, argv + argc);
  ctl::GlobalOptions globals;
  // The address when --target is absent.
  if (const char* target = std::getenv("SHAREDOS_TARGET"); target != nullptr && *target != '\0') {
    globals.target = target;
  }
  auto invocation = ctl::ParseArgs(args, &globals);
  if (!invocation.ok()) {
    std::cerr << "sharedosctl: " << invocation.status().message() << "\n\n" << ctl::UsageText();
    return ctl::kExitUsage;
  }
  if (invocation->help) {
    std::cout << ctl::UsageText();
    return ctl::kExitOk;
  }
  // Offline: prints a recipe, reaches no server and reads no token.
  if (invocation->command == "mcp-config") {
    const int offline = ctl::RunCommand(*invocation, globals, ctl::Clients{}, std::cout, std::cerr);
    std::cout.flush();
    return offline;
  }
  // Offline of the services: signs in at the identity provider and keeps its token.
  if (invocation->command == "login") {
    ctl::LoginOptions login;
    login.issuer = invocation->Get("issuer");
    login.client_id = invocation->Get("client_id");
    if (invocation->Has("scope")) login.scope = invocation->Get("scope");
    login.resource = invocation->Get("resource");
    login.ca_file = invocation->Get("ca_file");
    login.allow_loopback_http = invocation->GetBool("allow_loopback_http");
    login.timeout = globals.timeout;
    const int logged_in = ctl::RunLogin(login, std::cout, std::cerr);
    std::cout.flush();
    return logged_in;
  }
  // Without --token_file, the token `login` kept (when there is one).
  if (!globals.token_file_given) {
    auto kept = ctl::ExistingLoginTokenFile();
    if (!kept.ok()) {
      std::cerr << "sharedosctl: " << kept.status().message() << "\n";
      return ctl::kExitFailed;
    }
    if (kept->has_value()) globals.token_file = **kept;
  }
  auto token = ctl::ReadToken(globals.token_file);
  if (!token.ok()) {
    std::cerr << "sharedosctl: " << token.status().message() << "\n";
    return ctl::kExitFailed;
  }
  std::string host_token;
  if (invocation->command == "turn") {
    auto read = ctl::ReadToken(invocation->Has("host_token_file")
                                   ? invocation->Get("host_token_file")
                                   : std::string("sharedos-data/host.token"));
    if (!read.ok()) {
      std::cerr << "sharedosctl: " << read.status().message() << "\n";
      return ctl::kExitFailed;
    }
    host_token = *read;
  }
  auto made = sharedos::common::client::NewChannel(globals.target, globals.tls, "--target");
  if (!made.ok()) {
    std::cerr << "sharedosctl: " << made.status().message() << "\n";
    return ctl::kExitUsage;
  }
  std::shared_ptr<grpc::Channel> channel = *std::move(made);
  // The channel of a service named by `variable` when it is set; else --target's.
  auto service_channel = [&](const char* variable) -> std::shared_ptr<grpc::Channel> {
    const char* target = std::getenv(variable);
    if (target == nullptr || *target == '\0') return channel;
    auto own =
        sharedos::common::client::NewChannel(target, globals.tls, std::string("$") + variable);
    if (!own.ok()) {
      std::cerr << "sharedosctl: " << own.status().message() << "\n";
      return nullptr;
    }
    return *std::move(own);
  };
  std::shared_ptr<grpc::Channel> grants_channel = service_channel("SHAREDOS_GRANTSTORE_TARGET");
  std::shared_ptr<grpc::Channel> audit_channel = service_channel("SHAREDOS_AUDIT_TARGET");
  if (grants_channel == nullptr || audit_channel == nullptr) return ctl::kExitUsage;
  int code;
  {
    auto grants = sharedos::grantstore::v1::GrantStore::NewStub(grants_channel);
    auto audit = sharedos::audit::v1::AuditLog::NewStub(audit_channel);
    sharedos::envelope::client::GrpcEnvelopeClient envelope(
        sharedos::envelope::v1::Envelope::NewStub(channel), host_token, globals.timeout);
    ctl::Clients clients{grants.get(), audit.get(), *token, &envelope};
    code = ctl::RunCommand(*invocation, globals, clients, std::cout, std::cerr);
  }
  std::cout.flush();
  return code;
}
