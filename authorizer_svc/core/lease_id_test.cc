#include "authorizer_svc/core/lease_id.h"

#include <string>

#include "capability/test_builders.h"
#include "common/crypto/base64url.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::T0;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

LeaseClaims Resolved() {
  LeaseClaims claims;
  claims.context = LeaseContext(MakeContext());
  claims.context.mutable_now()->set_nanos(123456789);
  claims.turn_id = "turn-1";
  claims.expires_at = T0() + absl::Seconds(150);
  claims.status = LeaseClaims::Status::kResolved;
  claims.revision = 42;
  claims.authority_hash = std::string(64, 'a');
  return claims;
}

TEST(LeaseKeyTest, IsTheCanonicalJsonOfTheKeyFields) {
  EXPECT_EQ(LeaseKey(MakeContext(), "turn-1"),
            R"({"actor":{"agentId":"alice-assistant","kind":"agent"},)"
            R"("authority":{"kind":"human","userId":"alice"},"namespaceId":"world-1",)"
            R"("owner":{"kind":"human","userId":"alice"},"purpose":"assist",)"
            R"("traceId":"trace-1","turnId":"turn-1"})");
}

TEST(LeaseKeyTest, LeavesOutNowAndEnabledNamespaces) {
  protocol::v1::AccessContext later = MakeContext();
  later.mutable_now()->set_seconds(later.now().seconds() + 60);
  later.add_enabled_tool_namespaces("files");
  EXPECT_EQ(LeaseKey(later, "turn-1"), LeaseKey(MakeContext(), "turn-1"));
  EXPECT_NE(LeaseKey(MakeContext(), "turn-2"), LeaseKey(MakeContext(), "turn-1"));
}

TEST(LeaseIdCodecTest, RoundTripsAResolvedLease) {
  const LeaseIdCodec codec("secret-0123456789-0123456789-0123");
  const LeaseClaims claims = Resolved();
  const std::string id = codec.Encode(claims);
  EXPECT_EQ(id.substr(0, 3), "l1.");
  absl::StatusOr<LeaseClaims> decoded = codec.Decode(id);
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->context.SerializeAsString(), claims.context.SerializeAsString());
  EXPECT_EQ(decoded->turn_id, "turn-1");
  EXPECT_EQ(decoded->expires_at, claims.expires_at);
  EXPECT_EQ(decoded->status, LeaseClaims::Status::kResolved);
  EXPECT_EQ(decoded->revision, 42);
  EXPECT_EQ(decoded->authority_hash, claims.authority_hash);
  EXPECT_EQ(codec.Encode(*decoded), id) << "deterministic";
}

TEST(LeaseIdCodecTest, RoundTripsAnUnavailableLease) {
  const LeaseIdCodec codec("secret-0123456789-0123456789-0123");
  LeaseClaims claims = Resolved();
  claims.status = LeaseClaims::Status::kUnavailable;
  claims.code = "authority_unavailable";
  claims.internal_code = "grant_source_failed";
  absl::StatusOr<LeaseClaims> decoded = codec.Decode(codec.Encode(claims));
  ASSERT_THAT(decoded, IsOk());
  EXPECT_EQ(decoded->status, LeaseClaims::Status::kUnavailable);
  EXPECT_EQ(decoded->code, "authority_unavailable");
  EXPECT_EQ(decoded->internal_code, "grant_source_failed");
}

TEST(LeaseIdCodecTest, ACallerCannotChangeAnythingItCarries) {
  const LeaseIdCodec codec("secret-0123456789-0123456789-0123");
  const std::string id = codec.Encode(Resolved());
  const size_t dot = id.rfind('.');
  // Re-sign an older revision with the right format but without the secret.
  LeaseClaims older = Resolved();
  older.revision = 1;
  const std::string forged = LeaseIdCodec("guessed-secret-guessed-secret-00").Encode(older);
  EXPECT_THAT(codec.Decode(forged),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("integrity check failed")));
  // Splice the genuine MAC onto another payload.
  const std::string spliced = forged.substr(0, forged.rfind('.')) + id.substr(dot);
  EXPECT_THAT(codec.Decode(spliced),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("integrity check failed")));
  EXPECT_THAT(codec.Decode(""), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(codec.Decode("l2.x.y"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease_id: malformed")));
  EXPECT_THAT(codec.Decode("l1.***.abc"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("base64url")));
}

}  // namespace
}  // namespace sharedos::authorizer::core
