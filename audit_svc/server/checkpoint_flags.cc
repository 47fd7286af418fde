#include "audit_svc/server/checkpoint_flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "audit_svc/core/checkpoint.h"
#include "common/server/channel_flags.h"
#include "common/server/tls_flags.h"

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

ABSL_FLAG(std::string, checkpoint_witness, "",
          "http:// or https:// URL of a witness (another SharedOS audit service started with "
          "--witness_public_key, or any endpoint that keeps what it is sent): each signed "
          "checkpoint is POSTed there, as the JSON line `sharedosctl audit checkpoint` prints, "
          "off the checkpoint loop (5 s time-outs, retried with backoff; a witness that is down "
          "is the warning line audit.witness.unreachable and a metric, never an outage). https "
          "verifies the witness against --tls_ca (unset: the system's CAs) and presents "
          "--tls_client_cert when set. Only the URL's host is ever logged. Unset: none.");
ABSL_FLAG(std::vector<std::string>, witness_public_key, {},
          "Comma-separated PEM Ed25519 public keys (checkpoint.pub.pem) of the signers whose "
          "checkpoints this audit service witnesses: set, it accepts them on POST "
          "/v1/checkpoints at --witness_host:--witness_port and records each accepted one in its "
          "own log (checkpoint.witnessed); `sharedosctl audit witnessed` exports them. Unset: "
          "not a witness.");
ABSL_FLAG(std::string, witness_host, "127.0.0.1",
          "Address of the witness endpoint (with --witness_public_key): plaintext only on "
          "loopback; HTTPS with --tls_cert and --tls_key.");
ABSL_FLAG(int, witness_port, 0,
          "Port of the witness endpoint (with --witness_public_key); 0 picks a free one (printed "
          "at start).");

namespace sharedos::audit::server {

void ApplyCheckpointFlags(AuditServerOptions& options) {
  options.checkpoint_key_file = absl::GetFlag(FLAGS_checkpoint_key_file);
  options.checkpoint_file = absl::GetFlag(FLAGS_checkpoint_file);
  options.checkpoint_interval = absl::GetFlag(FLAGS_checkpoint_interval);
  options.checkpoint_witness = absl::GetFlag(FLAGS_checkpoint_witness);
  options.witness_client_tls = common::server::ChannelTlsFromFlags();
  options.witness_public_key_files = absl::GetFlag(FLAGS_witness_public_key);
  options.witness_host = absl::GetFlag(FLAGS_witness_host);
  options.witness_port = absl::GetFlag(FLAGS_witness_port);
  options.witness_tls = common::server::ServerTlsFromFlags();
}

}  // namespace sharedos::audit::server
