#include "grantstore_svc/storage/grant_rows.h"

#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::storage {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
namespace pb = ::sharedos::protocol::v1;

// A row held in memory: absent columns are NULL.
class FakeRow final : public RowReader {
 public:
  FakeRow& Set(int column, std::string bytes) {
    bytes_[column] = std::move(bytes);
    return *this;
  }
  FakeRow& Set(int column, int64_t value) {
    numbers_[column] = value;
    return *this;
  }
  bool IsNull(int column) const override {
    return bytes_.count(column) == 0 && numbers_.count(column) == 0;
  }
  int64_t Int64(int column) const override {
    auto it = numbers_.find(column);
    return it == numbers_.end() ? 0 : it->second;
  }
  absl::string_view Bytes(int column) const override {
    auto it = bytes_.find(column);
    return it == bytes_.end() ? absl::string_view() : absl::string_view(it->second);
  }

 private:
  std::map<int, std::string> bytes_;
  std::map<int, int64_t> numbers_;
};

pb::CapabilityGrant Grant() {
  pb::CapabilityGrant grant;
  grant.set_id("g1");
  grant.set_namespace_id("world-1");
  return grant;
}

TEST(GrantRowsTest, ARevocationIsVisibleOnlyFromItsRevision) {
  FakeRow row;
  row.Set(0, Grant().SerializeAsString()).Set(1, int64_t{3}).Set(2, int64_t{7});
  row.Set(3, int64_t{1700000000}).Set(4, int64_t{5});

  absl::StatusOr<StoredGrant> before = GrantFromRow(row, 6);
  ASSERT_THAT(before, IsOk());
  EXPECT_EQ(before->issued_revision, 3);
  EXPECT_FALSE(before->revoked_revision.has_value());
  EXPECT_FALSE(before->grant.has_revoked_at());

  absl::StatusOr<StoredGrant> at = GrantFromRow(row, 7);
  ASSERT_THAT(at, IsOk());
  EXPECT_EQ(at->revoked_revision, 7);
  EXPECT_EQ(at->grant.revoked_at().seconds(), 1700000000);
  EXPECT_EQ(at->grant.revoked_at().nanos(), 5);
}

TEST(GrantRowsTest, ACorruptBodyIsInternalNamingItsTable) {
  FakeRow row;
  row.Set(0, std::string("\xff\xff\xff", 3)).Set(1, int64_t{1});
  EXPECT_THAT(GrantFromRow(row, 1), StatusIs(absl::StatusCode::kInternal, HasSubstr("grants")));
  FakeRow listed;
  listed.Set(0, std::string("cred-1")).Set(1, std::string("\xff\xff\xff", 3));
  grantstore::v1::Credential credential;
  EXPECT_THAT(ParseListedCredential(listed, credential),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("cred-1")));
}

TEST(GrantRowsTest, ARevocationTimeBeforeTheEpochKeepsNanosNonNegative) {
  const RevokedAtColumns at = EncodeRevokedAt(absl::UnixEpoch() - absl::Milliseconds(1500));
  EXPECT_EQ(at.seconds, -2);
  EXPECT_EQ(at.nanos, 500000000);
  const RevokedAtColumns after = EncodeRevokedAt(absl::FromUnixNanos(1000000007));
  EXPECT_EQ(after.seconds, 1);
  EXPECT_EQ(after.nanos, 7);
}

TEST(GrantRowsTest, AGrantIsWrittenUnrevokedAndStampedWithTheRevision) {
  absl::StatusOr<GrantRow> row = EncodeGrant(Grant(), 9);
  ASSERT_THAT(row, IsOk());
  EXPECT_EQ(row->grant_id, "g1");
  EXPECT_EQ(row->issued_revision, 9);
  pb::CapabilityGrant revoked = Grant();
  revoked.mutable_revoked_at()->set_seconds(1);
  EXPECT_THAT(EncodeGrant(revoked, 9),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("revoked_at")));
}

TEST(GrantRowsTest, ReadsAreServedOnlyUpToTheCurrentRevision) {
  EXPECT_EQ(*ServableRevision(5, std::nullopt), 5);
  EXPECT_EQ(*ServableRevision(5, 2), 2);
  EXPECT_THAT(ServableRevision(5, 6), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(ServableRevision(5, -1), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace sharedos::grantstore::storage
