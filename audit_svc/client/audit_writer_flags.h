// The flags of every service that writes audit (grantstore_svc, authorizer_svc, envelope_svc),
// defined once: --audit, --audit_target, --audit_token_file, --audit_outbox and
// --audit_outbox_durability. A writer's main links this library and creates its writer with
// NewAuditWriterFromFlags(); a binary may word --audit's help for what it records
// (common/server/service_main.h, ServiceBinary::flag_help). The channel to audit_svc is verified
// with the service's channel TLS flags (common/server/channel_flags.h: --tls_ca, ...).

#ifndef SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FLAGS_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FLAGS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "audit_svc/client/audit_writer.h"
#include "audit_svc/client/audit_writer_factory.h"

namespace sharedos::audit::client {

// The writer configuration the flags give (--audit_outbox_durability aside).
AuditWriterConfig AuditWriterConfigFromFlags();

// The writer the flags describe (NewAuditWriter). Errors: INVALID_ARGUMENT naming the flag
// (--audit_outbox_durability: must be full or normal; those of NewAuditWriter), and the others
// of NewAuditWriter.
absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriterFromFlags();

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_FLAGS_H_
