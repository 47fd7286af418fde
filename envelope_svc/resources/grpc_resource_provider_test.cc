#include "envelope_svc/resources/grpc_resource_provider.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::resources {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

// A host's ResourceProvider: answers the operation's input back, or fails with secret text.
class HostProvider final : public v1::ResourceProvider::Service {
 public:
  grpc::Status Invoke(grpc::ServerContext* context, const v1::ResourceInvokeRequest* request,
                      v1::ResourceInvokeResponse* response) override {
    seen = *request;
    auto token = context->client_metadata().find("authorization");
    if (token != context->client_metadata().end()) {
      seen_token = std::string(token->second.data(), token->second.length());
    }
    if (fail) return grpc::Status(grpc::StatusCode::INTERNAL, "secret host detail");
    v1::ResourceResult* result = response->mutable_result();
    result->set_operation_id(request->operation_id());
    result->set_status(v1::RESOURCE_RESULT_STATUS_SUCCEEDED);
    *result->mutable_output() = request->input();
    if (unknown_field) {
      result->GetReflection()->MutableUnknownFields(result)->AddVarint(999, 1);
    }
    return grpc::Status::OK;
  }

  bool fail = false;
  bool unknown_field = false;
  v1::ResourceInvokeRequest seen;
  std::string seen_token;
};

class GrpcResourceProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&host_);
    server_ = builder.BuildAndStart();
    GrpcResourceProvider::Options options;
    options.prepare_context = [](grpc::ClientContext& context) {
      context.AddMetadata("authorization", "Bearer service-token");
    };
    provider_ = std::make_unique<GrpcResourceProvider>(
        v1::ResourceProvider::NewStub(server_->InProcessChannel(grpc::ChannelArguments())),
        options);
    request_.set_operation_id("op-1");
    request_.mutable_resource()->set_namespace_("calendar");
    request_.mutable_resource()->add_path("events");
    request_.set_action("read");
    request_.mutable_input()->set_string_value("the input");
    request_.mutable_context()->set_namespace_id("world-a");
  }
  void TearDown() override { server_->Shutdown(); }

  HostProvider host_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GrpcResourceProvider> provider_;
  v1::ResourceInvokeRequest request_;
};

TEST_F(GrpcResourceProviderTest, AnswersTheHostsResultWithTheOperationAndCredential) {
  absl::StatusOr<v1::ResourceResult> result =
      provider_->Invoke(request_, absl::Now() + absl::Seconds(5));
  ASSERT_THAT(result.status(), IsOk());
  EXPECT_EQ(result->operation_id(), "op-1");
  EXPECT_EQ(result->status(), v1::RESOURCE_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(result->output().string_value(), "the input");
  EXPECT_EQ(host_.seen.resource().namespace_(), "calendar");
  EXPECT_EQ(host_.seen.action(), "read");
  EXPECT_EQ(host_.seen.context().namespace_id(), "world-a");
  EXPECT_EQ(host_.seen_token, "Bearer service-token");
}

TEST_F(GrpcResourceProviderTest, AFailedRpcIsUnavailableWithoutTheHostsText) {
  host_.fail = true;
  absl::StatusOr<v1::ResourceResult> result =
      provider_->Invoke(request_, absl::Now() + absl::Seconds(5));
  EXPECT_THAT(result.status(), StatusIs(absl::StatusCode::kUnavailable,
                                        HasSubstr("ResourceProvider.Invoke failed: INTERNAL")));
  EXPECT_THAT(std::string(result.status().message()), Not(HasSubstr("secret")));
}

TEST_F(GrpcResourceProviderTest, AResponseWithUnknownFieldsIsRefused) {
  host_.unknown_field = true;
  EXPECT_THAT(provider_->Invoke(request_, absl::Now() + absl::Seconds(5)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown fields")));
}

}  // namespace
}  // namespace sharedos::envelope::resources
