#include "envelope_svc/server/limit_flags.h"

#include <cstdint>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/status/status_macros.h"

ABSL_FLAG(int64_t, max_turns, 100000,
          "Turns one envelope holds (open and retained ended ones; ended ones give way first). "
          "Past it with open turns only, OpenTurn is RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_open_turns_per_namespace, 1000,
          "Open turns in one namespace; beyond, OpenTurn is RESOURCE_EXHAUSTED naming the quota.");
ABSL_FLAG(int64_t, max_open_turns_per_host, 1000,
          "Open turns one host credential holds; beyond, OpenTurn is RESOURCE_EXHAUSTED naming "
          "the quota.");
ABSL_FLAG(int64_t, max_admission_ended_turns, 1024,
          "Turns that ended at admission (denied, failed before running) kept readable by "
          "GetTurn; the oldest is forgotten first.");
ABSL_FLAG(int64_t, max_refusals_past_budget, 32,
          "Refused calls past a turn's budget recorded one by one; the next ends the turn failed "
          "with the refusal's code, cause refusals_exhausted (ADR 0016).");
ABSL_FLAG(int64_t, max_tool_result_bytes, 2 << 20,
          "Largest tool result (its output, serialized) any tool may answer; a tool's registry "
          "max_result_bytes may lower it. Larger: tool_execution_failed, cause result_too_large.");
ABSL_FLAG(int64_t, files_max_owner_bytes, int64_t{1} << 30,
          "Bytes one owner's files area (workspace and snapshots) may hold; 0: no quota. A write "
          "past it fails quota_exceeded.");
ABSL_FLAG(int64_t, files_max_owner_files, 100000,
          "Files one owner's files area may hold; 0: no quota.");
ABSL_FLAG(absl::Duration, authorizer_timeout, absl::Seconds(2),
          "Deadline of one call to the authorizer (admission, each decision, settlement), "
          "100ms..60s. Past it the call is refused authority_unavailable, fail closed.");
ABSL_FLAG(absl::Duration, drain_grace, absl::ZeroDuration(),
          "New tool calls are refused turn_draining this long before a turn's deadline (0: not "
          "before the deadline; at most 600s — a grace at least a turn's timeout drains it from "
          "its start).");
ABSL_FLAG(absl::Duration, mcp_read_timeout, absl::Seconds(10),
          "The MCP front door's deadline to read one request (TLS handshake, headers, body) and "
          "to keep an idle connection.");
ABSL_FLAG(int64_t, mcp_max_connections, 512, "Connections the MCP front door holds at once.");
ABSL_FLAG(int64_t, mcp_max_connections_per_address, 32,
          "Connections the MCP front door holds from one client address.");
ABSL_FLAG(int, mcp_threads, 8, "Threads serving MCP requests (requests beyond wait, up to 256).");

namespace sharedos::envelope::server {
namespace {

absl::Status Positive(const char* flag, int64_t value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": must be at least 1"));
}

absl::Status NotNegative(const char* flag, int64_t value) {
  if (value >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": must not be negative"));
}

}  // namespace

absl::Status ApplyLimitFlags(EnvelopeServerOptions& options) {
  const int64_t max_turns = absl::GetFlag(FLAGS_max_turns);
  const int64_t per_namespace = absl::GetFlag(FLAGS_max_open_turns_per_namespace);
  const int64_t per_host = absl::GetFlag(FLAGS_max_open_turns_per_host);
  const int64_t admission_ended = absl::GetFlag(FLAGS_max_admission_ended_turns);
  const int64_t refusals = absl::GetFlag(FLAGS_max_refusals_past_budget);
  const int64_t result_bytes = absl::GetFlag(FLAGS_max_tool_result_bytes);
  const int64_t owner_bytes = absl::GetFlag(FLAGS_files_max_owner_bytes);
  const int64_t owner_files = absl::GetFlag(FLAGS_files_max_owner_files);
  if (absl::Status s = Positive("max_turns", max_turns); !s.ok()) return s;
  if (absl::Status s = Positive("max_open_turns_per_namespace", per_namespace); !s.ok()) return s;
  if (absl::Status s = Positive("max_open_turns_per_host", per_host); !s.ok()) return s;
  if (absl::Status s = Positive("max_admission_ended_turns", admission_ended); !s.ok()) return s;
  if (absl::Status s = Positive("max_refusals_past_budget", refusals); !s.ok()) return s;
  if (refusals > 100000) {
    return absl::InvalidArgumentError("--max_refusals_past_budget: at most 100000");
  }
  if (absl::Status s = Positive("max_tool_result_bytes", result_bytes); !s.ok()) return s;
  if (absl::Status s = NotNegative("files_max_owner_bytes", owner_bytes); !s.ok()) return s;
  if (absl::Status s = NotNegative("files_max_owner_files", owner_files); !s.ok()) return s;
  const absl::Duration authorizer_timeout = absl::GetFlag(FLAGS_authorizer_timeout);
  if (authorizer_timeout < absl::Milliseconds(100) || authorizer_timeout > absl::Seconds(60)) {
    return absl::InvalidArgumentError("--authorizer_timeout: must be 100ms..60s");
  }
  options.engine.authorizer_timeout = authorizer_timeout;
  options.engine.drain_grace = absl::GetFlag(FLAGS_drain_grace);
  RETURN_IF_ERROR(CheckTurnOptions(options.engine));
  options.engine.max_turns = static_cast<size_t>(max_turns);
  options.engine.max_open_turns_per_namespace = static_cast<size_t>(per_namespace);
  options.engine.max_open_turns_per_host = static_cast<size_t>(per_host);
  options.engine.max_admission_ended = static_cast<size_t>(admission_ended);
  options.engine.max_refusals_past_budget = static_cast<int32_t>(refusals);
  options.engine.max_tool_result_bytes = static_cast<uint64_t>(result_bytes);
  options.files_max_owner_bytes = static_cast<uint64_t>(owner_bytes);
  options.files_max_owner_files = static_cast<uint64_t>(owner_files);
  if (options.mcp.has_value()) {
    mcp::McpServer::Options& door = options.mcp->server;
    const int64_t connections = absl::GetFlag(FLAGS_mcp_max_connections);
    const int64_t per_address = absl::GetFlag(FLAGS_mcp_max_connections_per_address);
    const int threads = absl::GetFlag(FLAGS_mcp_threads);
    if (absl::Status s = Positive("mcp_max_connections", connections); !s.ok()) return s;
    if (absl::Status s = Positive("mcp_max_connections_per_address", per_address); !s.ok()) {
      return s;
    }
    if (threads < 1 || threads > 256) {
      return absl::InvalidArgumentError("--mcp_threads: must be 1..256");
    }
    const absl::Duration read_timeout = absl::GetFlag(FLAGS_mcp_read_timeout);
    if (read_timeout < absl::Milliseconds(100) || read_timeout > absl::Minutes(10)) {
      return absl::InvalidArgumentError("--mcp_read_timeout: must be 100ms..10m");
    }
    door.read_timeout = read_timeout;
    door.max_connections = static_cast<size_t>(connections);
    door.max_connections_per_address = static_cast<size_t>(per_address);
    door.handler_threads = threads;
  }
  return absl::OkStatus();
}

absl::Duration DrainGraceFlag() { return absl::GetFlag(FLAGS_drain_grace); }

}  // namespace sharedos::envelope::server
