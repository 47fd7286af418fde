#include "envelope_svc/mcp/execution_token.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::mcp {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const absl::Time kNow = absl::FromUnixSeconds(1786438800);

ExecutionTokenClaims Claims() {
  ExecutionTokenClaims claims;
  claims.execution_id = "exec-1";
  claims.turn_id = "turn-1";
  claims.namespace_id = "world-1";
  claims.actor = "agent:agent-assistant";
  claims.catalog_hash = "sha256:abc";
  claims.expires_at = kNow + absl::Minutes(2);
  return claims;
}

const ExecutionTokenCodec& Codec() {
  static const ExecutionTokenCodec* codec = new ExecutionTokenCodec(std::string(32, 's'));
  return *codec;
}

TEST(ExecutionTokenTest, MintedTokenVerifiesWithEveryClaim) {
  const std::string token = Codec().Mint(Claims());
  EXPECT_THAT(token, StartsWith("x1."));
  absl::StatusOr<ExecutionTokenClaims> claims = Codec().Verify(token, kNow);
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->execution_id, "exec-1");
  EXPECT_EQ(claims->turn_id, "turn-1");
  EXPECT_EQ(claims->namespace_id, "world-1");
  EXPECT_EQ(claims->actor, "agent:agent-assistant");
  EXPECT_EQ(claims->catalog_hash, "sha256:abc");
  EXPECT_EQ(claims->expires_at, kNow + absl::Minutes(2));
}

TEST(ExecutionTokenTest, MintingIsDeterministic) {
  EXPECT_EQ(Codec().Mint(Claims()), Codec().Mint(Claims()));
  ExecutionTokenClaims other = Claims();
  other.turn_id = "turn-2";
  EXPECT_NE(Codec().Mint(Claims()), Codec().Mint(other));
}

TEST(ExecutionTokenTest, ExpiredAtTheInstantOfExpiry) {
  const std::string token = Codec().Mint(Claims());
  EXPECT_TRUE(Codec().Verify(token, kNow + absl::Minutes(2) - absl::Milliseconds(1)).ok());
  EXPECT_THAT(Codec().Verify(token, kNow + absl::Minutes(2)),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("expired")));
}

TEST(ExecutionTokenTest, AnotherSecretsTokenIsForged) {
  const ExecutionTokenCodec other(std::string(32, 't'));
  EXPECT_THAT(Codec().Verify(other.Mint(Claims()), kNow),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("integrity")));
}

TEST(ExecutionTokenTest, ChangedPayloadFailsTheMac) {
  // Move the token to another turn, keeping the MAC: refused before the payload is read.
  const std::vector<std::string> parts = absl::StrSplit(Codec().Mint(Claims()), '.');
  ASSERT_EQ(parts.size(), 3u);
  ExecutionTokenClaims moved = Claims();
  moved.turn_id = "turn-2";
  const std::vector<std::string> other = absl::StrSplit(Codec().Mint(moved), '.');
  EXPECT_THAT(Codec().Verify(parts[0] + "." + other[1] + "." + parts[2], kNow),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("integrity")));
}

TEST(ExecutionTokenTest, MalformedTokensAreRefusedWithoutEchoingThem) {
  for (const std::string token :
       {"", "x1", "x1.a", "x2.YQ.YQ", "x1.!!.YQ", "x1.YQ.!!", "x1.YQ.YQ.YQ", "Bearer x1.YQ.YQ"}) {
    absl::StatusOr<ExecutionTokenClaims> claims = Codec().Verify(token, kNow);
    EXPECT_THAT(claims, StatusIs(absl::StatusCode::kUnauthenticated)) << token;
    if (!token.empty()) {
      EXPECT_THAT(std::string(claims.status().message()), Not(HasSubstr(token))) << token;
    }
  }
}

TEST(ExecutionTokenTest, ValidMacOverAPayloadMissingAClaimIsMalformed) {
  // Only a holder of the secret could make this; still, every claim is required.
  const std::string payload = R"({"executionId":"exec-1","turnId":"turn-1"})";
  const std::string mac =
      common::HmacSha256(std::string(32, 's'), "sharedos.envelope.mcp.v1\n" + payload);
  const std::string token =
      "x1." + common::Base64UrlEncode(payload) + "." + common::Base64UrlEncode(mac);
  EXPECT_THAT(Codec().Verify(token, kNow),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("malformed")));
}

}  // namespace
}  // namespace sharedos::envelope::mcp
