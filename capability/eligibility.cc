#include "capability/eligibility.h"

#include <algorithm>

#include "common/validation/limits.h"

namespace sharedos::capability {
namespace {

namespace limits = ::sharedos::common::validation;

}  // namespace

std::optional<int64_t> TimestampMillis(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() < limits::kMinTimestampSeconds ||
      timestamp.seconds() > limits::kMaxTimestampSeconds || timestamp.nanos() < 0 ||
      timestamp.nanos() > limits::kMaxTimestampNanos) {
    return std::nullopt;
  }
  return timestamp.seconds() * 1000 + timestamp.nanos() / 1000000;
}

std::optional<int64_t> TimeMillis(absl::Time time) {
  if (time == absl::InfiniteFuture() || time == absl::InfinitePast()) return std::nullopt;
  const int64_t seconds = absl::ToUnixSeconds(time);
  if (seconds < limits::kMinTimestampSeconds || seconds > limits::kMaxTimestampSeconds) {
    return std::nullopt;
  }
  return absl::ToUnixMillis(time);
}

std::optional<DecisionInstants> ResolveInstants(const protocol::v1::AccessContext& context,
                                                std::optional<absl::Time> now) {
  if (!context.has_now()) return std::nullopt;
  const std::optional<int64_t> admitted = TimestampMillis(context.now());
  if (!admitted.has_value()) return std::nullopt;
  DecisionInstants instants{*admitted, *admitted};
  if (now.has_value()) {
    const std::optional<int64_t> operation = TimeMillis(*now);
    if (!operation.has_value()) return std::nullopt;
    instants.now_ms = *operation;
  }
  return instants;
}

std::optional<RejectionReason> GrantActivity::ReasonAt(int64_t expiry_observed_ms) const {
  if (window_closed_at_admission || expiry_observed_ms >= expires_at_ms) {
    return RejectionReason::kWindow;
  }
  if (purpose_excluded) return RejectionReason::kPurpose;
  return std::nullopt;
}

GrantActivity AssessGrantActivity(const protocol::v1::CapabilityGrant& grant,
                                  absl::string_view purpose, int64_t admitted_ms) {
  GrantActivity activity;
  const auto& constraints = grant.constraints();
  bool closed = !grant.has_issued_at();
  if (!closed) {
    const std::optional<int64_t> issued = TimestampMillis(grant.issued_at());
    closed = !issued.has_value() || *issued > admitted_ms;
  }
  if (constraints.has_not_before()) {
    const std::optional<int64_t> not_before = TimestampMillis(constraints.not_before());
    closed = closed || !not_before.has_value() || admitted_ms < *not_before;
  }
  if (constraints.has_expires_at()) {
    const std::optional<int64_t> expires = TimestampMillis(constraints.expires_at());
    if (expires.has_value()) {
      activity.expires_at_ms = *expires;
    } else {
      closed = true;
    }
  }
  if (grant.has_revoked_at()) {
    const std::optional<int64_t> revoked = TimestampMillis(grant.revoked_at());
    closed = closed || !revoked.has_value() || admitted_ms >= *revoked;
  }
  activity.window_closed_at_admission = closed;
  activity.purpose_excluded =
      !constraints.purposes().empty() &&
      std::find(constraints.purposes().begin(), constraints.purposes().end(), purpose) ==
          constraints.purposes().end();
  return activity;
}

std::optional<RejectionReason> InactiveReason(const protocol::v1::CapabilityGrant& grant,
                                              absl::string_view purpose,
                                              const DecisionInstants& instants) {
  return AssessGrantActivity(grant, purpose, instants.admitted_ms)
      .ReasonAt(instants.expiry_observed_ms());
}

}  // namespace sharedos::capability
