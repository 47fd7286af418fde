// authorizer_svc: the decision point, as its own process. The only composition root of the
// service: flags are read here and nowhere else.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "authorizer_svc/server/authorizer_service.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/grpc_grant_store_client.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, host, "127.0.0.1", "Host to listen on (plaintext only on loopback).");
ABSL_FLAG(int, port, 0, "Port to listen on; 0 picks a free port (printed at start-up).");
ABSL_FLAG(std::string, credentials, "",
          "JSON credentials file (see common/server/auth.h). Required. Only service credentials "
          "may call the authorizer.");
ABSL_FLAG(std::string, grantstore_target, "", "grantstore_svc address (host:port). Required.");
ABSL_FLAG(std::string, grantstore_token_file, "",
          "File with this service's grantstore_svc token (first line). Required.");
ABSL_FLAG(std::string, lease_secret_file, "",
          "File with the deployment's lease secret (at least 32 bytes; identical on every "
          "authorizer replica): the key of the lease id MAC. Required.");
ABSL_FLAG(absl::Duration, default_lease_timeout, absl::Seconds(150),
          "Lifetime of a lease opened without a timeout.");
ABSL_FLAG(bool, live_revocation, false,
          "Check live revocation (ADR 0027) at grantstore_svc on every matching decision.");
ABSL_FLAG(std::string, audit, "",
          "remote | local | discard: how pre-effect records become durable. Required.");
ABSL_FLAG(std::string, audit_target, "", "audit_svc address (host:port), remote/local.");
ABSL_FLAG(std::string, audit_token_file, "", "File with this service's audit_svc token.");
ABSL_FLAG(std::string, audit_outbox, "", "Durable audit outbox file, remote/local.");
ABSL_FLAG(std::string, audit_outbox_durability, "full",
          "Outbox commits: full (fsync each; survives a power loss) or normal (no fsync: survives "
          "a crash or kill of this process, not a power loss or OS crash). With --audit=local, "
          "pre-effect records are durable to this level before a decision is answered.");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate; with --tls_key enables TLS.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key.");

namespace {

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  namespace server = sharedos::common::server;
  server::TerminationSignals::Block();
  absl::SetProgramUsageMessage("authorizer_svc: SharedOS authorization decisions and turn leases.");
  absl::ParseCommandLine(argc, argv);
  sharedos::common::server::ConfigureServiceProcess();

  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "authorizer_svc: %s\n", what.c_str());
    return 2;
  };
  if (absl::GetFlag(FLAGS_credentials).empty()) return fail("--credentials: required");
  auto authenticator = server::Authenticator::FromFile(absl::GetFlag(FLAGS_credentials));
  if (!authenticator.ok()) return fail(std::string(authenticator.status().message()));

  if (absl::GetFlag(FLAGS_grantstore_target).empty()) return fail("--grantstore_target: required");
  if (absl::GetFlag(FLAGS_grantstore_token_file).empty()) {
    return fail("--grantstore_token_file: required");
  }
  std::optional<std::string> token = ReadFile(absl::GetFlag(FLAGS_grantstore_token_file));
  if (!token.has_value()) return fail("--grantstore_token_file: cannot be read");
  std::string grantstore_token(absl::StripAsciiWhitespace(token->substr(0, token->find('\n'))));
  if (grantstore_token.empty()) return fail("--grantstore_token_file: empty");

  if (absl::GetFlag(FLAGS_lease_secret_file).empty()) return fail("--lease_secret_file: required");
  std::optional<std::string> secret = ReadFile(absl::GetFlag(FLAGS_lease_secret_file));
  if (!secret.has_value()) return fail("--lease_secret_file: cannot be read");
  if (secret->size() < 32) return fail("--lease_secret_file: shorter than 32 bytes");

  sharedos::audit::client::AuditWriterConfig audit_config;
  audit_config.mode = absl::GetFlag(FLAGS_audit);
  audit_config.target = absl::GetFlag(FLAGS_audit_target);
  audit_config.token_file = absl::GetFlag(FLAGS_audit_token_file);
  audit_config.outbox_path = absl::GetFlag(FLAGS_audit_outbox);
  auto outbox_fsync =
      sharedos::audit::client::OutboxFsyncFromFlag(absl::GetFlag(FLAGS_audit_outbox_durability));
  if (!outbox_fsync.ok()) return fail(std::string(outbox_fsync.status().message()));
  auto audit = sharedos::audit::client::NewAuditWriter(audit_config, *outbox_fsync);
  if (!audit.ok()) return fail(std::string(audit.status().message()));

  sharedos::grantstore::client::GrpcGrantStoreClient grantstore(
      grpc::CreateChannel(absl::GetFlag(FLAGS_grantstore_target),
                          grpc::InsecureChannelCredentials()),
      std::move(grantstore_token));
  sharedos::authorizer::core::AuthorizerCore::Options options;
  options.default_lease_timeout = absl::GetFlag(FLAGS_default_lease_timeout);
  options.live_revocation = absl::GetFlag(FLAGS_live_revocation);
  if (options.default_lease_timeout <= absl::ZeroDuration() ||
      options.default_lease_timeout > options.max_lease_timeout) {
    return fail("--default_lease_timeout: must be positive and at most 630s");
  }
  sharedos::authorizer::core::AuthorizerCore authorizer(
      grantstore, **audit, sharedos::common::RealClock(), *std::move(secret), options);
  sharedos::authorizer::server::AuthorizerService service(authorizer, **authenticator);

  server::ServerOptions server_options;
  server_options.host = absl::GetFlag(FLAGS_host);
  server_options.port = absl::GetFlag(FLAGS_port);
  server_options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  server_options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  auto runner = server::ServerRunner::Start(server_options, {&service});
  if (!runner.ok()) return fail(std::string(runner.status().message()));
  server::ReportListening("authorizer_svc", (*runner)->address());

  server::TerminationSignals::Wait();
  (*runner)->Shutdown();
  (*runner)->Wait();
  return 0;
}
