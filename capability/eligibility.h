// Time and purpose eligibility of a grant (`grantInactiveReason`, semantics §3.4) at the two
// instants of ADR 0016: expiry is judged at max(admission, operation); issuedAt, notBefore,
// revokedAt and purpose at admission, so the operation clock can only narrow authority.
// Instants have the reference's millisecond resolution (Date.parse), floored.
// Stateless; thread-safe.

#ifndef SHAREDOS_CAPABILITY_ELIGIBILITY_H_
#define SHAREDOS_CAPABILITY_ELIGIBILITY_H_

#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "capability/reason_codes.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::capability {

// Milliseconds since the Unix epoch, floored; nullopt when `timestamp` is outside the
// Timestamp range or its nanos are out of [0, 999999999] ("unparsable").
std::optional<int64_t> TimestampMillis(const google::protobuf::Timestamp& timestamp);

// As TimestampMillis for an absl::Time; nullopt for infinite times and times outside the
// Timestamp range.
std::optional<int64_t> TimeMillis(absl::Time time);

// The two instants of one decision.
struct DecisionInstants {
  // context.now: the admission instant of the turn.
  int64_t admitted_ms = 0;
  // The operation instant; the admission instant when the caller gave none.
  int64_t now_ms = 0;

  // max(admission, operation): where expiry is observed.
  int64_t expiry_observed_ms() const { return now_ms > admitted_ms ? now_ms : admitted_ms; }
};

// The instants of a decision over `context` at the optional operation instant `now`; nullopt
// when context.now is absent or unparsable or `now` is given and unparsable (invalid_context).
std::optional<DecisionInstants> ResolveInstants(const protocol::v1::AccessContext& context,
                                                std::optional<absl::Time> now);

// What a grant's activity depends on, split by instant: everything but expiry is fixed at
// admission, so a turn computes it once and each decision only compares expiry.
struct GrantActivity {
  // issuedAt after admission, admission before notBefore, admission at/after revokedAt, or
  // any of the four timestamps absent (issuedAt) or unparsable.
  bool window_closed_at_admission = false;
  // expiresAt in ms; INT64_MAX when the grant has none.
  int64_t expires_at_ms = std::numeric_limits<int64_t>::max();
  // constraints.purposes present and without the context purpose (exact match).
  bool purpose_excluded = false;

  // kWindow if the window is closed at admission or expiry_observed_ms >= expires_at_ms
  // (exactly at expiry is refused); else kPurpose if excluded; else nullopt (active).
  std::optional<RejectionReason> ReasonAt(int64_t expiry_observed_ms) const;
};

// Assesses `grant` for a context with `purpose` admitted at `admitted_ms`.
GrantActivity AssessGrantActivity(const protocol::v1::CapabilityGrant& grant,
                                  absl::string_view purpose, int64_t admitted_ms);

// `grantInactiveReason`: kWindow, kPurpose or nullopt when the grant is active.
std::optional<RejectionReason> InactiveReason(const protocol::v1::CapabilityGrant& grant,
                                              absl::string_view purpose,
                                              const DecisionInstants& instants);

}  // namespace sharedos::capability

#endif  // SHAREDOS_CAPABILITY_ELIGIBILITY_H_
