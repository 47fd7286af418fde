#include "common/status/grpc_status.h"

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

struct CodePair {
  absl::StatusCode absl_code;
  grpc::StatusCode grpc_code;
};

constexpr CodePair kAllCodes[] = {
    {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
    {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
    {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
    {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
    {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
    {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
    {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
    {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
    {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
    {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
    {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
    {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
    {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
    {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
    {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
    {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
};

TEST(GrpcStatusTest, EveryErrorCodeRoundTripsWithItsMessage) {
  for (const CodePair& pair : kAllCodes) {
    SCOPED_TRACE(absl::StatusCodeToString(pair.absl_code));
    const std::string message = "grant g-1 \xC3\xA9: " + absl::StatusCodeToString(pair.absl_code);
    const absl::Status original(pair.absl_code, message);

    const grpc::Status converted = ToGrpcStatus(original);
    EXPECT_EQ(converted.error_code(), pair.grpc_code);
    EXPECT_EQ(converted.error_message(), message);

    const absl::Status back = FromGrpcStatus(converted);
    EXPECT_EQ(back.code(), pair.absl_code);
    EXPECT_EQ(back.message(), message);
    EXPECT_EQ(back, original);
  }
}

TEST(GrpcStatusTest, GrpcToAbslForEveryErrorCode) {
  for (const CodePair& pair : kAllCodes) {
    const absl::Status converted = FromGrpcStatus(grpc::Status(pair.grpc_code, "m"));
    EXPECT_EQ(converted, absl::Status(pair.absl_code, "m"));
  }
}

TEST(GrpcStatusTest, OkRoundTrips) {
  const grpc::Status converted = ToGrpcStatus(absl::OkStatus());
  EXPECT_TRUE(converted.ok());
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::OK);
  EXPECT_EQ(converted.error_message(), "");
  EXPECT_EQ(FromGrpcStatus(grpc::Status::OK), absl::OkStatus());
}

TEST(GrpcStatusTest, EmptyMessageIsKept) {
  const grpc::Status converted = ToGrpcStatus(absl::NotFoundError(""));
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(converted.error_message(), "");
  EXPECT_EQ(FromGrpcStatus(converted), absl::NotFoundError(""));
}

TEST(GrpcStatusTest, NonCanonicalCodesBecomeUnknown) {
  const absl::Status odd(static_cast<absl::StatusCode>(42), "odd");
  const grpc::Status converted = ToGrpcStatus(odd);
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::UNKNOWN);
  EXPECT_EQ(converted.error_message(), "odd");

  EXPECT_EQ(FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(20), "x")),
            absl::UnknownError("x"));
  EXPECT_EQ(FromGrpcStatus(grpc::Status(grpc::StatusCode::DO_NOT_USE, "y")),
            absl::UnknownError("y"));
}

TEST(GrpcStatusTest, LongMessagesAreCutAtAUtf8BoundaryAndMarked) {
  const std::string at_limit(kMaxStatusMessageBytes, 'a');
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError(at_limit)).error_message(), at_limit);

  // 70,000 characters of two-byte sequences: the cut must not split one.
  std::string long_message;
  for (int i = 0; i < 35000; ++i) long_message += "\xc3\xa9";
  const grpc::Status converted = ToGrpcStatus(absl::NotFoundError(long_message));
  EXPECT_EQ(converted.error_code(), grpc::StatusCode::NOT_FOUND);
  const std::string& cut = converted.error_message();
  EXPECT_LE(cut.size(), kMaxStatusMessageBytes);
  EXPECT_TRUE(absl::EndsWith(cut, "\xe2\x80\xa6(cut)"));
  const std::string kept = cut.substr(0, cut.size() - std::string("\xe2\x80\xa6(cut)").size());
  ASSERT_EQ(kept.size() % 2, 0u);
  for (size_t i = 0; i < kept.size(); i += 2) ASSERT_EQ(kept.substr(i, 2), "\xc3\xa9");
}

}  // namespace
}  // namespace sharedos::common
