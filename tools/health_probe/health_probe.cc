#include "tools/health_probe/health_probe.h"

#include <chrono>
#include <future>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/wrappers.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace sharedos::health_probe {
namespace {

constexpr size_t kMaxValueBytes = 4096;
constexpr absl::Duration kMaxTimeout = absl::Seconds(60);

// grpc.health.v1's messages have the wire format of the protobuf wrappers: HealthCheckRequest
// is `string service = 1` (a StringValue), HealthCheckResponse `ServingStatus status = 1` (an
// enum, encoded as an Int32Value). The probe needs no generated health stubs.
using HealthStub =
    grpc::TemplatedGenericStub<google::protobuf::StringValue, google::protobuf::Int32Value>;
constexpr char kCheckMethod[] = "/grpc.health.v1.Health/Check";

std::string StatusName(int status) {
  switch (status) {
    case 0:
      return "UNKNOWN";
    case 1:
      return "SERVING";
    case 2:
      return "NOT_SERVING";
    case 3:
      return "SERVICE_UNKNOWN";
    default:
      return absl::StrCat("status ", status);
  }
}

absl::Status Apply(const std::string& name, const std::string& value, Options& options) {
  if (name == "timeout") {
    absl::Duration timeout;
    if (!absl::ParseDuration(value, &timeout) || timeout <= absl::ZeroDuration() ||
        timeout > kMaxTimeout) {
      return absl::InvalidArgumentError("--timeout: a duration in (0, 60s] (e.g. 5s)");
    }
    options.timeout = timeout;
    return absl::OkStatus();
  }
  if (name == "mode") {
    if (value != "ready" && value != "live") {
      return absl::InvalidArgumentError("--mode: ready or live");
    }
    options.live = value == "live";
    return absl::OkStatus();
  }
  const std::map<std::string, std::string*> strings = {
      {"target", &options.target},
      {"service", &options.service},
      {"tls_ca", &options.tls.ca_file},
      {"tls_client_cert", &options.tls.client_cert_file},
      {"tls_client_key", &options.tls.client_key_file},
      {"tls_server_name", &options.tls.server_name},
  };
  auto field = strings.find(name);
  if (field == strings.end()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name.substr(0, 64), ": unknown flag"));
  }
  *field->second = value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> ParseArgs(const std::vector<std::string>& args) {
  Options options;
  for (const std::string& arg : args) {
    const size_t equals = arg.find('=');
    if (!absl::StartsWith(arg, "--") || equals == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(arg.substr(0, 64), ": expected --flag=value"));
    }
    const std::string name = arg.substr(2, equals - 2);
    const std::string value = arg.substr(equals + 1);
    if (value.empty() || value.size() > kMaxValueBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name.substr(0, 64), ": must be 1 to 4096 bytes"));
    }
    if (absl::Status applied = Apply(name, value, options); !applied.ok()) return applied;
  }
  if (options.target.empty()) return absl::InvalidArgumentError("--target: required");
  return options;
}

absl::StatusOr<std::string> Check(const Options& options) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      common::client::NewChannel(options.target, options.tls, "--target");
  if (!channel.ok()) return channel.status();
  HealthStub stub(*channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMilliseconds(options.timeout));
  google::protobuf::StringValue request;
  request.set_value(options.service);
  google::protobuf::Int32Value response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, kCheckMethod, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  const grpc::Status status = done.get_future().get();
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  return StatusName(response.value());
}

bool Healthy(const Options& options, const absl::StatusOr<std::string>& status) {
  if (!status.ok()) return false;
  return options.live || *status == "SERVING";
}

}  // namespace sharedos::health_probe
