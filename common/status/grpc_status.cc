#include "common/status/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace sharedos::common {
namespace {

// Every canonical code has the same numeric value in both libraries, which
// makes the conversion a cast. These assertions keep that true across upgrades.
#define SHAREDOS_ASSERT_SAME_CODE(absl_code, grpc_code)            \
  static_assert(static_cast<int>(absl::StatusCode::absl_code) ==   \
                    static_cast<int>(grpc::StatusCode::grpc_code), \
                #absl_code " != " #grpc_code)

SHAREDOS_ASSERT_SAME_CODE(kOk, OK);
SHAREDOS_ASSERT_SAME_CODE(kCancelled, CANCELLED);
SHAREDOS_ASSERT_SAME_CODE(kUnknown, UNKNOWN);
SHAREDOS_ASSERT_SAME_CODE(kInvalidArgument, INVALID_ARGUMENT);
SHAREDOS_ASSERT_SAME_CODE(kDeadlineExceeded, DEADLINE_EXCEEDED);
SHAREDOS_ASSERT_SAME_CODE(kNotFound, NOT_FOUND);
SHAREDOS_ASSERT_SAME_CODE(kAlreadyExists, ALREADY_EXISTS);
SHAREDOS_ASSERT_SAME_CODE(kPermissionDenied, PERMISSION_DENIED);
SHAREDOS_ASSERT_SAME_CODE(kResourceExhausted, RESOURCE_EXHAUSTED);
SHAREDOS_ASSERT_SAME_CODE(kFailedPrecondition, FAILED_PRECONDITION);
SHAREDOS_ASSERT_SAME_CODE(kAborted, ABORTED);
SHAREDOS_ASSERT_SAME_CODE(kOutOfRange, OUT_OF_RANGE);
SHAREDOS_ASSERT_SAME_CODE(kUnimplemented, UNIMPLEMENTED);
SHAREDOS_ASSERT_SAME_CODE(kInternal, INTERNAL);
SHAREDOS_ASSERT_SAME_CODE(kUnavailable, UNAVAILABLE);
SHAREDOS_ASSERT_SAME_CODE(kDataLoss, DATA_LOSS);
SHAREDOS_ASSERT_SAME_CODE(kUnauthenticated, UNAUTHENTICATED);

#undef SHAREDOS_ASSERT_SAME_CODE

constexpr int kMinCanonicalCode = static_cast<int>(absl::StatusCode::kOk);
constexpr int kMaxCanonicalCode = static_cast<int>(absl::StatusCode::kUnauthenticated);

// `message` cut to at most kMaxStatusMessageBytes, never inside a UTF-8 sequence,
// ending in "…(cut)" when cut.
std::string BoundedMessage(absl::string_view message) {
  if (message.size() <= kMaxStatusMessageBytes) return std::string(message);
  constexpr absl::string_view kMark = "\xe2\x80\xa6(cut)";
  size_t end = kMaxStatusMessageBytes - kMark.size();
  // Back up over continuation bytes (10xxxxxx) to the start of a sequence.
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(message.substr(0, end), kMark);
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  int code = static_cast<int>(status.code());
  if (code < kMinCanonicalCode || code > kMaxCanonicalCode) {
    code = static_cast<int>(grpc::StatusCode::UNKNOWN);
  }
  return grpc::Status(static_cast<grpc::StatusCode>(code), BoundedMessage(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  int code = static_cast<int>(status.error_code());
  if (code < kMinCanonicalCode || code > kMaxCanonicalCode) {
    code = static_cast<int>(absl::StatusCode::kUnknown);
  }
  return absl::Status(static_cast<absl::StatusCode>(code), status.error_message());
}

}  // namespace sharedos::common
