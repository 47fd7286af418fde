// The flags of every service that writes audit (grantstore_svc, authorizer_svc, envelope_svc),
// defined once: --audit, --audit_target, --audit_token_file, --audit_outbox and
// --audit_outbox_durability. A writer's main links this library and creates its writer with
// NewAuditWriterFromFlags(); a binary may word --audit's help for what it records
// (common/server/service_main.h, ServiceBinary::flag_help). The channel to audit_svc is verified
// with the service's channel TLS flags (common/server/channel_flags.h: --tls_ca, ...).

#ifndef SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FLAGS_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FLAGS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "audit_svc/client/audit_writer.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "common/metrics/metrics.h"
#include "common/server/readiness.h"

namespace sharedos::audit::client {

// The writer configuration the flags give (--audit_outbox_durability aside).
AuditWriterConfig AuditWriterConfigFromFlags();

// The writer the flags describe (NewAuditWriter). Errors: INVALID_ARGUMENT naming the flag
// (--audit_outbox_durability: must be full or normal; those of NewAuditWriter), and the others
// of NewAuditWriter.
absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriterFromFlags();
// The same, its outbox reporting to `metrics` (null: nowhere) as writer `writer`.
absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriterFromFlags(
    common::metrics::Metrics* metrics, const std::string& writer);

// What the writer the flags describe needs to be ready (common/server/readiness.h): audit_svc
// itself, named "audit", when pre-effect records are appended there (--audit=remote); nothing
// otherwise (local and discard writers answer without it). Errors: those of NewChannel for
// --audit_target.
absl::StatusOr<std::vector<common::server::DependencyCheck>> AuditDependenciesFromFlags();

// AuditLog.Query against the log the flags write to (NewAuditQuery): null for --audit=discard.
absl::StatusOr<AuditQueryFn> AuditQueryFromFlags();

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FLAGS_H_
