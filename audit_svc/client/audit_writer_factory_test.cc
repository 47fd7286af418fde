#include "audit_svc/client/audit_writer_factory.h"

#include <cstdlib>
#include <fstream>

#include "audit_svc/client/audit_client.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::client {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

std::string TempFile(const std::string& name, const std::string& content) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::ofstream(path) << content;
  return path;
}

TEST(AuditWriterFactoryTest, NoModeMeansNoStart) {
  EXPECT_THAT(NewAuditWriter({}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit: required")));
}

TEST(AuditWriterFactoryTest, DiscardMustBeChosenAndNeedsNothingElse) {
  auto writer = NewAuditWriter({"discard", "", "", "", {}});
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_THAT((*writer)->RecordPreEffect({}), IsOk());
}

TEST(AuditWriterFactoryTest, NamesEachMissingFlag) {
  EXPECT_THAT(NewAuditWriter({"remote", "", "", "", {}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit_target")));
  EXPECT_THAT(NewAuditWriter({"remote", "127.0.0.1:1", "", "", {}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit_outbox")));
  EXPECT_THAT(NewAuditWriter({"local", "127.0.0.1:1", "", TempFile("o1", ""), {}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit_token_file")));
  EXPECT_THAT(
      NewAuditWriter({"local", "127.0.0.1:1", "/nonexistent/token", TempFile("o2", ""), {}}),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("cannot read")));
  EXPECT_THAT(NewAuditWriter({"sometimes", "127.0.0.1:1", "", "", {}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be remote, local")));
}

TEST(AuditWriterFactoryTest, BuildsAClientFromACompleteConfiguration) {
  const std::string outbox = std::string(std::getenv("TEST_TMPDIR")) + "/writer.outbox";
  auto writer =
      NewAuditWriter({"local", "127.0.0.1:1", TempFile("token", "  secret-token \n"), outbox, {}});
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_NE(dynamic_cast<AuditClient*>(writer->get()), nullptr);
}

TEST(AuditWriterFactoryTest, OutboxDurabilityIsFullOrNormal) {
  EXPECT_THAT(OutboxFsyncFromFlag(""), IsOkAndHolds(true));
  EXPECT_THAT(OutboxFsyncFromFlag("full"), IsOkAndHolds(true));
  EXPECT_THAT(OutboxFsyncFromFlag("normal"), IsOkAndHolds(false));
  EXPECT_THAT(OutboxFsyncFromFlag("sometimes"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit_outbox_durability")));
  const std::string outbox = std::string(std::getenv("TEST_TMPDIR")) + "/no-fsync.outbox";
  auto writer = NewAuditWriter({"local", "127.0.0.1:1", TempFile("token2", "secret\n"), outbox, {}},
                               /*outbox_fsync=*/false);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_NE(dynamic_cast<AuditClient*>(writer->get()), nullptr);
}

}  // namespace
}  // namespace sharedos::audit::client
