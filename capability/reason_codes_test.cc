#include "capability/reason_codes.h"

#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::capability {
namespace {

TEST(ReasonCodeTest, VocabularyAndFailClosed) {
  // semantics §6.1: code, and whether it is one of the four infrastructure denials.
  const std::vector<std::tuple<ReasonCode, std::string, bool>> table = {
      {ReasonCode::kAllowed, "allowed", false},
      {ReasonCode::kNoMatchingGrant, "no_matching_grant", false},
      {ReasonCode::kGrantExhausted, "grant_exhausted", false},
      {ReasonCode::kInvalidContext, "invalid_context", false},
      {ReasonCode::kInvalidRequest, "invalid_request", false},
      {ReasonCode::kAuthorityUnavailable, "authority_unavailable", true},
      {ReasonCode::kUsageStoreUnavailable, "usage_store_unavailable", true},
      {ReasonCode::kDelegationChainUnverified, "delegation_chain_unverified", true},
      {ReasonCode::kDelegationChainInvalid, "delegation_chain_invalid", false},
      {ReasonCode::kHostPolicyDenied, "host_policy_denied", false},
      {ReasonCode::kHostPolicyUnavailable, "host_policy_unavailable", true},
  };
  for (const auto& [code, name, fail_closed] : table) {
    EXPECT_EQ(Name(code), name);
    EXPECT_EQ(IsFailClosed(code), fail_closed) << name;
  }
}

TEST(RejectionReasonTest, Vocabulary) {
  const std::vector<std::pair<RejectionReason, std::string>> table = {
      {RejectionReason::kIssuer, "issuer"},         {RejectionReason::kSubject, "subject"},
      {RejectionReason::kNamespace, "namespace"},   {RejectionReason::kWindow, "window"},
      {RejectionReason::kPurpose, "purpose"},       {RejectionReason::kVerifier, "verifier"},
      {RejectionReason::kCapability, "capability"}, {RejectionReason::kDelegation, "delegation"},
      {RejectionReason::kExhausted, "exhausted"},
  };
  for (const auto& [reason, name] : table) EXPECT_EQ(Name(reason), name);
}

TEST(DelegationCodeTest, VocabularyAndUnverified) {
  const std::vector<std::tuple<DelegationCode, std::string, bool>> table = {
      {DelegationCode::kResolverUnavailable, "resolver_unavailable", true},
      {DelegationCode::kParentNotFound, "parent_not_found", true},
      {DelegationCode::kResolverFailed, "resolver_failed", true},
      {DelegationCode::kChainTooLong, "chain_too_long", false},
      {DelegationCode::kChainCycle, "chain_cycle", false},
      {DelegationCode::kNamespaceMismatch, "namespace_mismatch", false},
      {DelegationCode::kIssuerNotParentSubject, "issuer_not_parent_subject", false},
      {DelegationCode::kParentInactive, "parent_inactive", false},
      {DelegationCode::kDelegationNotPermitted, "delegation_not_permitted", false},
      {DelegationCode::kDelegationDepthExceeded, "delegation_depth_exceeded", false},
      {DelegationCode::kBoundedParentNotDelegable, "bounded_parent_not_delegable", false},
      {DelegationCode::kCapabilityWidened, "capability_widened", false},
      {DelegationCode::kConstraintsWidened, "constraints_widened", false},
  };
  for (const auto& [code, name, unverified] : table) {
    EXPECT_EQ(Name(code), name);
    EXPECT_EQ(IsUnverified(code), unverified) << name;
  }
}

TEST(DeriveRefusalTest, Vocabulary) {
  const std::vector<std::pair<DeriveRefusal, std::string>> table = {
      {DeriveRefusal::kEmptyCapabilities, "empty_capabilities"},
      {DeriveRefusal::kIdCollidesWithParent, "id_collides_with_parent"},
      {DeriveRefusal::kBoundedParentNotDelegable, "bounded_parent_not_delegable"},
      {DeriveRefusal::kParentNotDelegable, "parent_not_delegable"},
      {DeriveRefusal::kDepthExhausted, "depth_exhausted"},
      {DeriveRefusal::kCapabilityNotWithinParent, "capability_not_within_parent"},
      {DeriveRefusal::kPurposeNotWithinParent, "purpose_not_within_parent"},
      {DeriveRefusal::kWindowNotWithinParent, "window_not_within_parent"},
      {DeriveRefusal::kIssuedBeforeParent, "issued_before_parent"},
  };
  for (const auto& [refusal, name] : table) EXPECT_EQ(Name(refusal), name);
}

TEST(AuthorityCodeTest, Vocabulary) {
  EXPECT_EQ(Name(AuthorityCode::kGrantSourceFailed), "grant_source_failed");
  EXPECT_EQ(Name(AuthorityCode::kInvalidGrantMaterial), "invalid_grant_material");
  EXPECT_EQ(Name(AuthorityCode::kGrantScopeMismatch), "grant_scope_mismatch");
  EXPECT_EQ(Name(AuthorityCode::kGrantLimitExceeded), "grant_limit_exceeded");
  EXPECT_EQ(Name(AuthorityCode::kRevocationUnavailable), "revocation_unavailable");
  EXPECT_EQ(Name(MissingDependency::kUsageStore), "usageStore");
  EXPECT_EQ(Name(MissingDependency::kDelegationResolver), "delegationResolver");
  EXPECT_EQ(Name(MissingDependency::kNone), "");
}

// Every code SharedOS answers or records says what happened: none answers the catch-all (a
// harness killed at its limit once answered "The tool call was refused.").
TEST(CodeMessageTest, EveryCodeHasItsOwnMessage) {
  std::set<std::string> messages;
  for (absl::string_view code : CodesWithMessages()) {
    const absl::string_view message = CodeMessage(code);
    EXPECT_NE(message, kUnknownCodeMessage) << code;
    EXPECT_TRUE(messages.insert(std::string(message)).second) << code << ": message shared";
  }
  for (absl::string_view code :
       {kHarnessFailed, kEscalationPending, kEscalationRequested, kTurnCancelled,
        kHarnessExitedWithoutOutcome, kOperationAborted, kNoMatchingGrant, kToolUnavailable}) {
    EXPECT_NE(CodeMessage(code), kUnknownCodeMessage) << code;
  }
  EXPECT_EQ(CodeMessage("harness_invented_this"), kUnknownCodeMessage);
  EXPECT_THAT(std::string(CodeMessage(kHarnessFailed)), ::testing::HasSubstr("harness"));
}

}  // namespace
}  // namespace sharedos::capability
