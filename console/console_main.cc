// console: the reviewer console as its own process, for deployments of separate services
// (sharedosd serves the same console in its one process). The composition root of the console:
// its flags (where the grant store and the audit log are, where browsers reach it) beside where
// the console listens (console_flags.h, shared with sharedosd: --console_host, --console_port)
// and the shared ones (common/server: --host/--port for its health and status, the TLS flags,
// --credentials, --oidc_config). It holds no authority of its own: every page calls GrantStore at
// --grantstore_target and AuditLog at --audit_target with the signed-in person's credential; its
// own credential (--grantstore_token_file, the principal service:console) is admitted to one
// call, the lookup of the credentials people sign in with.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/client/channel.h"
#include "common/server/dependency_probes.h"
#include "common/server/service_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "console/console_flags.h"
#include "console/console_server.h"
#include "console/oidc_provider.h"
#include "grantstore_svc/client/grantstore_flags.h"

ABSL_FLAG(std::string, console_public_origin, "",
          "Where browsers reach the console when it is not --console_host:--console_port (a "
          "published port, an ingress), as scheme://host[:port], e.g. "
          "https://console.example.com: forms posted from there are accepted (others are "
          "refused as cross-site).");
ABSL_FLAG(std::string, audit_target, "",
          "audit_svc address (host:port). Required: the record view and the explain page.");

namespace {

namespace server = ::sharedos::common::server;
namespace console = ::sharedos::console;

// Where the console listens when --console_port is left at -1 (the binary's default).
constexpr int kDefaultConsolePort = 8443;

// The console as a side listener of a gRPC server that serves nothing but its health and
// status: a deployment probes the console as it probes every service.
class ConsoleServable final : public server::Servable {
 public:
  // Errors: those of ConfiguredOidcProvider::Create and ConsoleServer::Start.
  absl::Status Start(const server::ServiceFlags& flags, std::shared_ptr<grpc::Channel> grants,
                     std::shared_ptr<grpc::Channel> audit) {
    // Credentials issued through the control plane (reviewers, scoped admins), looked up at
    // grantstore_svc on every sign-in; beside the ones --credentials names.
    ASSIGN_OR_RETURN(lookup_, sharedos::grantstore::client::AttachGrantStoreCredentialsFromFlags(
                                  *flags.authenticator, flags.channel_tls));
    if (flags.oidc != nullptr) {
      ASSIGN_OR_RETURN(oidc_, console::ConfiguredOidcProvider::Create(flags.oidc->stack()));
    }
    ASSIGN_OR_RETURN(std::optional<console::ConsoleOptions> options,
                     console::ConsoleListenerFromFlags(kDefaultConsolePort));
    options->public_origin = absl::GetFlag(FLAGS_console_public_origin);
    ASSIGN_OR_RETURN(console_, console::ConsoleServer::Start(
                                   *std::move(options), *flags.authenticator, std::move(grants),
                                   std::move(audit), sharedos::common::RealClock(), oidc_.get()));
    return absl::OkStatus();
  }

  std::vector<grpc::Service*> services() override { return {}; }
  std::vector<std::pair<std::string, std::string>> side_listeners() const override {
    return {{"web", console_->url()}};
  }
  void StopSideListeners() override { console_->Shutdown(); }

 private:
  std::unique_ptr<server::CredentialSource> lookup_;
  std::unique_ptr<console::ConfiguredOidcProvider> oidc_;
  std::unique_ptr<console::ConsoleServer> console_;
};

absl::StatusOr<std::shared_ptr<grpc::Channel>> Upstream(
    const std::string& flag, const std::string& target,
    const sharedos::common::client::ChannelTls& tls) {
  if (target.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": required"));
  return sharedos::common::client::NewChannel(target, tls, absl::StrCat("--", flag));
}

// --console_public_origin: empty, or scheme://host[:port] (no path), at most 256 bytes.
absl::Status CheckPublicOrigin(const std::string& origin) {
  if (origin.empty()) return absl::OkStatus();
  const size_t host = origin.find("://");
  const std::string scheme = host == std::string::npos ? "" : origin.substr(0, host);
  if (origin.size() > 256 || (scheme != "https" && scheme != "http") || origin.size() == host + 3 ||
      origin.find_first_of("/?#@ ", host + 3) != std::string::npos) {
    return absl::InvalidArgumentError(
        "--console_public_origin: scheme://host[:port] (http or https, no path), at most 256 "
        "bytes");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<server::Servable>> Build(const server::ServiceFlags& flags) {
  RETURN_IF_ERROR(CheckPublicOrigin(absl::GetFlag(FLAGS_console_public_origin)));
  if (sharedos::grantstore::client::GrantStoreTokenFileFromFlags().empty()) {
    return absl::InvalidArgumentError("--grantstore_token_file: required");
  }
  ASSIGN_OR_RETURN(
      std::shared_ptr<grpc::Channel> grants,
      Upstream("grantstore_target", sharedos::grantstore::client::GrantStoreTargetFromFlags(),
               flags.channel_tls));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> audit,
                   Upstream("audit_target", absl::GetFlag(FLAGS_audit_target), flags.channel_tls));
  auto console = std::make_unique<ConsoleServable>();
  RETURN_IF_ERROR(console->Start(flags, grants, audit));
  // Ready while both services it shows are.
  return server::WithDependencies(
      std::move(console),
      {server::ServiceDependency("grantstore", grants), server::ServiceDependency("audit", audit)});
}

}  // namespace

int main(int argc, char** argv) {
  const server::ServiceBinary binary{
      "console",
      "console: the SharedOS reviewer console (escalations, the audit record) over grantstore_svc "
      "and audit_svc.",
      {{"credentials",
        "Credentials file (JSON, SHA-256 digests): who may sign in beside the credentials "
        "grantstore_svc holds (admins and reviewers only). Required."},
       {"grantstore_target",
        "grantstore_svc address (host:port). Required: the escalation queue and decisions, and "
        "the lookup of credentials issued through the control plane."},
       {"grantstore_token_file",
        "File with the console's grantstore_svc token (first line; the principal "
        "service:console). Required."},
       {"console_port",
        "Port of the reviewer console (a web UI on --console_host; HTTPS with --tls_cert and "
        "--tls_key, else plaintext HTTP on loopback only); 0 picks a free port; -1 (the "
        "default): 8443. Printed as \"console web listening on <url>\"."}}};
  return server::RunService(argc, argv, binary, Build);
}
