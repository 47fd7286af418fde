// The checkpoint flags (--checkpoint_key_file, --checkpoint_file, --checkpoint_interval) and the
// witness's (--checkpoint_witness; --witness_public_key, --witness_host, --witness_port), shared
// by audit_svc and sharedosd (embedded audit): defined once, here.
#ifndef SHAREDOS_AUDIT_SVC_SERVER_CHECKPOINT_FLAGS_H_
#define SHAREDOS_AUDIT_SVC_SERVER_CHECKPOINT_FLAGS_H_

#include "audit_svc/server/audit_server.h"

namespace sharedos::audit::server {

// Copies the checkpoint flags into `options` (BuildAuditServer checks them).
void ApplyCheckpointFlags(AuditServerOptions& options);

}  // namespace sharedos::audit::server

#endif  // SHAREDOS_AUDIT_SVC_SERVER_CHECKPOINT_FLAGS_H_
