// The W3C trace context (https://www.w3.org/TR/trace-context/, `traceparent` version 00) a call
// carries across SharedOS's services, one place: parsed strictly from what a host sends, minted
// when what it sent is malformed, propagated by every channel (common/client/trace_interceptor.h)
// and named in every log line written while a call holds it (common/logging/log.h,
// "w3c_trace_id"). The current context is per thread: a server adapter installs it for the
// duration of one call (ScopedTrace); work handed to another thread does not carry it.

#ifndef SHAREDOS_COMMON_LOGGING_TRACE_CONTEXT_H_
#define SHAREDOS_COMMON_LOGGING_TRACE_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace sharedos::common::logging {

// The gRPC metadata key (lowercase, as HTTP/2 carries it).
inline constexpr char kTraceparentKey[] = "traceparent";
// "00-" 32 hex "-" 16 hex "-" 2 hex: the only length version 00 has.
inline constexpr size_t kTraceparentSize = 55;

struct TraceContext {
  // 32 lowercase hex digits, not all zero.
  std::string trace_id;
  // 16 lowercase hex digits, not all zero: the caller's span.
  std::string parent_id;
  // Bit 0: sampled.
  uint8_t flags = 0;

  // "00-<trace_id>-<parent_id>-<flags>".
  std::string ToTraceparent() const;
};

// A version-00 traceparent exactly as the specification writes it (55 characters, lowercase hex,
// neither id all zeros); anything else — another length, version ff or any other, uppercase,
// extra fields — is nullopt. Never reads past kTraceparentSize + 1 characters.
std::optional<TraceContext> ParseTraceparent(absl::string_view value);

// A fresh trace: random trace and parent ids, not sampled.
TraceContext MintTrace();

// The context of a call this one makes: the same trace and flags, a fresh parent id.
TraceContext ChildOf(const TraceContext& parent);

// The calling thread's context; null when it holds none.
const TraceContext* CurrentTrace();

// Installs a context (or none) on the calling thread for its lifetime, then restores the one
// before. Not movable: one scope, one stack frame.
class ScopedTrace {
 public:
  explicit ScopedTrace(std::optional<TraceContext> context);
  ~ScopedTrace();
  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;

 private:
  std::optional<TraceContext> context_;
  const TraceContext* previous_;
};

}  // namespace sharedos::common::logging

#endif  // SHAREDOS_COMMON_LOGGING_TRACE_CONTEXT_H_
