#include "audit_svc/client/audit_writer_flags.h"

#include <cstdlib>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "audit_svc/client/audit_client.h"
#include "common/server/service_main.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, audit);
ABSL_DECLARE_FLAG(std::string, audit_target);
ABSL_DECLARE_FLAG(std::string, audit_token_file);
ABSL_DECLARE_FLAG(std::string, audit_outbox);
ABSL_DECLARE_FLAG(std::string, audit_outbox_durability);

namespace sharedos::audit::client {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

class AuditWriterFlagsTest : public ::testing::Test {
 protected:
  absl::FlagSaver saver_;
};

TEST_F(AuditWriterFlagsTest, TheFlagsAreTheConfiguration) {
  absl::SetFlag(&FLAGS_audit, "local");
  absl::SetFlag(&FLAGS_audit_target, "127.0.0.1:1");
  absl::SetFlag(&FLAGS_audit_token_file, "/tokens/audit");
  absl::SetFlag(&FLAGS_audit_outbox, "/data/writer.outbox");
  const AuditWriterConfig config = AuditWriterConfigFromFlags();
  EXPECT_EQ(config.mode, "local");
  EXPECT_EQ(config.target, "127.0.0.1:1");
  EXPECT_EQ(config.token_file, "/tokens/audit");
  EXPECT_EQ(config.outbox_path, "/data/writer.outbox");
}

TEST_F(AuditWriterFlagsTest, NoAuditFlagMeansNoStart) {
  EXPECT_THAT(NewAuditWriterFromFlags(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit: required")));
}

TEST_F(AuditWriterFlagsTest, ErrorsNameTheFlag) {
  absl::SetFlag(&FLAGS_audit, "discard");
  absl::SetFlag(&FLAGS_audit_outbox_durability, "sometimes");
  EXPECT_THAT(NewAuditWriterFromFlags(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--audit_outbox_durability: must be full or normal"));
  absl::SetFlag(&FLAGS_audit_outbox_durability, "normal");
  absl::SetFlag(&FLAGS_audit, "remote");
  EXPECT_THAT(NewAuditWriterFromFlags(), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  "--audit_target: required with --audit=remote"));
}

TEST_F(AuditWriterFlagsTest, DiscardNeedsNothingElse) {
  absl::SetFlag(&FLAGS_audit, "discard");
  auto writer = NewAuditWriterFromFlags();
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_THAT((*writer)->RecordPreEffect({}), IsOk());
}

TEST_F(AuditWriterFlagsTest, AWriterWordsWhatItsRecordsAre) {
  char name[] = "writer_svc";
  char* argv[] = {name};
  common::server::ParseServiceCommandLine(
      1, argv, {"writer_svc", "writer_svc: a writer.", {{"audit", "How events get there."}}});
  EXPECT_EQ(absl::FindCommandLineFlag("audit")->Help(), "How events get there.");
  EXPECT_THAT(absl::FindCommandLineFlag("audit_outbox_durability")->Help(),
              HasSubstr("Outbox commits: full (fsync each; survives a power loss)"));
}

}  // namespace
}  // namespace sharedos::audit::client
