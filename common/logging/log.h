// The process log, one place: one JSON object per line on stderr —
//   {"ts":"2026-12-02T02:44:00.123456Z","level":"info","service":"sharedosd",
//    "event":"turn.ended","trace_id":"…", …fields}
// Events are fixed names; fields are what the caller chooses to name, and callers log only
// identifiers, counts, codes and statuses — never arguments, results, payloads, tokens, secrets
// or provider text (a secret is logged as "set"/"unset" with SecretState). The service name is
// set once at start-up (SetService). A line written while the thread serves a traced call
// (trace_context.h) also names its W3C trace id as "w3c_trace_id". No control character reaches
// a line raw: JSON escapes C0, and DEL, C1 and bidi controls are written as \u escapes
// (common/text/terminal_safe.h). Thread-safe: each line is one write(2) of the whole line.

#ifndef SHAREDOS_COMMON_LOGGING_LOG_H_
#define SHAREDOS_COMMON_LOGGING_LOG_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace sharedos::common::logging {

enum class Level { kInfo, kWarning, kError };

// One field of an event: a name and a string or integer value.
struct Field {
  Field(std::string name, std::string value) : name(std::move(name)), text(std::move(value)) {}
  Field(std::string name, const char* value) : name(std::move(name)), text(value) {}
  Field(std::string name, absl::string_view value) : name(std::move(name)), text(value) {}
  Field(std::string name, long long value)
      : name(std::move(name)), number(value), is_number(true) {}
  Field(std::string name, int value) : Field(std::move(name), static_cast<long long>(value)) {}
  Field(std::string name, bool value) : name(std::move(name)), text(value ? "true" : "false") {}

  std::string name;
  std::string text;
  long long number = 0;
  bool is_number = false;
};

// The service every line names (e.g. "sharedosd", "audit_svc"). Call once, first thing.
void SetService(absl::string_view service);

// "set" or "unset": how a secret (a token, a key file, a secret file) appears in a log.
const char* SecretState(absl::string_view value);

// The line `Log` writes (without the newline), for tests.
std::string FormatLine(Level level, absl::string_view event, absl::string_view trace_id,
                       const std::vector<Field>& fields);

// Writes one line to stderr. `trace_id` empty: the line has no trace_id.
void Log(Level level, absl::string_view event, absl::string_view trace_id,
         const std::vector<Field>& fields);

}  // namespace sharedos::common::logging

#endif  // SHAREDOS_COMMON_LOGGING_LOG_H_
