// sharedosd as a real process, called with input no honest client sends: identifiers far past
// the protocol's 256 characters, strings that are not UTF-8, and Struct values nested past
// protobuf's recursion limit. Each is refused INVALID_ARGUMENT, promptly, with a short message
// that names what is wrong and echoes none of the input, and the same channel serves the next
// call.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

using ::sharedos::testing::SharedosdDeployment;
using ::testing::HasSubstr;
using ::testing::Not;

// Far past the protocol's 256, and well under gRPC's 4 MiB message limit.
const std::string& LongId() {
  static const std::string* id = new std::string(70000, 'x');
  return *id;
}

class HostileInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    SharedosdDeployment::Options options;
    options.data_dir = sharedos::testing::TempPath("sharedosd-hostile-input");
    auto started = SharedosdDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    sharedosd_ = started->release();
    channel_ = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel(sharedosd_->address(), grpc::InsecureChannelCredentials()));
  }
  static void TearDownTestSuite() {
    delete channel_;
    channel_ = nullptr;
    if (sharedosd_ != nullptr) {
      absl::Status stopped = sharedosd_->Stop();
      EXPECT_TRUE(stopped.ok()) << stopped;
      delete sharedosd_;
      sharedosd_ = nullptr;
    }
  }

  static std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return context;
  }
  static const std::string& Host() { return sharedosd_->host_token(); }
  static const std::string& Admin() { return sharedosd_->admin_token(); }

  // A refusal of hostile input: INVALID_ARGUMENT naming `field`, short, echoing nothing.
  static void ExpectRefused(const grpc::Status& status, const std::string& field) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(field));
    EXPECT_LT(status.error_message().size(), 512u);
    EXPECT_THAT(status.error_message(), Not(HasSubstr("xxxxxxxxxxxxxxxx")));
  }

  // The channel still answers: an unknown turn of a proper length is NOT_FOUND.
  static void ExpectChannelServes() {
    auto envelope = envelope::v1::Envelope::NewStub(*channel_);
    envelope::v1::GetTurnRequest request;
    request.set_turn_id("turn-that-does-not-exist");
    envelope::v1::GetTurnResponse response;
    grpc::Status status = envelope->GetTurn(As(Host()).get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  }

  // Sends `bytes` as the request of `method` and returns the call's status.
  static grpc::Status CallRaw(const std::string& method, const std::string& bytes,
                              const std::string& token) {
    grpc::GenericStub stub(*channel_);
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    auto context = As(token);
    std::mutex mu;
    std::condition_variable done;
    bool finished = false;
    grpc::Status result;
    stub.UnaryCall(context.get(), method, grpc::StubOptions(), &request, &response,
                   [&](grpc::Status status) {
                     std::lock_guard<std::mutex> lock(mu);
                     result = std::move(status);
                     finished = true;
                     done.notify_one();
                   });
    std::unique_lock<std::mutex> lock(mu);
    done.wait(lock, [&] { return finished; });
    return result;
  }

  static SharedosdDeployment* sharedosd_;
  static std::shared_ptr<grpc::Channel>* channel_;
};

SharedosdDeployment* HostileInputTest::sharedosd_ = nullptr;
std::shared_ptr<grpc::Channel>* HostileInputTest::channel_ = nullptr;

TEST_F(HostileInputTest, LongTurnIdsAreRefusedPromptlyWithoutEcho) {
  auto envelope = envelope::v1::Envelope::NewStub(*channel_);
  {
    envelope::v1::GetTurnRequest request;
    request.set_turn_id(LongId());
    envelope::v1::GetTurnResponse response;
    ExpectRefused(envelope->GetTurn(As(Host()).get(), request, &response), "turn_id");
  }
  ExpectChannelServes();
  {
    envelope::v1::CancelTurnRequest request;
    request.set_turn_id(LongId());
    envelope::v1::CancelTurnResponse response;
    ExpectRefused(envelope->CancelTurn(As(Host()).get(), request, &response), "turn_id");
  }
  {
    envelope::v1::InvokeToolRequest request;
    request.set_turn_id(LongId());
    request.mutable_call()->set_id("call-1");
    request.mutable_call()->set_tool("files.open");
    envelope::v1::InvokeToolResponse response;
    ExpectRefused(envelope->InvokeTool(As(Host()).get(), request, &response), "turn_id");
  }
  {
    envelope::v1::FinishTurnRequest request;
    request.set_turn_id(LongId());
    request.mutable_fail()->mutable_error()->set_code("tool_failed");
    request.mutable_fail()->mutable_error()->set_message("the harness failed");
    envelope::v1::FinishTurnResponse response;
    ExpectRefused(envelope->FinishTurn(As(Host()).get(), request, &response), "turn_id");
  }
  ExpectChannelServes();
}

TEST_F(HostileInputTest, LongControlPlaneIdsAreRefusedPromptlyWithoutEcho) {
  auto grants = grantstore::v1::GrantStore::NewStub(*channel_);
  {
    grantstore::v1::GetGrantRequest request;
    request.set_namespace_id("world-demo");
    request.set_grant_id(LongId());
    grantstore::v1::GetGrantResponse response;
    ExpectRefused(grants->GetGrant(As(Admin()).get(), request, &response), "grant_id");
  }
  {
    grantstore::v1::GetGrantRequest request;
    request.set_namespace_id(LongId());
    request.set_grant_id("grant-1");
    grantstore::v1::GetGrantResponse response;
    ExpectRefused(grants->GetGrant(As(Admin()).get(), request, &response), "namespace_id");
  }
  {
    grantstore::v1::RevokeGrantRequest request;
    request.set_namespace_id("world-demo");
    request.set_grant_id(LongId());
    grantstore::v1::RevokeGrantResponse response;
    ExpectRefused(grants->RevokeGrant(As(Admin()).get(), request, &response), "grant_id");
  }
  {
    grantstore::v1::GetEscalationRequest request;
    request.set_escalation_id(LongId());
    grantstore::v1::GetEscalationResponse response;
    ExpectRefused(grants->GetEscalation(As(Admin()).get(), request, &response), "escalation_id");
  }
  auto authorizer = authorizer::v1::Authorizer::NewStub(*channel_);
  {
    // sharedosd's authorizer answers no caller from outside (its envelope calls it in process,
    // ADR 0014): hostile input is refused before it is read.
    authorizer::v1::CloseTurnAuthorityRequest request;
    request.set_lease_id(LongId());
    authorizer::v1::CloseTurnAuthorityResponse response;
    grpc::Status status = authorizer->CloseTurnAuthority(As(Admin()).get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(status.error_message(), Not(HasSubstr("xxxxxxxxxxxxxxxx")));
  }
  auto audit = audit::v1::AuditLog::NewStub(*channel_);
  for (const char* field : {"namespace_id", "trace_id", "execution_id"}) {
    audit::v1::QueryRequest request;
    const google::protobuf::FieldDescriptor* descriptor =
        audit::v1::AuditFilter::descriptor()->FindFieldByName(field);
    ASSERT_NE(descriptor, nullptr) << field;
    request.mutable_filter()->GetReflection()->SetString(request.mutable_filter(), descriptor,
                                                         LongId());
    audit::v1::QueryResponse response;
    ExpectRefused(audit->Query(As(Admin()).get(), request, &response), field);
  }
  ExpectChannelServes();
}

// Field 1 (turn_id), length-delimited, holding bytes that are not UTF-8.
TEST_F(HostileInputTest, InvalidUtf8IsInvalidArgument) {
  const std::string bytes = std::string("\x0a\x04", 2) + "\xff\xfe\xfd\xfc";
  grpc::Status status = CallRaw("/sharedos.envelope.v1.Envelope/GetTurn", bytes, Host());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("UTF-8"));
  ExpectChannelServes();
}

// InvokeToolRequest{turn_id, call{tool_name, arguments: Struct nested 60 levels}}.
TEST_F(HostileInputTest, StructNestedPastTheRecursionLimitIsInvalidArgument) {
  envelope::v1::InvokeToolRequest request;
  request.set_turn_id("turn-that-does-not-exist");
  request.mutable_call()->set_id("call-1");
  request.mutable_call()->set_tool("files.open");
  google::protobuf::Struct* level = request.mutable_call()->mutable_arguments();
  for (int i = 0; i < 60; ++i) {
    level = (*level->mutable_fields())["a"].mutable_struct_value();
  }
  std::string bytes;
  ASSERT_TRUE(request.SerializeToString(&bytes));
  grpc::Status status = CallRaw("/sharedos.envelope.v1.Envelope/InvokeTool", bytes, Host());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("nest"));
  ExpectChannelServes();
}

}  // namespace
}  // namespace sharedos
