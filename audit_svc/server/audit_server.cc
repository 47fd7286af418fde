#include "audit_svc/server/audit_server.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "audit_svc/client/audit_client.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/client/log_audit_writer.h"
#include "common/http/http_client.h"
#include "common/status/status_macros.h"

namespace sharedos::audit::server {
namespace {

// A LogAuditWriter that owns its fallback (the outbox client).
class OwningLogAuditWriter final : public client::AuditWriter {
 public:
  OwningLogAuditWriter(core::AuditLog& log, std::unique_ptr<client::AuditWriter> fallback,
                       std::string writer)
      : fallback_(std::move(fallback)), writer_(log, *fallback_, std::move(writer)) {}

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

// An outbox's delivery into the log of this process, as `writer`.
class LogAppendTarget final : public client::AppendTarget {
 public:
  LogAppendTarget(core::AuditLog& log, std::string writer)
      : log_(log), writer_(std::move(writer)) {}
  absl::Status Append(const v1::AppendRequest& request, absl::Time) override {
    return log_.Append(request, writer_).status();
  }

 private:
  core::AuditLog& log_;
  const std::string writer_;
};

core::AuditLog::Options LogOptions(const AuditServerDeps& deps) {
  core::AuditLog::Options options;
  options.metrics = deps.metrics;
  return options;
}

// True when `path` is `dir` or lies under it (both made absolute, symbolic links resolved as
// far as they exist).
bool IsInside(const std::string& path, const std::string& dir) {
  std::error_code error;
  const std::filesystem::path p =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path), error);
  const std::filesystem::path d =
      std::filesystem::weakly_canonical(std::filesystem::absolute(dir), error);
  const std::filesystem::path relative = p.lexically_relative(d);
  return !relative.empty() && *relative.begin() != "..";
}

// The checkpoint key of `options`, after its flags are checked: a key file and a checkpoint file
// of their own, outside the data directory (the SQLite log's directory: whoever can rewrite the
// log must not find the key, nor the exported checkpoints, beside it). Without a key file, the
// SQLite log's default key beside its data directory; a PostgreSQL log has none. `notices`: where
// the key and its public half are, for the start-up notices.
absl::StatusOr<std::unique_ptr<core::CheckpointKey>> ReadCheckpointKey(
    const AuditServerOptions& options, storage::AuditStoreBackend backend,
    std::vector<std::string>& notices) {
  if (options.checkpoint_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--checkpoint_interval: negative");
  }
  const std::string data_dir =
      std::filesystem::absolute(options.db_path).lexically_normal().parent_path().string();
  if (backend == storage::AuditStoreBackend::kSqlite) {
    for (const auto& [path, flag] : {std::pair<const std::string&, const char*>{
                                         options.checkpoint_key_file, "--checkpoint_key_file"},
                                     {options.checkpoint_file, "--checkpoint_file"}}) {
      if (!path.empty() && IsInside(path, data_dir)) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": inside the data directory ", data_dir,
            " (whoever can rewrite the log could read or rewrite it there); keep it apart"));
      }
    }
  }
  if (!options.checkpoint_key_file.empty()) {
    notices.push_back(absl::StrCat("audit checkpoint key ", options.checkpoint_key_file));
    return core::CheckpointKey::ReadPrivateKeyFile(options.checkpoint_key_file,
                                                   "--checkpoint_key_file");
  }
  if (backend != storage::AuditStoreBackend::kSqlite) {
    return absl::InvalidArgumentError(
        "--checkpoint_key_file: required with a PostgreSQL log (no data directory to keep a "
        "default key beside; give every replica the same key, kept off the database host: "
        "openssl genpkey -algorithm ed25519 -out checkpoint.key)");
  }
  ASSIGN_OR_RETURN(core::DefaultCheckpointKey key, core::LoadOrMintDefaultCheckpointKey(data_dir));
  notices.push_back(absl::StrCat("audit checkpoint key ", key.key_file,
                                 key.minted ? " (new: minted on this first start)" : ""));
  notices.push_back(absl::StrCat("audit checkpoint public key (PEM) ", key.public_key_file,
                                 " (keep a copy apart: sharedosctl audit verify "
                                 "--checkpoints=<exported log> --public_key=<the copy>)"));
  return std::move(key.key);
}

// The sender of --checkpoint_witness (null without it), over the one HTTP client.
absl::StatusOr<std::unique_ptr<core::WitnessSender>> NewWitnessSender(
    const AuditServerOptions& options, common::metrics::Metrics* metrics) {
  if (options.checkpoint_witness.empty()) return nullptr;
  common::http::HttpClientOptions http;
  http.timeout = options.witness_timeout;
  http.ca_file = options.witness_client_tls.ca_file;
  http.client_cert_file = options.witness_client_tls.client_cert_file;
  http.client_key_file = options.witness_client_tls.client_key_file;
  core::WitnessSender::Options sender;
  sender.url = options.checkpoint_witness;
  sender.metrics = metrics;
  return core::WitnessSender::Create(std::make_unique<common::http::HttplibClient>(http),
                                     std::move(sender));
}

// The signers' public keys of --witness_public_key.
absl::StatusOr<std::vector<std::unique_ptr<core::CheckpointKey>>> ReadWitnessKeys(
    const AuditServerOptions& options) {
  std::vector<std::unique_ptr<core::CheckpointKey>> keys;
  for (const std::string& path : options.witness_public_key_files) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      return absl::InvalidArgumentError(absl::StrCat("--witness_public_key: cannot read ", path));
    std::string pem(core::kMaxCheckpointKeyFileBytes + 1, '\0');
    in.read(pem.data(), static_cast<std::streamsize>(pem.size()));
    pem.resize(static_cast<size_t>(in.gcount()));
    ASSIGN_OR_RETURN(
        std::unique_ptr<core::CheckpointKey> key,
        core::CheckpointKey::ParsePublicKeyPem(pem, absl::StrCat("--witness_public_key ", path)));
    keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace

AuditServer::AuditServer(std::unique_ptr<storage::AuditStore> store, const AuditServerDeps& deps)
    : authenticator_(deps.authenticator),
      clock_(deps.clock),
      metrics_(deps.metrics),
      log_(std::move(store), deps.clock, LogOptions(deps)),
      service_(std::make_unique<AuditService>(log_, deps.authenticator)) {}

absl::Status AuditServer::EnableCheckpoints(std::unique_ptr<core::CheckpointKey> key,
                                            core::Checkpointer::Options options) {
  if (witness_sender_ != nullptr) {
    core::WitnessSender* sender = witness_sender_.get();
    options.on_signed = [sender](const v1::SignedCheckpoint& checkpoint) {
      sender->Offer(checkpoint);
    };
  }
  ASSIGN_OR_RETURN(checkpointer_,
                   core::Checkpointer::Create(log_, std::move(key), clock_, std::move(options)));
  service_ = std::make_unique<AuditService>(log_, authenticator_, checkpointer_.get());
  return absl::OkStatus();
}

absl::Status AuditServer::ServeWitness(std::vector<std::unique_ptr<core::CheckpointKey>> keys,
                                       const WitnessEndpointOptions& options) {
  ASSIGN_OR_RETURN(witness_, core::Witness::Create(log_, std::move(keys), clock_, metrics_));
  ASSIGN_OR_RETURN(witness_endpoint_, WitnessEndpoint::Start(*witness_, options));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<client::AuditWriter>> AuditServer::NewInProcessWriter(
    const std::string& writer, const std::string& outbox_path,
    const client::OutboxReporting& reporting) {
  client::AuditClientOptions options;
  options.mode = client::PreEffectMode::kRemote;
  options.outbox_path = outbox_path;
  options.metrics = reporting.metrics;
  options.writer = reporting.writer;
  ASSIGN_OR_RETURN(std::unique_ptr<client::AuditClient> outbox,
                   client::AuditClient::Create(std::make_unique<LogAppendTarget>(log_, writer),
                                               std::move(options)));
  return std::make_unique<OwningLogAuditWriter>(log_, std::move(outbox), writer);
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
  // The key is read (and the data directory checked) before the log is opened.
  std::vector<std::string> notices;
  ASSIGN_OR_RETURN(std::unique_ptr<core::CheckpointKey> key,
                   ReadCheckpointKey(options, backend, notices));
  ASSIGN_OR_RETURN(auto store, storage::OpenAuditStore(options.db_path, store_options));
  ASSIGN_OR_RETURN(std::vector<std::unique_ptr<core::CheckpointKey>> witness_keys,
                   ReadWitnessKeys(options));
  ASSIGN_OR_RETURN(std::unique_ptr<core::WitnessSender> sender,
                   NewWitnessSender(options, deps.metrics));
  auto server = std::make_unique<AuditServer>(std::move(store), deps);
  if (sender != nullptr) {
    notices.push_back(absl::StrCat("audit checkpoints also posted to the witness at ",
                                   sender->host(),
                                   " (a witness that is down is a warning line "
                                   "audit.witness.unreachable; the log is still signed locally)"));
    server->ShipCheckpointsTo(std::move(sender));
  }
  const std::string key_id = key->key_id();
  core::Checkpointer::Options checkpointer;
  checkpointer.export_file = options.checkpoint_file;
  checkpointer.interval = options.checkpoint_interval;
  checkpointer.binary_name = options.binary_name;
  RETURN_IF_ERROR(server->EnableCheckpoints(std::move(key), std::move(checkpointer)));
  if (!witness_keys.empty()) {
    std::vector<std::string> ids;
    for (const auto& witness_key : witness_keys) ids.push_back(witness_key->key_id());
    RETURN_IF_ERROR(server->ServeWitness(
        std::move(witness_keys),
        WitnessEndpointOptions{options.witness_host, options.witness_port, options.witness_tls}));
    notices.push_back(absl::StrCat("witness: accepting checkpoints signed by key ",
                                   absl::StrJoin(ids, ", "), " at ",
                                   server->witness_endpoint()->url()));
  }
  for (const std::string& notice : notices) common::server::Notice(options.binary_name, notice);
  common::server::Notice(
      options.binary_name,
      absl::StrCat("audit checkpoints signed with key ", key_id,
                   options.checkpoint_interval > absl::ZeroDuration()
                       ? absl::StrCat(" every ", absl::FormatDuration(options.checkpoint_interval),
                                      " while the log grows")
                       : " on demand only",
                   "; each logged as event ", core::kCheckpointLogEvent,
                   options.checkpoint_file.empty() ? "" : " and exported to ",
                   options.checkpoint_file));
  return server;
}

}  // namespace sharedos::audit::server
