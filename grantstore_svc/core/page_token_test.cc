#include "grantstore_svc/core/page_token.h"

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"

namespace sharedos::grantstore::core {
namespace {

using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

v1::GrantFilter Filter(const std::string& namespace_id, bool include_revoked = false) {
  v1::GrantFilter filter;
  filter.set_namespace_id(namespace_id);
  filter.set_include_revoked(include_revoked);
  return filter;
}

TEST(PageTokenTest, RoundTripsThePositionForTheSameFilter) {
  const std::string token = EncodePageToken("grants", Filter("world"), "grant\n-7");
  EXPECT_THAT(DecodePageToken(token, "grants", Filter("world")), IsOkAndHolds("grant\n-7"));
  // Deterministic: the same inputs give the same token.
  EXPECT_EQ(token, EncodePageToken("grants", Filter("world"), "grant\n-7"));
}

TEST(PageTokenTest, IsBoundToTheKindAndTheFilter) {
  const std::string token = EncodePageToken("grants", Filter("world"), "g1");
  EXPECT_THAT(DecodePageToken(token, "grants", Filter("world", true)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("page_token: not issued for this filter")));
  EXPECT_THAT(DecodePageToken(token, "grants", Filter("other")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not issued")));
  EXPECT_THAT(DecodePageToken(token, "escalations", Filter("world")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not issued")));
}

TEST(PageTokenTest, MalformedTokensAreRejected) {
  for (const char* token : {"%%%", "djE", "eHl6"}) {
    EXPECT_THAT(DecodePageToken(token, "grants", Filter("world")),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_token: malformed")))
        << token;
  }
}

}  // namespace
}  // namespace sharedos::grantstore::core
