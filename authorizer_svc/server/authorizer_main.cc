// authorizer_svc: the decision point, as its own process. The only composition root of the
// service: its own flags (grantstore_svc, the lease secret, lease and revocation settings) beside
// the shared ones (common/server, and the audit writer's in audit_svc/client).
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer_flags.h"
#include "authorizer_svc/server/authorizer_server.h"
#include "common/server/dependency_probes.h"
#include "common/server/secret_file.h"
#include "common/server/service_flags.h"
#include "common/status/status_macros.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/grantstore_flags.h"
#include "grantstore_svc/client/grpc_credential_source.h"
#include "grantstore_svc/client/grpc_grant_store_client.h"

ABSL_FLAG(std::string, lease_secret_file, "",
          "File with the deployment's lease secret (at least 32 bytes; identical on every "
          "authorizer replica): the key of the lease id MAC. Required.");
ABSL_FLAG(absl::Duration, default_lease_timeout, absl::Seconds(150),
          "Lifetime of a lease opened without a timeout.");
ABSL_FLAG(absl::Duration, grantstore_timeout, absl::Seconds(2),
          "Deadline of loading an authority and of recording an escalation at grantstore_svc, "
          "100ms..60s; counting a use and resolving grants on a decision's path get half of it. "
          "Past it the decision is authority_unavailable (usage_store_unavailable for a count), "
          "fail closed.");
ABSL_FLAG(bool, live_revocation, false,
          "Check live revocation (ADR 0027) at grantstore_svc on every matching decision.");

namespace {

namespace server = ::sharedos::common::server;
namespace authorizer = ::sharedos::authorizer::server;

// Credentials issued through the control plane, looked up at grantstore_svc. The authenticator
// borrows it; it lives as long as the process (destroyed after RunService returns).
std::unique_ptr<server::CredentialSource> control_plane_credentials;

absl::StatusOr<std::unique_ptr<server::Servable>> Build(const server::ServiceFlags& flags) {
  ASSIGN_OR_RETURN(server::Upstream grantstore,
                   sharedos::grantstore::client::GrantStoreUpstreamFromFlags(flags.channel_tls));
  control_plane_credentials = std::make_unique<sharedos::grantstore::client::GrpcCredentialSource>(
      grantstore.channel, grantstore.token);
  flags.authenticator->AttachSource(control_plane_credentials.get());
  authorizer::AuthorizerServerOptions options;
  ASSIGN_OR_RETURN(
      options.lease_secret,
      server::ReadFlagSecret("lease_secret_file", absl::GetFlag(FLAGS_lease_secret_file),
                             server::SecretPart::kWholeFile));
  options.core.default_lease_timeout = absl::GetFlag(FLAGS_default_lease_timeout);
  const absl::Duration grantstore_timeout = absl::GetFlag(FLAGS_grantstore_timeout);
  if (grantstore_timeout < absl::Milliseconds(100) || grantstore_timeout > absl::Seconds(60)) {
    return absl::InvalidArgumentError("--grantstore_timeout: must be 100ms..60s");
  }
  options.core.load_deadline = grantstore_timeout;
  options.core.escalation_deadline = grantstore_timeout;
  options.core.usage_deadline = grantstore_timeout / 2;
  options.core.resolve_deadline = grantstore_timeout / 2;
  options.core.live_revocation = absl::GetFlag(FLAGS_live_revocation);
  options.core.metrics = flags.metrics.get();
  ASSIGN_OR_RETURN(auto audit, sharedos::audit::client::NewAuditWriterFromFlags(flags.metrics.get(),
                                                                                "authorizer"));
  ASSIGN_OR_RETURN(auto dependencies, sharedos::audit::client::AuditDependenciesFromFlags());
  dependencies.push_back(server::ServiceDependency("grantstore", grantstore.channel));
  ASSIGN_OR_RETURN(auto built,
                   authorizer::BuildAuthorizerServer(
                       {std::make_unique<sharedos::grantstore::client::GrpcGrantStoreClient>(
                            grantstore.channel, std::move(grantstore.token)),
                        std::move(audit), *flags.authenticator, sharedos::common::RealClock()},
                       std::move(options)));
  return server::WithDependencies(std::move(built), std::move(dependencies));
}

}  // namespace

int main(int argc, char** argv) {
  const server::ServiceBinary binary{
      "authorizer_svc",
      "authorizer_svc: SharedOS authorization decisions and turn leases.",
      {{"credentials",
        "JSON credentials file (see common/server/auth.h). Required. Only service credentials "
        "may call the authorizer."},
       {"audit", "remote | local | discard: how pre-effect records become durable. Required."},
       {"audit_outbox_durability",
        "Outbox commits: full (fsync each; survives a power loss) or normal (no fsync: survives "
        "a crash or kill of this process, not a power loss or OS crash). With --audit=local, "
        "pre-effect records are durable to this level before a decision is answered."},
       {"grantstore_target", "grantstore_svc address (host:port). Required."},
       {"grantstore_token_file",
        "File with this service's grantstore_svc token (first line). Required."}}};
  return server::RunService(argc, argv, binary, Build);
}
