#include "envelope_svc/resources/files_resources.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <memory>
#include <string>

#include "common/time/clock.h"
#include "envelope_svc/providers/files/files_provider.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::resources {
namespace {

class FilesResourceProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/resourcesXXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    files::FilesProvider::Options options;
    options.root = pattern;
    auto created = files::FilesProvider::Create(std::move(options), clock_);
    ASSERT_TRUE(created.ok()) << created.status();
    files_ = *std::move(created);
    resources_ = std::make_unique<FilesResourceProvider>(*files_);
  }

  v1::ResourceResult Run(const std::string& operation_id, const std::string& action,
                         const std::string& path, const google::protobuf::Value* input) {
    v1::ResourceInvokeRequest request;
    request.set_operation_id(operation_id);
    request.mutable_resource()->set_namespace_("files");
    request.mutable_resource()->add_path(path);
    request.mutable_resource()->mutable_owner()->set_human_user_id("user-alice");
    request.set_action(action);
    if (input != nullptr) *request.mutable_input() = *input;
    request.mutable_context()->mutable_owner()->set_human_user_id("user-alice");
    auto result = resources_->Invoke(request, absl::InfiniteFuture());
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : v1::ResourceResult();
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::unique_ptr<files::FilesProvider> files_;
  std::unique_ptr<FilesResourceProvider> resources_;
};

TEST_F(FilesResourceProviderTest, CreatesThenReadsAFileByActionAndResource) {
  google::protobuf::Value input;
  (*input.mutable_struct_value()->mutable_fields())["content"].set_string_value("hello");
  v1::ResourceResult created = Run("op-1", "create", "note.md", &input);
  EXPECT_EQ(created.status(), v1::RESOURCE_RESULT_STATUS_SUCCEEDED) << created.error().code();
  EXPECT_EQ(created.operation_id(), "op-1");
  v1::ResourceResult read = Run("op-2", "read", "note.md", nullptr);
  ASSERT_EQ(read.status(), v1::RESOURCE_RESULT_STATUS_SUCCEEDED) << read.error().code();
  EXPECT_EQ(read.operation_id(), "op-2");
  EXPECT_EQ(read.output().struct_value().fields().at("content").string_value(), "hello");
  EXPECT_TRUE(read.has_completed_at());
}

TEST_F(FilesResourceProviderTest, FailuresAreTheFilesProvidersInBandCodes) {
  v1::ResourceResult missing = Run("op-1", "read", "none.md", nullptr);
  EXPECT_EQ(missing.status(), v1::RESOURCE_RESULT_STATUS_FAILED);
  EXPECT_EQ(missing.error().code(), "not_found");
  google::protobuf::Value text;
  text.set_string_value("not an object");
  v1::ResourceResult bad = Run("op-2", "create", "x.md", &text);
  EXPECT_EQ(bad.status(), v1::RESOURCE_RESULT_STATUS_FAILED);
  EXPECT_EQ(bad.error().code(), files::kInvalidArguments);
}

}  // namespace
}  // namespace sharedos::envelope::resources
