// The `audit` commands of sharedosctl (AuditLog): query records, tail them as they are written,
// verify the hash chain (and that the log extends signed checkpoints), sign a checkpoint.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_AUDIT_COMMANDS_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_AUDIT_COMMANDS_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "tools/sharedosctl/cli.h"
#include "tools/sharedosctl/command_context.h"

namespace sharedos::sharedosctl {

int AuditQuery(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err);
int AuditTail(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
              std::ostream& out, std::ostream& err);
int AuditVerify(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err);
// `audit export --format=jsonl|ocsf [--since=SEQ] [--follow | --with_checkpoint]
// [--namespace=N]`: every record after sequence SEQ the credential may read, one line each
// (export.h); without --follow, read with Query and ended at the last one; with --follow, served
// from SEQ + 1 by Tail, new records and signed checkpoints as they come, until the stream ends.
int AuditExport(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err);
int AuditCheckpoint(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err);
// `audit witnessed [--key_id=K]`, against a witness: the checkpoints it holds (its
// checkpoint.witnessed records), oldest first, each as an audit.checkpoint line
// (audit::core::CheckpointLogLine) — what `audit verify --checkpoints` reads.
int AuditWitnessed(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                   std::ostream& out, std::ostream& err);

// The signed checkpoints of a checkpoint file: one JSON SignedCheckpoint per line, blank lines
// skipped. Errors: INVALID_ARGUMENT naming --checkpoint and the line (unreadable, larger than
// 64 MiB, a line that is not a signed checkpoint, no checkpoint at all).
// Most audit.checkpoint lines one `audit verify --checkpoints` reads.
inline constexpr size_t kMaxCheckpointLogLines = 1000000;

// One checkpoint read from an exported process log, with its line number (from 1).
struct LoggedCheckpoint {
  audit::v1::SignedCheckpoint checkpoint;
  int64_t line = 0;
};

// The audit.checkpoint lines of an exported process log (audit::core::ParseCheckpointLogLine):
// other lines are skipped, read in bounded pieces (the file may be of any size; an over-long line
// is cut to its first kMaxCheckpointLogLineBytes + 1 bytes). Errors: INVALID_ARGUMENT naming
// --checkpoints and the line (unreadable, a malformed or over-long audit.checkpoint line, more
// than kMaxCheckpointLogLines of them, none at all).
absl::StatusOr<std::vector<LoggedCheckpoint>> ReadCheckpointLogFile(const std::string& path);

absl::StatusOr<std::vector<audit::v1::SignedCheckpoint>> ReadCheckpointFile(
    const std::string& path);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_AUDIT_COMMANDS_H_
