#include "common/server/service_flags.h"

#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "common/client/rpc_client_metrics.h"
#include "common/logging/log.h"
#include "common/server/capacity_flags.h"
#include "common/server/channel_flags.h"
#include "common/server/oidc_flags.h"
#include "common/server/tls_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"

// Help texts go through SharedFlagHelp so that a service can say more about its own callers.
ABSL_FLAG(std::string, host, "127.0.0.1",
          sharedos::common::server::SharedFlagHelp(
              "host", "Host to listen on (plaintext only on loopback)."));
ABSL_FLAG(int, port, 0,
          sharedos::common::server::SharedFlagHelp(
              "port", "Port to listen on; 0 picks a free port (printed at start-up)."));
ABSL_FLAG(std::string, credentials, "",
          sharedos::common::server::SharedFlagHelp(
              "credentials", "JSON credentials file (see common/server/auth.h). Required."));

ABSL_FLAG(std::string, metrics_host, "127.0.0.1",
          sharedos::common::server::SharedFlagHelp(
              "metrics_host",
              "Host of the Prometheus /metrics endpoint (plain HTTP: loopback "
              "only)."));
ABSL_FLAG(int, metrics_port, -1,
          sharedos::common::server::SharedFlagHelp(
              "metrics_port",
              "Port of http://<metrics_host>:<port>/metrics; 0 picks a free port (printed as "
              "\"<service> metrics on <url>\"); -1: no metrics."));

ABSL_FLAG(absl::Duration, health_interval, absl::Seconds(2),
          sharedos::common::server::SharedFlagHelp(
              "health_interval",
              "How often the dependencies this service needs (its store, the services it calls, "
              "audit_svc for --audit=remote) are probed; grpc.health.v1 reports NOT_SERVING "
              "while one is down. Each probe answers within min(this, 1s)."));

namespace sharedos::common::server {

absl::StatusOr<ServiceFlags> ReadServiceFlags() {
  if (absl::Status capacity = ApplyCapacityFlags(); !capacity.ok()) return capacity;
  ServiceFlags flags;
  flags.server.host = absl::GetFlag(FLAGS_host);
  flags.server.port = absl::GetFlag(FLAGS_port);
  flags.server.tls = ServerTlsFromFlags();
  flags.channel_tls = ChannelTlsFromFlags();
  flags.server.health_interval = absl::GetFlag(FLAGS_health_interval);
  RETURN_IF_ERROR(CheckHealthInterval(flags.server.health_interval));
  const std::string credentials = absl::GetFlag(FLAGS_credentials);
  if (credentials.empty()) return absl::InvalidArgumentError("--credentials: required");
  ASSIGN_OR_RETURN(flags.authenticator, Authenticator::FromFile(credentials));
  ASSIGN_OR_RETURN(flags.oidc, AttachOidcFromFlags(*flags.authenticator, RealClock()));
  if (absl::GetFlag(FLAGS_metrics_port) >= 0) {
    flags.metrics = std::make_unique<metrics::Metrics>();
    flags.server.metrics = flags.metrics.get();
    client::InstallClientMetrics(flags.metrics.get());  // Before any channel is made.
  }
  return flags;
}

int RunService(int argc, char** argv, const ServiceBinary& binary, BuildService build) {
  ParseServiceCommandLine(argc, argv, binary);
  logging::SetService(binary.name);
  absl::StatusOr<ServiceFlags> flags = ReadServiceFlags();
  if (!flags.ok()) return Fail(binary.name, flags.status());
  absl::StatusOr<std::unique_ptr<Servable>> servable = build(*flags);
  if (!servable.ok()) return Fail(binary.name, servable.status());
  // The effective values of the shared flags of a service that builds; secrets (the TLS key) only
  // as set/unset.
  logging::Log(logging::Level::kInfo, "config", "",
               {{"host", flags->server.host},
                {"port", flags->server.port},
                {"credentials", absl::GetFlag(FLAGS_credentials)},
                {"oidc_config", OidcConfigFlag()},
                {"metrics_host", absl::GetFlag(FLAGS_metrics_host)},
                {"metrics_port", absl::GetFlag(FLAGS_metrics_port)},
                {"tls", flags->server.tls.enabled()},
                {"health_interval", absl::FormatDuration(flags->server.health_interval)}});
  std::unique_ptr<metrics::MetricsExposer> exposer;
  if (flags->metrics != nullptr) {
    absl::StatusOr<std::unique_ptr<metrics::MetricsExposer>> started =
        metrics::MetricsExposer::Start(*flags->metrics, absl::GetFlag(FLAGS_metrics_host),
                                       absl::GetFlag(FLAGS_metrics_port));
    if (!started.ok()) return Fail(binary.name, started.status());
    exposer = *std::move(started);
    metrics::ReportMetricsListening(binary.name, *exposer);
  }
  return ServeUntilTerminated(binary.name, flags->server, **servable, flags->authenticator.get());
}

}  // namespace sharedos::common::server
