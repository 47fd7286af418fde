// The values envelope_svc's core builds its events, results and records from: timestamps, JSON
// values, the fixed-message ProtocolError of a reason code and the one refusal ToolResult.
// Stateless; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_VALUES_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_VALUES_H_

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core::values {

// `at` as a Timestamp (the epoch when it cannot be one).
google::protobuf::Timestamp TimestampOf(absl::Time at);
google::protobuf::Value Str(absl::string_view text);
google::protobuf::Value Num(double number);
// A JSON value as a Value (null when it cannot be one).
google::protobuf::Value FromJson(const nlohmann::json& json);
// {key: value, …} as a Value (an event's data).
google::protobuf::Value Object(
    std::initializer_list<std::pair<const char*, google::protobuf::Value>> fields);
// ProtocolError{code, the catalogue's fixed message, retryable}.
protocol::v1::ProtocolError CodeError(absl::string_view code, bool retryable = false);
// A refusal of `call` built by the envelope or the kernel: ToolResult{call_id, tool, status,
// CodeError(code)} (completed_at left to the caller).
protocol::v1::ToolResult RefusedResult(const protocol::v1::ToolCall& call,
                                       protocol::v1::ToolResultStatus status,
                                       absl::string_view code);

// A refusal's verdict, built once where the refusal is decided and carried from there: the code
// the caller is told, the cause its record names, whether it is an infrastructure refusal
// (failClosed: SharedOS could not establish a fact, semantics §3.5) and whether it is an audit
// outage (the turn latches it). Never re-derived from the code further on.
struct Refusal {
  std::string code;
  std::string cause;
  bool fail_closed = false;
  bool audit_outage = false;

  // A refusal decided from the call itself (never fail-closed).
  static Refusal Of(absl::string_view code, absl::string_view cause = "");
  // The authorizer's verdict: its reason code (empty: no_matching_grant) and the fail_closed
  // flag it sent. An audit_unavailable verdict is the authorizer's audit outage.
  static Refusal FromAuthorizer(absl::string_view code, bool fail_closed);
  // The authorizer did not answer (or no longer knows the lease): authority_unavailable, fail
  // closed.
  static Refusal AuthorityUnavailable();
  // Audit could not take a pre-effect record: audit_unavailable, fail closed, an outage.
  static Refusal AuditUnavailable();
};

}  // namespace sharedos::envelope::core::values

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_VALUES_H_
