#include "audit_svc/server/audit_server.h"

#include <utility>

#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/client/log_audit_writer.h"
#include "common/status/status_macros.h"

namespace sharedos::audit::server {
namespace {

// A LogAuditWriter that owns its fallback (the outbox client).
class OwningLogAuditWriter final : public client::AuditWriter {
 public:
  OwningLogAuditWriter(core::AuditLog& log, std::unique_ptr<client::AuditWriter> fallback)
      : fallback_(std::move(fallback)), writer_(log, *fallback_) {}

  absl::Status RecordPreEffect(protocol::v1::AuditEvent event) override {
    return writer_.RecordPreEffect(std::move(event));
  }
  absl::Status RecordPostEffect(protocol::v1::AuditEvent event) override {
    return writer_.RecordPostEffect(std::move(event));
  }
  absl::Status RecordControlPlane(v1::ControlPlaneEvent event) override {
    return writer_.RecordControlPlane(std::move(event));
  }

 private:
  const std::unique_ptr<client::AuditWriter> fallback_;
  client::LogAuditWriter writer_;
};

core::AuditLog::Options LogOptions(const AuditServerDeps& deps) {
  core::AuditLog::Options options;
  options.metrics = deps.metrics;
  return options;
}

}  // namespace

AuditServer::AuditServer(std::unique_ptr<storage::AuditStore> store, const AuditServerDeps& deps)
    : authenticator_(deps.authenticator),
      log_(std::move(store), deps.clock, LogOptions(deps)),
      service_(log_, deps.authenticator) {}

absl::StatusOr<std::unique_ptr<client::AuditWriter>> AuditServer::NewInProcessWriter(
    std::shared_ptr<grpc::Channel> channel, const std::string& token_file,
    const std::string& outbox_path, const client::OutboxReporting& reporting) {
  ASSIGN_OR_RETURN(auto outbox,
                   client::NewAuditWriterOverChannel({"remote", "", token_file, outbox_path, {}},
                                                     std::move(channel), true, reporting));
  return std::make_unique<OwningLogAuditWriter>(log_, std::move(outbox));
}

absl::StatusOr<std::pair<int64_t, std::string>> AuditServer::Head() {
  const int64_t sequence = log_.HeadSequence();
  if (sequence == 0) return std::pair<int64_t, std::string>{0, ""};
  ASSIGN_OR_RETURN(auto records,
                   log_.ReadAfter(sharedos::audit::v1::AuditFilter(), sequence - 1, 1));
  if (records.empty()) return std::pair<int64_t, std::string>{sequence, ""};
  return std::pair<int64_t, std::string>{records.front().sequence(), records.front().hash()};
}

absl::StatusOr<storage::SqliteAuditStore::Durability> ParseAuditDurability(
    absl::string_view value) {
  ASSIGN_OR_RETURN(const bool full, common::server::IsFullDurability("durability", value));
  return full ? storage::SqliteAuditStore::Durability::kFull
              : storage::SqliteAuditStore::Durability::kNormal;
}

absl::StatusOr<std::unique_ptr<AuditServer>> BuildAuditServer(const AuditServerDeps& deps,
                                                              const AuditServerOptions& options) {
  ASSIGN_OR_RETURN(const storage::AuditStoreBackend backend,
                   storage::AuditStoreBackendFor(options.db_path));
  if (backend == storage::AuditStoreBackend::kSqlite) {
    // The upgrade runs inside Open, once; any error is Open's to report.
    absl::StatusOr<std::string> upgrade =
        storage::SqliteAuditStore::PendingUpgrade(options.db_path);
    if (upgrade.ok() && !upgrade->empty()) common::server::Notice(options.binary_name, *upgrade);
  }
  storage::AuditStoreOptions store_options;
  store_options.durability = options.durability;
  ASSIGN_OR_RETURN(auto store, storage::OpenAuditStore(options.db_path, store_options));
  return std::make_unique<AuditServer>(std::move(store), deps);
}

}  // namespace sharedos::audit::server
