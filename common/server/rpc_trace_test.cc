// The W3C trace context through RpcAdapter::Unary: accepted from the caller, replaced when
// malformed, absent when not sent; held by the thread while the core runs, and carried by the
// calls the core makes over a SharedOS channel.
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "common/client/trace_interceptor.h"
#include "common/logging/trace_context.h"
#include "common/server/auth.h"
#include "common/server/probe_server.h"
#include "common/server/rpc_adapter.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::common::server {
namespace {

constexpr char kTraceparent[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr char kTraceId[] = "4bf92f3577b34da6a3ce929d0e0e4736";

class RpcTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = Authenticator::FromJson(
        R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin-token") + R"("}]})");
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    rpc_ = std::make_unique<RpcAdapter>(*authenticator_);
    // The downstream service: records the traceparent its caller sent.
    downstream_ =
        std::make_unique<testing::ProbeServer>([this](grpc::GenericCallbackServerContext& context) {
          auto it = context.client_metadata().find("traceparent");
          absl::MutexLock lock(&mu_);
          downstream_traceparent_ = it == context.client_metadata().end()
                                        ? ""
                                        : std::string(it->second.data(), it->second.size());
          return grpc::Status::OK;
        });
    channel_ = client::CreateTracedChannel(
        downstream_->address(), grpc::InsecureChannelCredentials(), grpc::ChannelArguments());
    // The service under test: its core notes the thread's trace and calls downstream.
    upstream_ =
        std::make_unique<testing::ProbeServer>([this](grpc::GenericCallbackServerContext& context) {
          std::string response;
          return rpc_->Unary(
              context, "sharedos.status.v1.Status/GetStatus", &response, [&](const Principal&) {
                const logging::TraceContext* trace = logging::CurrentTrace();
                seen_trace_id_ = trace == nullptr ? "" : trace->trace_id;
                seen_parent_id_ = trace == nullptr ? "" : trace->parent_id;
                grpc::ClientContext downstream_context;
                audit::v1::AppendRequest request;
                audit::v1::AppendResponse ignored;
                audit::v1::AuditLog::Stub(channel_).Append(&downstream_context, request, &ignored);
                return absl::StatusOr<std::string>("ok");
              });
        });
  }

  grpc::Status Call(const std::vector<std::string>& traceparents) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer admin-token");
    for (const std::string& value : traceparents) context.AddMetadata("traceparent", value);
    std::string ignored;
    return upstream_->Call(&context, "none", &ignored);
  }

  std::string DownstreamTraceparent() {
    absl::MutexLock lock(&mu_);
    return downstream_traceparent_;
  }

  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<RpcAdapter> rpc_;
  std::unique_ptr<testing::ProbeServer> downstream_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<testing::ProbeServer> upstream_;
  std::string seen_trace_id_ = "unset", seen_parent_id_;
  absl::Mutex mu_;
  std::string downstream_traceparent_ ABSL_GUARDED_BY(mu_) = "unset";
};

TEST_F(RpcTraceTest, AValidTraceparentIsTheCoresTraceAndTravelsDownstreamWithANewParent) {
  ASSERT_TRUE(Call({kTraceparent}).ok());
  EXPECT_EQ(seen_trace_id_, kTraceId);
  EXPECT_EQ(seen_parent_id_, "00f067aa0ba902b7");
  const std::optional<logging::TraceContext> sent =
      logging::ParseTraceparent(DownstreamTraceparent());
  ASSERT_TRUE(sent.has_value()) << DownstreamTraceparent();
  EXPECT_EQ(sent->trace_id, kTraceId);
  EXPECT_NE(sent->parent_id, "00f067aa0ba902b7");
  EXPECT_EQ(sent->flags, 1);
}

TEST_F(RpcTraceTest, AMalformedTraceparentIsReplacedByAFreshTraceNeverEchoed) {
  const std::string malformed = std::string(kTraceparent).substr(0, 54) + "Z";
  for (const std::vector<std::string>& sent :
       {std::vector<std::string>{malformed}, std::vector<std::string>{std::string(4000, 'a')},
        std::vector<std::string>{kTraceparent, kTraceparent}}) {
    ASSERT_TRUE(Call(sent).ok());
    EXPECT_EQ(seen_trace_id_.size(), 32u);
    EXPECT_NE(seen_trace_id_, kTraceId);
    const std::optional<logging::TraceContext> downstream =
        logging::ParseTraceparent(DownstreamTraceparent());
    ASSERT_TRUE(downstream.has_value());
    EXPECT_EQ(downstream->trace_id, seen_trace_id_);
  }
}

TEST_F(RpcTraceTest, NoTraceparentNoTraceAndNothingSentDownstream) {
  ASSERT_TRUE(Call({}).ok());
  EXPECT_EQ(seen_trace_id_, "");
  EXPECT_EQ(DownstreamTraceparent(), "");
  EXPECT_EQ(logging::CurrentTrace(), nullptr);
}

}  // namespace
}  // namespace sharedos::common::server
