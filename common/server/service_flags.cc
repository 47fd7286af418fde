#include "common/server/service_flags.h"

#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "common/server/channel_flags.h"
#include "common/server/tls_flags.h"
#include "common/status/status_macros.h"

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

namespace sharedos::common::server {

absl::StatusOr<ServiceFlags> ReadServiceFlags() {
  ServiceFlags flags;
  flags.server.host = absl::GetFlag(FLAGS_host);
  flags.server.port = absl::GetFlag(FLAGS_port);
  flags.server.tls = ServerTlsFromFlags();
  flags.channel_tls = ChannelTlsFromFlags();
  const std::string credentials = absl::GetFlag(FLAGS_credentials);
  if (credentials.empty()) return absl::InvalidArgumentError("--credentials: required");
  ASSIGN_OR_RETURN(flags.authenticator, Authenticator::FromFile(credentials));
  return flags;
}

int RunService(int argc, char** argv, const ServiceBinary& binary, BuildService build) {
  ParseServiceCommandLine(argc, argv, binary);
  absl::StatusOr<ServiceFlags> flags = ReadServiceFlags();
  if (!flags.ok()) return Fail(binary.name, flags.status());
  absl::StatusOr<std::unique_ptr<Servable>> servable = build(*flags);
  if (!servable.ok()) return Fail(binary.name, servable.status());
  return ServeUntilTerminated(binary.name, flags->server, **servable);
}

}  // namespace sharedos::common::server
