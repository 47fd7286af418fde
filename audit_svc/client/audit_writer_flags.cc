#include "audit_svc/client/audit_writer_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "common/client/channel.h"
#include "common/server/channel_flags.h"
#include "common/server/dependency_probes.h"
#include "common/server/service_main.h"

// Help texts go through SharedFlagHelp: each writer says what its records are.
ABSL_FLAG(std::string, audit, "",
          sharedos::common::server::SharedFlagHelp(
              "audit", "remote | local | discard: how audit records become durable. Required."));
ABSL_FLAG(std::string, audit_target, "",
          sharedos::common::server::SharedFlagHelp("audit_target",
                                                   "audit_svc address (host:port), remote/local."));
ABSL_FLAG(std::string, audit_token_file, "",
          sharedos::common::server::SharedFlagHelp("audit_token_file",
                                                   "File with this service's audit_svc token."));
ABSL_FLAG(std::string, audit_outbox, "",
          sharedos::common::server::SharedFlagHelp("audit_outbox",
                                                   "Durable audit outbox file, remote/local."));
ABSL_FLAG(std::string, audit_outbox_durability, "full",
          sharedos::common::server::SharedFlagHelp(
              "audit_outbox_durability",
              "Outbox commits: full (fsync each; survives a power loss) or normal (no fsync: "
              "survives a crash or kill of this process, not a power loss or OS crash)."));

namespace sharedos::audit::client {

AuditWriterConfig AuditWriterConfigFromFlags() {
  AuditWriterConfig config;
  config.mode = absl::GetFlag(FLAGS_audit);
  config.target = absl::GetFlag(FLAGS_audit_target);
  config.token_file = absl::GetFlag(FLAGS_audit_token_file);
  config.outbox_path = absl::GetFlag(FLAGS_audit_outbox);
  config.tls = common::server::ChannelTlsFromFlags();
  return config;
}

absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriterFromFlags() {
  return NewAuditWriterFromFlags(nullptr, "");
}

absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriterFromFlags(
    common::metrics::Metrics* metrics, const std::string& writer) {
  absl::StatusOr<bool> outbox_fsync =
      OutboxFsyncFromFlag(absl::GetFlag(FLAGS_audit_outbox_durability));
  if (!outbox_fsync.ok()) return outbox_fsync.status();
  return NewAuditWriter(AuditWriterConfigFromFlags(), *outbox_fsync, {metrics, writer});
}

absl::StatusOr<std::vector<common::server::DependencyCheck>> AuditDependenciesFromFlags() {
  const AuditWriterConfig config = AuditWriterConfigFromFlags();
  if (config.mode != "remote") return std::vector<common::server::DependencyCheck>{};
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      common::client::NewChannel(config.target, config.tls, "--audit_target");
  if (!channel.ok()) return channel.status();
  return std::vector<common::server::DependencyCheck>{
      common::server::ServiceDependency("audit", *std::move(channel))};
}

absl::StatusOr<AuditQueryFn> AuditQueryFromFlags() {
  return NewAuditQuery(AuditWriterConfigFromFlags());
}

}  // namespace sharedos::audit::client
