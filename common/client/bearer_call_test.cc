#include "common/client/bearer_call.h"

#include <memory>
#include <string>

#include "common/server/probe_server.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::Eq;

// The probe echoes the call's authorization metadata, or answers `answer` when it is not OK.
class BearerCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    probe_ = std::make_unique<server::testing::ProbeServer>(
        [this](grpc::GenericCallbackServerContext& context) {
          auto it = context.client_metadata().find("authorization");
          if (it != context.client_metadata().end()) {
            context.AddTrailingMetadata("seen", std::string(it->second.data(), it->second.size()));
          }
          return answer_;
        });
  }

  // A call of the probe through BearerCall: what the probe saw, as the response.
  absl::StatusOr<std::string> Call(const std::string& authorization) {
    return BearerCall<std::string>(authorization, absl::Seconds(10),
                                   [&](grpc::ClientContext* context, std::string* response) {
                                     return probe_->Call(context, "seen", response);
                                   });
  }

  grpc::Status answer_ = grpc::Status::OK;
  std::unique_ptr<server::testing::ProbeServer> probe_;
};

TEST_F(BearerCallTest, TheCallCarriesTheCredential) {
  EXPECT_THAT(Call("Bearer token-1"), IsOkAndHolds(Eq("Bearer token-1")));
}

TEST_F(BearerCallTest, TheCallsStatusConvertedWithItsMessage) {
  answer_ = grpc::Status(grpc::StatusCode::NOT_FOUND, "turn turn-9 not found");
  EXPECT_THAT(Call("Bearer token-1"),
              StatusIs(absl::StatusCode::kNotFound, "turn turn-9 not found"));
}

TEST(BearerCallContextTest, SetsADeadlineTimeoutFromNow) {
  std::string authorization;
  absl::Duration left;
  auto result = BearerCall<int>("Bearer token-2", absl::Seconds(5),
                                [&](grpc::ClientContext* context, int* response) {
                                  left = absl::FromChrono(context->deadline()) - absl::Now();
                                  *response = 7;
                                  return grpc::Status::OK;
                                });
  EXPECT_THAT(result, IsOkAndHolds(Eq(7)));
  EXPECT_GT(left, absl::Seconds(4));
  EXPECT_LE(left, absl::Seconds(5) + absl::Milliseconds(100));  // the clocks' rounding
}

}  // namespace
}  // namespace sharedos::common
