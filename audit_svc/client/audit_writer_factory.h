#ifndef SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FACTORY_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FACTORY_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "audit_svc/client/audit_writer.h"
#include "common/client/channel.h"
#include "common/metrics/metrics.h"
#include "grpcpp/channel.h"

namespace sharedos::audit::client {

// How a service's main() chose to write audit (from its --audit* flags).
struct AuditWriterConfig {
  // "remote" | "local" | "discard". There is no default: a service without an audit endpoint
  // refuses to start unless told "discard" explicitly.
  std::string mode;
  // audit_svc address (host:port), for remote and local.
  std::string target;
  // File holding this service's bearer token for audit_svc (first line, whitespace trimmed).
  std::string token_file;
  // The durable outbox file, for remote and local.
  std::string outbox_path;
  // How the channel to `target` verifies audit_svc (common/client/channel.h: TLS against a CA,
  // or plaintext on loopback only).
  common::client::ChannelTls tls;
};

// Where a writer's outbox reports its gauges (borrowed; null: nowhere) and the writer they name
// (AuditClientOptions::metrics, ::writer).
struct OutboxReporting {
  common::metrics::Metrics* metrics = nullptr;
  std::string writer;
};

// --audit_outbox_durability: "full" (or empty) → true (fsync per outbox commit); "normal" →
// false (no fsync: what the outbox took survives a crash of the process, not a power loss or an
// OS crash). Errors: INVALID_ARGUMENT naming the flag.
absl::StatusOr<bool> OutboxFsyncFromFlag(const std::string& value);

// `outbox_fsync`: AuditClientOptions::outbox_fsync. The writer (its pre-effect appends and its
// outbox's shipper alike) reaches the first replica `target` names that is up, not each in turn
// (common/client/channel.h Replicas::kFirstUp): every writer listing the audit replicas in the
// same order appends through one replica, so one group committer writes the chain (ADR 0012).
// Errors: INVALID_ARGUMENT naming the flag (--audit, --audit_target, --audit_token_file,
// --audit_outbox, the TLS flags) when the configuration is incomplete or unknown, or plaintext
// would leave loopback; FAILED_PRECONDITION when the
// token file cannot be read; UNAVAILABLE when the outbox cannot be opened.
absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriter(
    const AuditWriterConfig& config, bool outbox_fsync = true,
    const OutboxReporting& reporting = OutboxReporting());

// The same over an existing channel (sharedosd's in-process channel to its own audit service).
absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriterOverChannel(
    const AuditWriterConfig& config, std::shared_ptr<grpc::Channel> channel,
    bool outbox_fsync = true, const OutboxReporting& reporting = OutboxReporting());

// AuditLog.Query with the writer's credential, each call within 5 s: how the grant store reads
// its own control-plane records back (docs/adr/0021; audit_svc answers a service only queries
// with filter.control_plane_type). Null for mode "discard" (no log to ask).
// Errors: INVALID_ARGUMENT (no --audit_token_file or --audit_target), those of NewChannel.
using AuditQueryFn = std::function<absl::StatusOr<sharedos::audit::v1::QueryResponse>(
    const sharedos::audit::v1::QueryRequest&)>;
absl::StatusOr<AuditQueryFn> NewAuditQuery(const AuditWriterConfig& config);

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FACTORY_H_
