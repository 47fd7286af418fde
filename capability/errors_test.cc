#include "capability/errors.h"

#include <string>
#include <vector>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::capability::errors {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

struct Case {
  absl::Status status;
  absl::StatusCode code;
  std::string substring;
};

// Every factory: its gRPC code and the part of its message tests and operators match on.
TEST(ErrorsTest, EveryFactoryHasItsCodeAndNamesWhatItIsAbout) {
  const std::vector<Case> cases = {
      {InvalidField("grant.id", "empty"), absl::StatusCode::kInvalidArgument, "grant.id: empty"},
      {InvalidField("", "no path"), absl::StatusCode::kInvalidArgument, "no path"},
      {GrantNotFound("world-1", "g-1"), absl::StatusCode::kNotFound, "\"g-1\""},
      {ParentGrantNotFound("world-1", "g-0"), absl::StatusCode::kNotFound, "parent_not_found"},
      {EscalationNotFound("esc-1"), absl::StatusCode::kNotFound, "esc-1"},
      {GrantIdInUse("world-1", "g-1"), absl::StatusCode::kFailedPrecondition, "g-1"},
      {IdempotencyKeyReused(), absl::StatusCode::kFailedPrecondition, "idempotency"},
      {TurnEnded(), absl::StatusCode::kFailedPrecondition, "the turn has ended"},
      {ParentGrantRevoked("world-1", "g-0"), absl::StatusCode::kFailedPrecondition, "g-0"},
      {RevisionNotServable(9, 3), absl::StatusCode::kFailedPrecondition, "revision 3"},
      {HostPolicyVersionUsed("world-1", "v2"), absl::StatusCode::kFailedPrecondition, "\"v2\""},
      {EscalationIdInUse("esc-1"), absl::StatusCode::kFailedPrecondition, "esc-1"},
      {EscalationAlreadyResolved("esc-1", "approved"), absl::StatusCode::kFailedPrecondition,
       "(approved)"},
      {EscalationHasNoRequestedAuthority("esc-1"), absl::StatusCode::kFailedPrecondition, "esc-1"},
      {GrantLimitExceeded(256), absl::StatusCode::kResourceExhausted,
       "grant_limit_exceeded: the actor holds more than 256 grants"},
      {AuditUnavailable("store down"), absl::StatusCode::kUnavailable,
       "audit_unavailable: the control-plane event could not be recorded"},
      {CorruptRow("grants", "g-1"), absl::StatusCode::kInternal, "grants row \"g-1\""},
      {LeaseMalformed("no dot"), absl::StatusCode::kInvalidArgument,
       "lease_id: malformed (no dot)"},
      {LeaseTampered(), absl::StatusCode::kInvalidArgument, "lease_id: integrity check failed"},
      {LeaseExpired(), absl::StatusCode::kNotFound, "lease expired"},
      {LeaseClosed(), absl::StatusCode::kNotFound, "lease closed"},
      {NoSubject(), absl::StatusCode::kInvalidArgument, "neither lease_id nor context"},
      {BadTimeout("negative"), absl::StatusCode::kInvalidArgument, "timeout: negative"},
      {BadTools("tools[1].name", "duplicate"), absl::StatusCode::kInvalidArgument,
       "tools[1].name: duplicate"},
      {BadAsk("purpose: empty"), absl::StatusCode::kInvalidArgument,
       "requested_authority_ask: purpose: empty"},
      {EscalationNotStored(absl::StatusCode::kUnavailable), absl::StatusCode::kUnavailable,
       "grantstore_svc answered UNAVAILABLE"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(c.status, StatusIs(c.code, HasSubstr(c.substring))) << c.status;
  }
}

// What a message names is the caller's own identifier, never more than was passed in.
TEST(ErrorsTest, MessagesCarryNoDetailBeyondTheirArguments) {
  EXPECT_THAT(GrantNotFound("world-1", "g-1"),
              StatusIs(absl::StatusCode::kNotFound, Not(HasSubstr("capabilities"))));
  EXPECT_THAT(AuditUnavailable("x"), StatusIs(absl::StatusCode::kUnavailable, HasSubstr("(x)")));
}

}  // namespace
}  // namespace sharedos::capability::errors
