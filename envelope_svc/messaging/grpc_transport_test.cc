#include "envelope_svc/messaging/grpc_transport.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::messaging {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::testing::HasSubstr;
using ::testing::Not;

// A host transport: refuses every dispatch (its lease revoked), or fails with secret text.
class HostTransport final : public v1::MessageTransport::Service {
 public:
  grpc::Status Send(grpc::ServerContext* context, const v1::TransportSendRequest* request,
                    v1::TransportSendResponse* response) override {
    seen_namespace = request->namespace_id();
    seen_owner = request->owner().human_user_id();
    auto token = context->client_metadata().find("authorization");
    if (token != context->client_metadata().end()) {
      seen_token = std::string(token->second.data(), token->second.length());
    }
    if (fail) return grpc::Status(grpc::StatusCode::INTERNAL, "secret host detail");
    v1::MessageDeliveryResult* receipt = response->mutable_receipt();
    receipt->set_message_id(request->message().id());
    receipt->set_status(v1::MESSAGE_DELIVERY_STATUS_DENIED);
    receipt->mutable_error()->set_code("route_lease_revoked");
    receipt->mutable_error()->set_message("lease gone");
    return grpc::Status::OK;
  }
  grpc::Status AwaitReply(grpc::ServerContext*, const v1::AwaitReplyRequest* request,
                          v1::AwaitReplyResponse* response) override {
    if (fail) return grpc::Status(grpc::StatusCode::INTERNAL, "secret host detail");
    response->mutable_reply()->set_reply_to(request->request().id());
    return grpc::Status::OK;
  }

  bool fail = false;
  std::string seen_namespace;
  std::string seen_owner;
  std::string seen_token;
};

// The sending turn's owner, carried to the host's transport.
pb::Address Owner() {
  pb::Address owner;
  owner.set_human_user_id("user-alice");
  return owner;
}

class GrpcMessageTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&host_);
    server_ = builder.BuildAndStart();
    GrpcMessageTransport::Options options;
    options.prepare_context = [](grpc::ClientContext& context) {
      context.AddMetadata("authorization", "Bearer service-token");
    };
    transport_ = std::make_unique<GrpcMessageTransport>(
        v1::MessageTransport::NewStub(server_->InProcessChannel(grpc::ChannelArguments())),
        options);
    message_.set_version("1");
    message_.set_id("m-1");
  }
  void TearDown() override { server_->Shutdown(); }

  HostTransport host_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GrpcMessageTransport> transport_;
  pb::MessageEnvelope message_;
};

TEST_F(GrpcMessageTransportTest, AnswersTheHostsReceiptVerbatimWithTheWorldAndCredential) {
  absl::StatusOr<v1::MessageDeliveryResult> receipt =
      transport_->Send("world-a", Owner(), message_, absl::Now() + absl::Seconds(5));
  ASSERT_THAT(receipt.status(), IsOk());
  EXPECT_EQ(receipt->status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(receipt->error().code(), "route_lease_revoked");
  EXPECT_EQ(receipt->message_id(), "m-1");
  EXPECT_EQ(host_.seen_namespace, "world-a");
  EXPECT_EQ(host_.seen_owner, "user-alice");
  EXPECT_EQ(host_.seen_token, "Bearer service-token");
  absl::StatusOr<pb::MessageEnvelope> reply =
      transport_->AwaitReply("world-a", message_, absl::Now() + absl::Seconds(5));
  ASSERT_THAT(reply.status(), IsOk());
  EXPECT_EQ(reply->reply_to(), "m-1");
}

TEST_F(GrpcMessageTransportTest, AFailedRpcNamesOnlyItsCode) {
  host_.fail = true;
  absl::StatusOr<v1::MessageDeliveryResult> receipt =
      transport_->Send("world-a", Owner(), message_, absl::Now() + absl::Seconds(5));
  EXPECT_EQ(receipt.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(receipt.status().message()), HasSubstr("MessageTransport.Send failed"));
  EXPECT_THAT(std::string(receipt.status().message()), Not(HasSubstr("secret")));
  EXPECT_EQ(
      transport_->AwaitReply("world-a", message_, absl::Now() + absl::Seconds(5)).status().code(),
      absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace sharedos::envelope::messaging
