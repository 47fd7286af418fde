#include "audit_svc/server/checkpoint_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "audit_svc/core/checkpoint.h"

ABSL_FLAG(std::string, checkpoint_key_file, "",
          "Ed25519 private key (PEM; openssl genpkey -algorithm ed25519) that signs checkpoints "
          "of the audit head. Must lie outside the data directory (a file or secret of its own; "
          "start is refused otherwise). Unset: with a SQLite log, the key in the directory "
          "beside the data directory, <data directory>.keys/checkpoint.key (owner-only), minted "
          "on first start with its public half checkpoint.pub.pem; with a PostgreSQL log, "
          "required.");
ABSL_FLAG(std::string, checkpoint_file, "",
          "File outside the data directory to which each signed checkpoint is appended (one JSON "
          "line, fsynced); `sharedosctl audit verify --checkpoint=FILE` checks the log against "
          "it. Every checkpoint is also logged as event audit.checkpoint (stderr), file or not.");
ABSL_FLAG(absl::Duration, checkpoint_interval, sharedos::audit::core::kDefaultCheckpointInterval,
          "Sign a checkpoint at this interval whenever the head has moved; 0: only on demand "
          "(sharedosctl audit checkpoint). Records after the last checkpoint shipped off the host "
          "can still be rewritten consistently: this is that window.");

namespace sharedos::audit::server {

void ApplyCheckpointFlags(AuditServerOptions& options) {
  options.checkpoint_key_file = absl::GetFlag(FLAGS_checkpoint_key_file);
  options.checkpoint_file = absl::GetFlag(FLAGS_checkpoint_file);
  options.checkpoint_interval = absl::GetFlag(FLAGS_checkpoint_interval);
}

}  // namespace sharedos::audit::server
