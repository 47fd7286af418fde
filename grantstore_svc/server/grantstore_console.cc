#include "grantstore_svc/server/grantstore_console.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "audit_svc/client/audit_writer_flags.h"
#include "common/client/channel.h"
#include "common/server/server_runner.h"
#include "common/server/tls_flags.h"
#include "common/time/clock.h"
#include "console/console_server.h"
#include "console/oidc_provider.h"

ABSL_FLAG(int, console_port, -1,
          "Port of the reviewer console (a web UI on --console_host; HTTPS with --tls_cert and "
          "--tls_key, else plaintext HTTP on loopback only); 0 picks a free port; -1: no console. "
          "Its record view reads audit_svc at --audit_target.");
ABSL_FLAG(std::string, console_host, "127.0.0.1", "Host of the reviewer console.");

namespace sharedos::grantstore::server {
namespace {

class GrantStoreWithConsole final : public common::server::Servable {
 public:
  explicit GrantStoreWithConsole(std::unique_ptr<GrantStoreServer> grantstore)
      : grantstore_(std::move(grantstore)), console_service_(grantstore_->NewService()) {}

  absl::Status Start(const common::server::Authenticator& authenticator,
                     const common::oidc::OidcBearerVerifier* oidc) {
    if (oidc != nullptr) {
      absl::StatusOr<std::unique_ptr<console::ConfiguredOidcProvider>> provider =
          console::ConfiguredOidcProvider::Create(oidc->stack());
      if (!provider.ok()) return provider.status();
      oidc_ = *std::move(provider);
    }
    const audit::client::AuditWriterConfig audit = audit::client::AuditWriterConfigFromFlags();
    if (audit.target.empty()) {
      return absl::InvalidArgumentError(
          "--console_port: the console's record view needs --audit_target (audit_svc)");
    }
    absl::StatusOr<std::shared_ptr<grpc::Channel>> audit_channel =
        common::client::NewChannel(audit.target, audit.tls, "--audit_target");
    if (!audit_channel.ok()) return audit_channel.status();
    common::server::ServerOptions internal;
    internal.listen = false;
    absl::StatusOr<std::unique_ptr<common::server::ServerRunner>> runner =
        common::server::ServerRunner::Start(internal, {console_service_.get()});
    if (!runner.ok()) return runner.status();
    internal_ = *std::move(runner);
    console::ConsoleOptions options;
    options.host = absl::GetFlag(FLAGS_console_host);
    options.port = absl::GetFlag(FLAGS_console_port);
    options.tls = common::server::ServerTlsFromFlags();
    absl::StatusOr<std::unique_ptr<console::ConsoleServer>> console = console::ConsoleServer::Start(
        std::move(options), authenticator, internal_->InProcessChannel(), *audit_channel,
        common::RealClock(), oidc_.get());
    if (!console.ok()) return console.status();
    console_ = *std::move(console);
    return absl::OkStatus();
  }

  std::vector<grpc::Service*> services() override { return grantstore_->services(); }
  std::vector<std::pair<std::string, std::string>> side_listeners() const override {
    std::vector<std::pair<std::string, std::string>> listeners = grantstore_->side_listeners();
    listeners.emplace_back("console", console_->url());
    return listeners;
  }
  void StopSideListeners() override {
    console_->Shutdown();
    internal_->Shutdown();
    grantstore_->StopSideListeners();
  }

 private:
  std::unique_ptr<GrantStoreServer> grantstore_;
  std::unique_ptr<grpc::Service> console_service_;
  std::unique_ptr<common::server::ServerRunner> internal_;
  std::unique_ptr<console::ConfiguredOidcProvider> oidc_;
  std::unique_ptr<console::ConsoleServer> console_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<common::server::Servable>> WithConsoleFromFlags(
    std::unique_ptr<GrantStoreServer> grantstore,
    const common::server::Authenticator& authenticator,
    const common::oidc::OidcBearerVerifier* oidc) {
  if (absl::GetFlag(FLAGS_console_port) < 0) return grantstore;
  auto served = std::make_unique<GrantStoreWithConsole>(std::move(grantstore));
  if (absl::Status started = served->Start(authenticator, oidc); !started.ok()) return started;
  return served;
}

}  // namespace sharedos::grantstore::server
