#include "console/oidc_sign_in.h"

#include <set>
#include <string>

#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::console {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(PendingSignInsTest, BegunSignInIsTakenOnceByItsBrowser) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  PendingSignIns pending(clock, absl::Minutes(10), 8);
  absl::StatusOr<PendingSignIn> begun = pending.Begin();
  ASSERT_TRUE(begun.ok()) << begun.status();
  std::set<std::string> distinct = {begun->state, begun->nonce, begun->code_verifier,
                                    begun->binding};
  EXPECT_EQ(distinct.size(), 4u) << "state, nonce, verifier and binding are each fresh";
  EXPECT_EQ(begun->code_verifier.size(), 43u) << "RFC 7636: 43-128 characters";
  absl::StatusOr<PendingSignIn> taken = pending.Take(begun->state, begun->binding);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->nonce, begun->nonce);
  EXPECT_EQ(taken->code_verifier, begun->code_verifier);
  // Single-use: the same state again is refused.
  absl::StatusOr<PendingSignIn> again = pending.Take(begun->state, begun->binding);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(again.status().message(), HasSubstr("state"));
}

TEST(PendingSignInsTest, UnknownOrEmptyStateIsRefused) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  PendingSignIns pending(clock, absl::Minutes(10), 8);
  absl::StatusOr<PendingSignIn> begun = pending.Begin();
  ASSERT_TRUE(begun.ok());
  EXPECT_EQ(pending.Take("not-a-state", begun->binding).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending.Take("", begun->binding).status().code(), absl::StatusCode::kInvalidArgument);
  // A wrong state does not use up the right one.
  EXPECT_TRUE(pending.Take(begun->state, begun->binding).ok());
}

TEST(PendingSignInsTest, AnotherBrowsersStateIsRefusedAndUsedUp) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  PendingSignIns pending(clock, absl::Minutes(10), 8);
  absl::StatusOr<PendingSignIn> victim = pending.Begin();
  absl::StatusOr<PendingSignIn> attacker = pending.Begin();
  ASSERT_TRUE(victim.ok() && attacker.ok());
  absl::StatusOr<PendingSignIn> crossed = pending.Take(victim->state, attacker->binding);
  EXPECT_EQ(crossed.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(crossed.status().message(), HasSubstr("another browser"));
  EXPECT_EQ(pending.Take(victim->state, "").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(pending.Take(victim->state, victim->binding).status().code(),
            absl::StatusCode::kInvalidArgument)
      << "a state presented once is used up, whoever presented it";
}

TEST(PendingSignInsTest, ExpiredSignInIsRefused) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  PendingSignIns pending(clock, absl::Minutes(10), 8);
  absl::StatusOr<PendingSignIn> begun = pending.Begin();
  ASSERT_TRUE(begun.ok());
  clock.AdvanceTime(absl::Minutes(10));
  EXPECT_EQ(pending.Take(begun->state, begun->binding).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PendingSignInsTest, CountIsBoundedAndExpiredOnesMakeRoom) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1000));
  PendingSignIns pending(clock, absl::Minutes(10), 2);
  ASSERT_TRUE(pending.Begin().ok());
  ASSERT_TRUE(pending.Begin().ok());
  absl::StatusOr<PendingSignIn> third = pending.Begin();
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(third.status().message(), HasSubstr("--console_oidc_max_pending"));
  EXPECT_EQ(pending.size(), 2u);
  clock.AdvanceTime(absl::Minutes(10));
  EXPECT_TRUE(pending.Begin().ok());
  EXPECT_EQ(pending.size(), 1u);
}

TEST(PkceTest, S256ChallengeOfRfc7636AppendixB) {
  EXPECT_EQ(PkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(AuthorizationUrlTest, CarriesCodeFlowStateNonceAndChallengeNeverTheVerifier) {
  AuthorizationRequest request;
  request.authorization_endpoint = "https://idp.example/auth";
  request.client_id = "sharedos-console";
  request.redirect_uri = "https://console.example/oidc/callback";
  request.scope = "openid email";
  request.resource = "sharedos-grpc";
  PendingSignIn pending;
  pending.state = "S";
  pending.nonce = "N";
  pending.code_verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  const std::string url = AuthorizationUrl(request, pending);
  EXPECT_EQ(url,
            "https://idp.example/auth?response_type=code&client_id=sharedos-console"
            "&redirect_uri=https%3A%2F%2Fconsole.example%2Foidc%2Fcallback&scope=openid%20email"
            "&state=S&nonce=N&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
            "&code_challenge_method=S256&resource=sharedos-grpc");
  EXPECT_THAT(url, Not(HasSubstr(pending.code_verifier)));
  request.authorization_endpoint = "https://idp.example/auth?tenant=a";
  request.resource.clear();
  EXPECT_THAT(AuthorizationUrl(request, pending), HasSubstr("/auth?tenant=a&response_type=code&"));
}

TEST(EndSessionUrlTest, HintAndOptionalReturn) {
  EXPECT_EQ(EndSessionUrl("https://idp.example/session/end", "c", "a.b.c", ""),
            "https://idp.example/session/end?client_id=c&id_token_hint=a.b.c");
  EXPECT_EQ(EndSessionUrl("https://idp.example/end", "c", "t", "https://console.example/signin"),
            "https://idp.example/end?client_id=c&id_token_hint=t"
            "&post_logout_redirect_uri=https%3A%2F%2Fconsole.example%2Fsignin");
}

}  // namespace
}  // namespace sharedos::console
