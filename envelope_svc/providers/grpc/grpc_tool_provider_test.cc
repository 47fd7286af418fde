#include "envelope_svc/providers/grpc/grpc_tool_provider.h"

#include <google/protobuf/text_format.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/tools/tool_refusal.h"
#include "envelope_svc/tools/tool_registry.h"
#include "envelope_svc/tools/turn_tools.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::providers {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::ToolDefinition;
using ::testing::HasSubstr;
using ::testing::Not;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

const char kNotionSearch[] = R"pb(
  name: "notion.search"
  description: "Search."
  namespace: "notion"
  source: "mcp"
  read_write: READ_WRITE_READ
  required_capability {
    resource { namespace: "notion" }
    action: "search"
  }
  input_schema {
    fields {
      key: "type"
      value { string_value: "object" }
    }
    fields {
      key: "properties"
      value {
        struct_value {
          fields {
            key: "page"
            value {
              struct_value {
                fields {
                  key: "type"
                  value { string_value: "string" }
                }
              }
            }
          }
        }
      }
    }
  }
)pb";

// An in-process host ToolProvider whose answers each test scripts.
class FakeToolProvider final : public v1::ToolProvider::Service {
 public:
  grpc::Status ListTools(grpc::ServerContext* context, const v1::ListToolsRequest* request,
                         v1::ListToolsResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++list_calls_;
    last_list_ = *request;
    for (const auto& [key, value] : context->client_metadata()) {
      if (key == "authorization") authorization_ = std::string(value.data(), value.size());
    }
    if (!list_status_.ok()) return list_status_;
    *response = list_response_;
    return grpc::Status::OK;
  }

  grpc::Status Invoke(grpc::ServerContext* context, const v1::InvokeRequest* request,
                      v1::InvokeResponse* response) override {
    absl::MutexLock lock(&mu_);
    last_invoke_ = *request;
    has_deadline_ = context->deadline() != std::chrono::system_clock::time_point::max();
    if (!invoke_status_.ok()) return invoke_status_;
    *response = invoke_response_;
    if (echo_ids_) {
      response->mutable_result()->set_call_id(request->call_id());
      response->mutable_result()->set_tool(request->tool());
    }
    return grpc::Status::OK;
  }

  absl::Mutex mu_;
  grpc::Status list_status_ ABSL_GUARDED_BY(mu_);
  v1::ListToolsResponse list_response_ ABSL_GUARDED_BY(mu_);
  grpc::Status invoke_status_ ABSL_GUARDED_BY(mu_);
  v1::InvokeResponse invoke_response_ ABSL_GUARDED_BY(mu_);
  bool echo_ids_ ABSL_GUARDED_BY(mu_) = true;
  int list_calls_ ABSL_GUARDED_BY(mu_) = 0;
  v1::ListToolsRequest last_list_ ABSL_GUARDED_BY(mu_);
  v1::InvokeRequest last_invoke_ ABSL_GUARDED_BY(mu_);
  bool has_deadline_ ABSL_GUARDED_BY(mu_) = false;
  std::string authorization_ ABSL_GUARDED_BY(mu_);
};

class GrpcToolProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    GrpcToolProvider::Options options;
    options.prepare_context = [](grpc::ClientContext& context) {
      context.AddMetadata("authorization", "Bearer service-token");
    };
    provider_ = std::make_unique<GrpcToolProvider>(
        "notion-mcp",
        v1::ToolProvider::NewStub(server_->InProcessChannel(grpc::ChannelArguments())),
        std::move(options));
    context_ = Parse<v1::ProviderContext>(R"pb(
      namespace_id: "world"
      owner { human_user_id: "user-alice" }
      purpose: "p"
      trace_id: "t"
    )pb");
  }

  void TearDown() override { server_->Shutdown(); }

  absl::Time Deadline() { return absl::Now() + absl::Seconds(30); }

  FakeToolProvider fake_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GrpcToolProvider> provider_;
  v1::ProviderContext context_;
};

TEST_F(GrpcToolProviderTest, ListsTools) {
  {
    absl::MutexLock lock(&fake_.mu_);
    *fake_.list_response_.add_tools() = Parse<ToolDefinition>(kNotionSearch);
  }
  auto tools = provider_->ListTools(context_, Deadline());
  ASSERT_THAT(tools, IsOk());
  ASSERT_EQ(tools->size(), 1u);
  EXPECT_EQ((*tools)[0].name(), "notion.search");
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_EQ(fake_.last_list_.context().trace_id(), "t");
  EXPECT_EQ(fake_.authorization_, "Bearer service-token");
  EXPECT_EQ(provider_->id(), "notion-mcp");
}

TEST_F(GrpcToolProviderTest, ListFailureKeepsOnlyTheCode) {
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.list_status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "db password is hunter2");
  }
  auto tools = provider_->ListTools(context_, Deadline());
  EXPECT_THAT(tools, StatusIs(absl::StatusCode::kUnavailable,
                              "ToolProvider.ListTools failed: UNAVAILABLE"));
}

TEST_F(GrpcToolProviderTest, ListWithUnknownFieldsIsRefused) {
  {
    absl::MutexLock lock(&fake_.mu_);
    ToolDefinition tool = Parse<ToolDefinition>(kNotionSearch);
    tool.GetReflection()->MutableUnknownFields(&tool)->AddVarint(99, 1);
    *fake_.list_response_.add_tools() = tool;
  }
  EXPECT_THAT(provider_->ListTools(context_, Deadline()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown fields")));
}

TEST_F(GrpcToolProviderTest, PastDeadlineIsDeadlineExceeded) {
  EXPECT_THAT(provider_->ListTools(context_, absl::Now() - absl::Seconds(1)),
              StatusIs(absl::StatusCode::kDeadlineExceeded,
                       "ToolProvider.ListTools failed: DEADLINE_EXCEEDED"));
}

TEST_F(GrpcToolProviderTest, InvokesWithADeadline) {
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.invoke_response_ = Parse<v1::InvokeResponse>(R"pb(
      result {
        status: TOOL_RESULT_STATUS_SUCCEEDED
        output { string_value: "found" }
        completed_at { seconds: 1 }
      }
    )pb");
  }
  v1::InvokeRequest request = Parse<v1::InvokeRequest>(R"pb(
    call_id: "call-1"
    tool: "notion.search"
    action: "search"
    resource { namespace: "notion" path: "Handbook" }
  )pb");
  auto result = provider_->Invoke(request, Deadline());
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->call_id(), "call-1");
  EXPECT_EQ(result->output().string_value(), "found");
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_TRUE(fake_.has_deadline_);
  EXPECT_EQ(fake_.last_invoke_.resource().path(0), "Handbook");
}

TEST_F(GrpcToolProviderTest, InvokeFailureKeepsOnlyTheCode) {
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.invoke_status_ = grpc::Status(grpc::StatusCode::NOT_FOUND, "stack trace: /srv/secret");
  }
  auto result = provider_->Invoke(v1::InvokeRequest(), Deadline());
  EXPECT_THAT(result,
              StatusIs(absl::StatusCode::kUnavailable, "ToolProvider.Invoke failed: NOT_FOUND"));
}

// The registry, TurnTools and the gRPC client together, as the turn layer will use them.
class HostProviderTurnTest : public GrpcToolProviderTest {
 protected:
  void SetUp() override {
    GrpcToolProviderTest::SetUp();
    v1::ToolRegistryConfig config;
    auto* entry = config.add_tools();
    *entry->mutable_definition() = Parse<ToolDefinition>(kNotionSearch);
    entry->mutable_requirement()->mutable_path_from_arguments()->set_path_argument("page");
    entry->mutable_requirement()->mutable_path_from_arguments()->set_mode(v1::PATH_MODE_APPEND);
    entry->mutable_provider()->mutable_grpc()->set_provider_id("notion-mcp");
    auto registry = tools::ToolRegistry::Create({config});
    ASSERT_THAT(registry, IsOk());
    registry_ = *std::move(registry);
    providers_.hosts["notion-mcp"] = provider_.get();
    absl::MutexLock lock(&fake_.mu_);
    *fake_.list_response_.add_tools() = Parse<ToolDefinition>(kNotionSearch);
  }

  std::unique_ptr<tools::ToolRegistry> registry_;
  tools::AttachedProviders providers_;
};

TEST_F(HostProviderTurnTest, ResolvesInvokesAndChecksTheResult) {
  auto turn = tools::TurnTools::Resolve(*registry_, providers_, context_, Deadline());
  ASSERT_THAT(turn, IsOk());
  const tools::Tool* tool = turn->Find("notion.search");
  ASSERT_NE(tool, nullptr);

  protocol::v1::ToolCall call = Parse<protocol::v1::ToolCall>(R"pb(
    id: "call-7"
    tool: "notion.search"
    trace_id: "t"
    arguments {
      fields {
        key: "page"
        value { string_value: "Handbook/Team" }
      }
    }
  )pb");
  auto parsed = tool->ParseArguments(call.arguments());
  ASSERT_THAT(parsed, IsOk());
  auto requirement = tool->ResolveRequirement(*parsed);
  ASSERT_THAT(requirement, IsOk());
  ASSERT_THAT(tool->CheckWithinCeiling(*requirement, context_.owner()), IsOk());
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.invoke_response_ = Parse<v1::InvokeResponse>(R"pb(
      result {
        status: TOOL_RESULT_STATUS_SUCCEEDED
        output { string_value: "hit" }
        completed_at { seconds: 1 }
      }
    )pb");
  }
  auto result = turn->Invoke(*turn->Find(call.tool()), call, *requirement, context_, Deadline());
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->output().string_value(), "hit");
  absl::MutexLock lock(&fake_.mu_);
  EXPECT_THAT(fake_.last_invoke_.resource().path(), ::testing::ElementsAre("Handbook", "Team"));
  EXPECT_EQ(fake_.last_invoke_.resource().owner().human_user_id(), "user-alice");
  EXPECT_EQ(fake_.list_calls_, 1);
}

TEST_F(HostProviderTurnTest, ProviderFailuresBecomeRefusals) {
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.list_status_ = grpc::Status(grpc::StatusCode::INTERNAL, "secret detail");
  }
  auto unavailable = tools::TurnTools::Resolve(*registry_, providers_, context_, Deadline());
  ASSERT_THAT(unavailable,
              StatusIs(absl::StatusCode::kFailedPrecondition, "tool_catalog_unavailable"));
  EXPECT_THAT(tools::RefusalDetail(unavailable.status()), Not(HasSubstr("secret")));
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.list_status_ = grpc::Status::OK;
    fake_.invoke_status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "secret detail");
  }
  auto turn = tools::TurnTools::Resolve(*registry_, providers_, context_, Deadline());
  ASSERT_THAT(turn, IsOk());
  protocol::v1::ToolCall call =
      Parse<protocol::v1::ToolCall>(R"pb(id: "c" tool: "notion.search")pb");
  auto failed = turn->Invoke(*turn->Find(call.tool()), call, turn->Find("notion.search")->ceiling(),
                             context_, Deadline());
  ASSERT_THAT(failed, StatusIs(absl::StatusCode::kFailedPrecondition, "tool_execution_failed"));
  protocol::v1::ProtocolError error = tools::RefusalError(failed.status());
  EXPECT_THAT(error.message(), Not(HasSubstr("secret")));
  EXPECT_THAT(tools::RefusalDetail(failed.status()), Not(HasSubstr("secret")));
  // A provider answering without a result, or with the wrong call id, is invalid_tool_result.
  {
    absl::MutexLock lock(&fake_.mu_);
    fake_.invoke_status_ = grpc::Status::OK;
    fake_.invoke_response_.Clear();
    fake_.echo_ids_ = false;
  }
  EXPECT_THAT(turn->Invoke(*turn->Find(call.tool()), call, turn->Find("notion.search")->ceiling(),
                           context_, Deadline()),
              StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_result"));
}

}  // namespace
}  // namespace sharedos::envelope::providers
