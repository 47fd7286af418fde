#include "audit_svc/server/checkpoint_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "absl/time/time.h"

ABSL_FLAG(std::string, checkpoint_key_file, "",
          "Ed25519 private key (PEM; openssl genpkey -algorithm ed25519) that signs checkpoints "
          "of the audit head. Must lie outside the data directory (a file or secret of its own; "
          "start is refused otherwise). Unset: no checkpoints.");
ABSL_FLAG(std::string, checkpoint_file, "",
          "File outside the data directory to which each signed checkpoint is appended (one JSON "
          "line, fsynced); `sharedosctl audit verify --checkpoint=FILE` checks the log against "
          "it. Needs --checkpoint_key_file.");
ABSL_FLAG(absl::Duration, checkpoint_interval, absl::ZeroDuration(),
          "Sign a checkpoint at this interval whenever the head has moved (e.g. 1m); 0: only on "
          "demand (sharedosctl audit checkpoint). Needs --checkpoint_key_file.");

namespace sharedos::audit::server {

void ApplyCheckpointFlags(AuditServerOptions& options) {
  options.checkpoint_key_file = absl::GetFlag(FLAGS_checkpoint_key_file);
  options.checkpoint_file = absl::GetFlag(FLAGS_checkpoint_file);
  options.checkpoint_interval = absl::GetFlag(FLAGS_checkpoint_interval);
}

}  // namespace sharedos::audit::server
