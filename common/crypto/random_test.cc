#include "common/crypto/random.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
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
    EXPECT_THAT(NewUuidV4(), MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}"
                                          "-[0-9a-f]{12}"));
  }
}

TEST(NewUuidV4Test, IsUnique) {
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    EXPECT_TRUE(seen.insert(NewUuidV4()).second);
  }
}

// UUIDs are drawn from a per-thread batch of random bytes; a forked child must not hand out the
// parent's next ones.
TEST(NewUuidV4Test, AForkedChildDoesNotRepeatTheParentsNextUuid) {
  (void)NewUuidV4();  // the parent's batch is filled, with unused UUIDs left in it
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string uuid = NewUuidV4();
    const ssize_t written = write(fds[1], uuid.data(), uuid.size());
    _exit(written == static_cast<ssize_t>(uuid.size()) ? 0 : 1);
  }
  close(fds[1]);
  char from_child[36];
  size_t got = 0;
  while (got < sizeof(from_child)) {
    const ssize_t n = read(fds[0], from_child + got, sizeof(from_child) - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(got, sizeof(from_child));
  EXPECT_NE(std::string(from_child, sizeof(from_child)), NewUuidV4());
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
