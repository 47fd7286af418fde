#include "common/logging/trace_context.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/random.h"

namespace sharedos::common::logging {
namespace {

thread_local const TraceContext* current_trace = nullptr;

bool IsLowerHex(absl::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return !text.empty();
}

bool IsAllZero(absl::string_view text) { return text.find_first_not_of('0') == text.npos; }

// `bytes` random bytes as lowercase hex, never all zero (a zero id is invalid on the wire).
std::string RandomHexId(size_t bytes) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    absl::StatusOr<std::string> random = SecureRandomBytes(bytes);
    if (!random.ok()) break;
    std::string hex = absl::BytesToHexString(*random);
    if (!IsAllZero(hex)) return hex;
  }
  // No randomness: a fixed, valid id still lets a line be followed within this process.
  return std::string(bytes * 2 - 1, '0') + "1";
}

}  // namespace

std::string TraceContext::ToTraceparent() const {
  static constexpr char kHex[] = "0123456789abcdef";
  const char flag_text[2] = {kHex[flags >> 4], kHex[flags & 0xf]};
  return absl::StrCat("00-", trace_id, "-", parent_id, "-", absl::string_view(flag_text, 2));
}

std::optional<TraceContext> ParseTraceparent(absl::string_view value) {
  if (value.size() != kTraceparentSize) return std::nullopt;
  if (value.substr(0, 3) != "00-" || value[35] != '-' || value[52] != '-') return std::nullopt;
  const absl::string_view trace_id = value.substr(3, 32);
  const absl::string_view parent_id = value.substr(36, 16);
  const absl::string_view flags = value.substr(53, 2);
  if (!IsLowerHex(trace_id) || !IsLowerHex(parent_id) || !IsLowerHex(flags)) return std::nullopt;
  if (IsAllZero(trace_id) || IsAllZero(parent_id)) return std::nullopt;
  TraceContext context;
  context.trace_id = std::string(trace_id);
  context.parent_id = std::string(parent_id);
  const std::string flag_byte = absl::HexStringToBytes(flags);
  context.flags = static_cast<uint8_t>(flag_byte[0]);
  return context;
}

TraceContext MintTrace() {
  TraceContext context;
  context.trace_id = RandomHexId(16);
  context.parent_id = RandomHexId(8);
  return context;
}

TraceContext ChildOf(const TraceContext& parent) {
  TraceContext child = parent;
  child.parent_id = RandomHexId(8);
  return child;
}

const TraceContext* CurrentTrace() { return current_trace; }

ScopedTrace::ScopedTrace(std::optional<TraceContext> context)
    : context_(std::move(context)), previous_(current_trace) {
  current_trace = context_.has_value() ? &*context_ : nullptr;
}

ScopedTrace::~ScopedTrace() { current_trace = previous_; }

}  // namespace sharedos::common::logging
