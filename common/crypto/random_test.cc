#include "common/crypto/random.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::testing::MatchesRegex;
using ::testing::SizeIs;

TEST(NewUuidV4Test, HasTheCanonicalShapeWithVersionAndVariant) {
  for (int i = 0; i < 200; ++i) {
    EXPECT_THAT(
        NewUuidV4(),
        MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}"
                     "-[0-9a-f]{12}"));
  }
}

TEST(NewUuidV4Test, IsUnique) {
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    EXPECT_TRUE(seen.insert(NewUuidV4()).second);
  }
}

TEST(SecureRandomBytesTest, ReturnsTheRequestedSize) {
  EXPECT_THAT(SecureRandomBytes(0), IsOkAndHolds(""));
  const absl::StatusOr<std::string> first = SecureRandomBytes(32);
  const absl::StatusOr<std::string> second = SecureRandomBytes(32);
  ASSERT_OK(first);
  ASSERT_OK(second);
  EXPECT_THAT(*first, SizeIs(32));
  EXPECT_NE(*first, *second);
}

TEST(SecureRandomBytesTest, RejectsHugeRequests) {
  EXPECT_THAT(SecureRandomBytes(static_cast<size_t>(1) << 40),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "cannot generate 1099511627776 random bytes at once"));
}

}  // namespace
}  // namespace sharedos::common
