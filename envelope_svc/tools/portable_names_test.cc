#include "envelope_svc/tools/portable_names.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::tools {
namespace {

using ::testing::HasSubstr;

google::protobuf::RepeatedPtrField<std::string> Names(std::initializer_list<const char*> names) {
  google::protobuf::RepeatedPtrField<std::string> out;
  for (const char* name : names) *out.Add() = name;
  return out;
}

TEST(PortableNamesTest, DotsBecomeUnderscores) {
  EXPECT_EQ(PortableToolName("files.snapshot.create"), "files_snapshot_create");
  EXPECT_EQ(PortableToolName("files_read"), "files_read");
}

TEST(PortableNamesTest, TwoToolsSharingAPortableFormAreRefusedNamingBoth) {
  EXPECT_TRUE(CheckPortableNames(Names({"files.read", "files.create", "sharedos.escalate"}),
                                 "execution_request.tools")
                  .ok());
  // A name asked for twice is one tool.
  EXPECT_TRUE(CheckPortableNames(Names({"files.read", "files.read"}), "tools").ok());
  const absl::Status collision = CheckPortableNames(
      Names({"files.read", "notion.search", "files_read"}), "execution_request.tools");
  EXPECT_EQ(collision.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(collision.message(), HasSubstr("execution_request.tools"));
  EXPECT_THAT(collision.message(), HasSubstr("\"files.read\" and \"files_read\""));
  EXPECT_THAT(collision.message(), HasSubstr("\"files_read\""));
}

}  // namespace
}  // namespace sharedos::envelope::tools
