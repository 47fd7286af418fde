// `sharedosctl audit export`: the audit record as one JSON object per line, for a SIEM.
//   jsonl — schema "sharedos.audit.export/1" (docs/schemas/audit-export-v1.schema.json): each
//           record with its sequence, hash, prevHash, recordedAt and the record itself (the
//           protocol "1" event or the control-plane event, protobuf JSON);
//   ocsf  — the Open Cybersecurity Schema Framework 1.3.0: protocol "1" events (decisions,
//           tool calls, refusals, turn endings) as API Activity [6003], grants issued, derived
//           and revoked as User Access Management [3005], the other control-plane records
//           (escalations, host policy, credentials) as Entity Management [3004]; the SharedOS
//           record itself under unmapped.sharedos (docs/schemas/audit-export-ocsf-v1.schema.json).
// Signed checkpoints are lines of their own (kind "checkpoint"; in ocsf an API Activity of the
// audit service). Every line names the record's sequence, so an export resumes after the last
// sequence it delivered. Pure functions; thread-safe.
#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_EXPORT_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::sharedosctl {

enum class ExportFormat { kJsonl, kOcsf };

// The jsonl lines' "schema": name and major version; a change that is not additive moves it.
inline constexpr char kExportSchema[] = "sharedos.audit.export/1";
// The OCSF version the ocsf lines follow (metadata.version).
inline constexpr char kOcsfVersion[] = "1.3.0";

// "jsonl" | "ocsf". Errors: INVALID_ARGUMENT naming --format.
absl::StatusOr<ExportFormat> ParseExportFormat(absl::string_view text);

// One record as one line (no trailing newline): valid JSON, with JSON's own escaping and no
// raw control character (common/text/terminal_safe.h).
std::string ExportRecordLine(const audit::v1::AuditRecord& record, ExportFormat format);
// One signed checkpoint as one line.
std::string ExportCheckpointLine(const audit::v1::SignedCheckpoint& checkpoint,
                                 ExportFormat format);

}  // namespace sharedos::sharedosctl

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_EXPORT_H_
