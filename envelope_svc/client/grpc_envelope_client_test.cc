// GrpcEnvelopeClient against a recording Envelope service on an in-process server: every call
// carries the host credential and a deadline, answers the service's response, and turns the
// service's gRPC error into the same absl code with its message.
#include "envelope_svc/client/grpc_envelope_client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::client {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;

// Answers each method with a response naming the method, or `error` when it is set; records
// the authorization metadata and the time left to each call's deadline.
class RecordingEnvelope final : public v1::Envelope::Service {
 public:
  grpc::Status OpenTurn(grpc::ServerContext* context, const v1::OpenTurnRequest* request,
                        v1::OpenTurnResponse* response) override {
    response->set_turn_id("turn-for-" + request->execution_request().execution_id());
    return Record(*context);
  }
  grpc::Status InvokeTool(grpc::ServerContext* context, const v1::InvokeToolRequest* request,
                          v1::InvokeToolResponse* response) override {
    response->mutable_result()->set_call_id(request->call().id());
    return Record(*context);
  }
  grpc::Status FinishTurn(grpc::ServerContext* context, const v1::FinishTurnRequest*,
                          v1::FinishTurnResponse* response) override {
    response->mutable_result()->set_status(pb::EXECUTION_STATUS_SUCCEEDED);
    return Record(*context);
  }
  grpc::Status CancelTurn(grpc::ServerContext* context, const v1::CancelTurnRequest*,
                          v1::CancelTurnResponse* response) override {
    response->mutable_result()->set_status(pb::EXECUTION_STATUS_CANCELLED);
    return Record(*context);
  }
  grpc::Status GetTurn(grpc::ServerContext* context, const v1::GetTurnRequest*,
                       v1::GetTurnResponse* response) override {
    response->set_state(v1::TURN_STATE_RUNNING);
    return Record(*context);
  }

  std::vector<std::string> authorizations() const {
    absl::MutexLock lock(&mu_);
    return authorizations_;
  }
  std::vector<absl::Duration> deadlines() const {
    absl::MutexLock lock(&mu_);
    return deadlines_;
  }

  grpc::Status error = grpc::Status::OK;

 private:
  grpc::Status Record(const grpc::ServerContext& context) {
    absl::MutexLock lock(&mu_);
    auto it = context.client_metadata().find("authorization");
    authorizations_.push_back(it == context.client_metadata().end()
                                  ? ""
                                  : std::string(it->second.data(), it->second.size()));
    deadlines_.push_back(absl::FromChrono(context.deadline()) - absl::Now());
    return error;
  }

  mutable absl::Mutex mu_;
  std::vector<std::string> authorizations_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> deadlines_ ABSL_GUARDED_BY(mu_);
};

class GrpcEnvelopeClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto runner = common::server::ServerRunner::Start({}, {&service_});
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    client_ = std::make_unique<GrpcEnvelopeClient>(
        v1::Envelope::NewStub(runner_->InProcessChannel()), "host-token", absl::Seconds(7));
  }

  RecordingEnvelope service_;
  std::unique_ptr<common::server::ServerRunner> runner_;
  std::unique_ptr<GrpcEnvelopeClient> client_;
};

TEST_F(GrpcEnvelopeClientTest, EveryCallCarriesTheHostCredentialAndADeadline) {
  v1::OpenTurnRequest open;
  open.mutable_execution_request()->set_execution_id("exec-1");
  auto opened = client_->OpenTurn(open);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->turn_id(), "turn-for-exec-1");

  v1::InvokeToolRequest invoke;
  invoke.mutable_call()->set_id("call-1");
  auto invoked = client_->InvokeTool(invoke);
  ASSERT_TRUE(invoked.ok()) << invoked.status();
  EXPECT_EQ(invoked->result().call_id(), "call-1");

  auto finished = client_->FinishTurn({});
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->result().status(), pb::EXECUTION_STATUS_SUCCEEDED);
  auto cancelled = client_->CancelTurn({});
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->result().status(), pb::EXECUTION_STATUS_CANCELLED);
  auto got = client_->GetTurn({});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), v1::TURN_STATE_RUNNING);

  EXPECT_THAT(service_.authorizations(),
              ElementsAre("Bearer host-token", "Bearer host-token", "Bearer host-token",
                          "Bearer host-token", "Bearer host-token"));
  for (absl::Duration left : service_.deadlines()) {
    EXPECT_GT(left, absl::Seconds(5));
    EXPECT_LE(left, absl::Seconds(7) + absl::Milliseconds(100));  // the clocks' rounding
  }
}

TEST_F(GrpcEnvelopeClientTest, AServiceErrorIsTheSameCodeWithItsMessage) {
  service_.error = grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "namespace outside scope");
  EXPECT_THAT(client_->OpenTurn({}),
              StatusIs(absl::StatusCode::kPermissionDenied, "namespace outside scope"));
  service_.error = grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown turn");
  EXPECT_THAT(client_->GetTurn({}), StatusIs(absl::StatusCode::kNotFound, "unknown turn"));
}

}  // namespace
}  // namespace sharedos::envelope::client
