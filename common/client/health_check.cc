#include "common/client/health_check.h"

#include <future>
#include <vector>

#include "absl/status/status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"

namespace sharedos::common::client {
namespace {

// Bounds the service name put on the wire (a service name is a proto full name).
constexpr size_t kMaxServiceName = 127;

std::string ToBytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return "";
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

}  // namespace

const char* HealthStatusName(HealthStatus status) {
  switch (status) {
    case HealthStatus::kServing:
      return "SERVING";
    case HealthStatus::kNotServing:
      return "NOT_SERVING";
    case HealthStatus::kServiceUnknown:
      return "SERVICE_UNKNOWN";
    case HealthStatus::kUnknown:
      break;
  }
  return "UNKNOWN";
}

absl::StatusOr<HealthStatus> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& service, absl::Duration timeout) {
  if (service.size() > kMaxServiceName) {
    return absl::InvalidArgumentError("service: longer than 127 bytes");
  }
  // HealthCheckRequest{service}: field 1, length-delimited (one length byte: ≤ 127).
  std::string request_bytes;
  if (!service.empty()) {
    request_bytes.push_back('\x0a');
    request_bytes.push_back(static_cast<char>(service.size()));
    request_bytes.append(service);
  }
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::GenericStub stub(channel);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  // HealthCheckResponse{status}: empty (UNKNOWN = 0) or field 1 varint (one byte: 0..3).
  const std::string bytes = ToBytes(response);
  if (bytes.empty()) return HealthStatus::kUnknown;
  if (bytes.size() != 2 || bytes[0] != '\x08') {
    return absl::InternalError("grpc.health.v1 answer does not parse");
  }
  switch (bytes[1]) {
    case 1:
      return HealthStatus::kServing;
    case 2:
      return HealthStatus::kNotServing;
    case 3:
      return HealthStatus::kServiceUnknown;
    default:
      return HealthStatus::kUnknown;
  }
}

}  // namespace sharedos::common::client
