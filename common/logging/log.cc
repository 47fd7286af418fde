#include "common/logging/log.h"

#include <unistd.h>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/logging/trace_context.h"
#include "common/text/terminal_safe.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::logging {
namespace {

absl::Mutex service_mu(absl::kConstInit);
std::string* service_name ABSL_GUARDED_BY(service_mu) = nullptr;

std::string Service() {
  absl::MutexLock lock(&service_mu);
  return service_name == nullptr ? "sharedos" : *service_name;
}

const char* LevelName(Level level) {
  switch (level) {
    case Level::kInfo:
      return "info";
    case Level::kWarning:
      return "warning";
    case Level::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void SetService(absl::string_view service) {
  absl::MutexLock lock(&service_mu);
  delete service_name;
  service_name = new std::string(service);
}

const char* SecretState(absl::string_view value) { return value.empty() ? "unset" : "set"; }

std::string FormatLine(Level level, absl::string_view event, absl::string_view trace_id,
                       const std::vector<Field>& fields) {
  nlohmann::ordered_json line;
  line["ts"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone());
  line["level"] = LevelName(level);
  line["service"] = Service();
  line["event"] = std::string(event);
  if (!trace_id.empty()) line["trace_id"] = std::string(trace_id);
  // The W3C trace of the call this thread serves (trace_context.h): with the turn's trace_id,
  // one incident can be followed across the four services.
  if (const TraceContext* trace = CurrentTrace()) line["w3c_trace_id"] = trace->trace_id;
  for (const Field& field : fields) {
    // Reserved keys keep their meaning.
    if (line.contains(field.name)) continue;
    if (field.is_number) {
      line[field.name] = field.number;
    } else {
      line[field.name] = field.text;
    }
  }
  // Invalid UTF-8 is replaced, never thrown on: a log line must not take a process down. JSON
  // escapes C0 controls; DEL, C1 and bidi controls are escaped too, so a value a caller chose
  // cannot act on the terminal of whoever reads the log (common/text/terminal_safe.h).
  return text::JsonTerminalSafe(
      line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Log(Level level, absl::string_view event, absl::string_view trace_id,
         const std::vector<Field>& fields) {
  std::string line = FormatLine(level, event, trace_id, fields);
  line.push_back('\n');
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + written, line.size() - written);
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

}  // namespace sharedos::common::logging
