#include "audit_svc/client/audit_writer_factory.h"

#include <utility>

#include "absl/status/status.h"
#include "audit_svc/client/audit_client.h"
#include "common/server/secret_file.h"
#include "common/server/service_main.h"
#include "common/status/grpc_status.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::audit::client {
namespace {

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("--audit_token_file: required");
  absl::StatusOr<std::string> token = common::server::ReadSecretFile(
      path, common::server::SecretPart::kFirstLine, "--audit_token_file");
  if (token.ok() && token->empty()) {
    return absl::InvalidArgumentError("--audit_token_file: empty token");
  }
  return token;
}

}  // namespace

absl::StatusOr<bool> OutboxFsyncFromFlag(const std::string& value) {
  if (value.empty()) return true;
  return common::server::IsFullDurability("audit_outbox_durability", value);
}

absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriterOverChannel(
    const AuditWriterConfig& config, std::shared_ptr<grpc::Channel> channel, bool outbox_fsync,
    const OutboxReporting& reporting) {
  if (config.mode == "discard") return std::unique_ptr<AuditWriter>(new DiscardAuditWriter());
  AuditClientOptions options;
  if (config.mode == "remote") {
    options.mode = PreEffectMode::kRemote;
  } else if (config.mode == "local") {
    options.mode = PreEffectMode::kLocal;
  } else if (config.mode.empty()) {
    return absl::InvalidArgumentError(
        "--audit: required (remote or local with --audit_target, or discard to run without an "
        "audit log)");
  } else {
    return absl::InvalidArgumentError("--audit: must be remote, local or discard");
  }
  if (config.outbox_path.empty()) return absl::InvalidArgumentError("--audit_outbox: required");
  options.outbox_fsync = outbox_fsync;
  absl::StatusOr<std::string> token = ReadToken(config.token_file);
  if (!token.ok()) return token.status();
  options.token = *std::move(token);
  options.outbox_path = config.outbox_path;
  options.metrics = reporting.metrics;
  options.writer = reporting.writer;
  absl::StatusOr<std::unique_ptr<AuditClient>> client =
      AuditClient::Create(sharedos::audit::v1::AuditLog::NewStub(std::move(channel)), options);
  if (!client.ok()) return client.status();
  return std::unique_ptr<AuditWriter>(*std::move(client));
}

absl::StatusOr<std::unique_ptr<AuditWriter>> NewAuditWriter(const AuditWriterConfig& config,
                                                            bool outbox_fsync,
                                                            const OutboxReporting& reporting) {
  if (config.mode != "discard" && !config.mode.empty() && config.target.empty()) {
    return absl::InvalidArgumentError("--audit_target: required with --audit=" + config.mode);
  }
  std::shared_ptr<grpc::Channel> channel;
  if (config.mode != "discard" && !config.mode.empty()) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> made =
        common::client::NewChannel(config.target, config.tls, "--audit_target",
                                   absl::ZeroDuration(), common::client::Replicas::kFirstUp);
    if (!made.ok()) return made.status();
    channel = *std::move(made);
  }
  return NewAuditWriterOverChannel(config, std::move(channel), outbox_fsync, reporting);
}

absl::StatusOr<AuditQueryFn> NewAuditQuery(const AuditWriterConfig& config) {
  if (config.mode == "discard") return AuditQueryFn();
  absl::StatusOr<std::string> token = ReadToken(config.token_file);
  if (!token.ok()) return token.status();
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      common::client::NewChannel(config.target, config.tls, "--audit_target");
  if (!channel.ok()) return channel.status();
  std::shared_ptr<v1::AuditLog::StubInterface> stub = v1::AuditLog::NewStub(*std::move(channel));
  return AuditQueryFn([stub, token = *std::move(token)](
                          const v1::QueryRequest& request) -> absl::StatusOr<v1::QueryResponse> {
    v1::QueryResponse response;
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    const absl::Status status = common::FromGrpcStatus(stub->Query(&context, request, &response));
    if (!status.ok()) return status;
    return response;
  });
}

}  // namespace sharedos::audit::client
