// audit_svc built from its options: the log (a SQLite file or a PostgreSQL database, by --db),
// the AuditLog core over it and the gRPC adapter, owned together. audit_main.cc and sharedosd both
// call BuildAuditServer; sharedosd also gives its in-process writers a direct path into the same
// log (NewInProcessWriter). Thread-safe (its parts are).

#ifndef SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVER_H_
#define SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "audit_svc/client/audit_writer_factory.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/core/witness.h"
#include "audit_svc/core/witness_sender.h"
#include "audit_svc/server/audit_service.h"
#include "audit_svc/server/witness_endpoint.h"
#include "audit_svc/storage/audit_store.h"
#include "audit_svc/storage/open_audit_store.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/client/channel.h"
#include "common/server/auth.h"
#include "common/server/service_main.h"
#include "common/server/tls.h"
#include "common/time/clock.h"
#include "grpcpp/channel.h"

namespace sharedos::audit::server {

struct AuditServerOptions {
  // Where the log is (storage/open_audit_store.h): a SQLite file, or a postgres:// or
  // postgresql:// URI of a database that several audit_svc replicas may share.
  std::string db_path = "audit.db";
  // Either backend's commit durability (see storage::AuditStoreOptions).
  storage::SqliteAuditStore::Durability durability = storage::SqliteAuditStore::Durability::kFull;
  // Start-up notices are printed as "<binary_name>: <notice>" on stderr: a schema upgrade of an
  // existing log is announced before it runs.
  std::string binary_name = "audit_svc";
  // Signed checkpoints (docs/adr/0010, 0019): the Ed25519 private key (PEM); empty: the
  // default key of a SQLite log, "<data directory>.keys/checkpoint.key", minted on first start
  // (core::LoadOrMintDefaultCheckpointKey); a PostgreSQL log has no default (refused).
  std::string checkpoint_key_file;
  // Where checkpoints are appended (JSON lines); empty: not to a file. Every checkpoint is also
  // an audit.checkpoint line of the process log.
  std::string checkpoint_file;
  // Zero: on demand only.
  absl::Duration checkpoint_interval = core::kDefaultCheckpointInterval;
  // --checkpoint_witness: each checkpoint is also POSTed to this http(s) URL (a witness,
  // docs/adr/0023); empty: none. https verifies the witness against witness_client_tls.ca_file
  // (--tls_ca; empty: the system's CAs) and presents its client certificate when one is set.
  std::string checkpoint_witness;
  common::client::ChannelTls witness_client_tls;
  // Each POST's connect, read and write time-out.
  absl::Duration witness_timeout = absl::Seconds(5);
  // --witness_public_key: PEM public keys of the signers whose checkpoints this log witnesses;
  // empty: not a witness. The endpoint listens on witness_host:witness_port (0: a free port,
  // printed), HTTPS with witness_tls (the service's own --tls_cert/--tls_key) when it is set.
  std::vector<std::string> witness_public_key_files;
  std::string witness_host = "127.0.0.1";
  int witness_port = 0;
  common::server::ServerTls witness_tls;
};

// What the server borrows; each must outlive it.
struct AuditServerDeps {
  const common::server::Authenticator& authenticator;
  const common::Clock& clock;
  // The log's metrics (core::AuditLog::Options::metrics); null: none.
  common::metrics::Metrics* metrics = nullptr;
};

class AuditServer final : public common::server::Servable {
 public:
  AuditServer(std::unique_ptr<storage::AuditStore> store, const AuditServerDeps& deps);

  std::vector<grpc::Service*> services() override { return {service_.get()}; }

  // Another adapter over the same log, for a second server (sharedosd's public listener).
  std::unique_ptr<grpc::Service> NewService() {
    return std::make_unique<AuditService>(log_, authenticator_, checkpointer_.get());
  }

  // Signs checkpoints of this log with `key` (Checkpointer). Called once, before serving.
  // Errors: those of core::Checkpointer::Create.
  absl::Status EnableCheckpoints(std::unique_ptr<core::CheckpointKey> key,
                                 core::Checkpointer::Options options);
  // Ships every checkpoint to a witness with `sender`; before EnableCheckpoints.
  void ShipCheckpointsTo(std::unique_ptr<core::WitnessSender> sender) {
    witness_sender_ = std::move(sender);
  }
  core::WitnessSender* witness_sender() { return witness_sender_.get(); }

  // Makes this log a witness of the signers `keys` (docs/adr/0023) and serves its endpoint.
  // Errors: those of core::Witness::Create and WitnessEndpoint::Start.
  absl::Status ServeWitness(std::vector<std::unique_ptr<core::CheckpointKey>> keys,
                            const WitnessEndpointOptions& options);
  // Null unless ServeWitness.
  const WitnessEndpoint* witness_endpoint() const { return witness_endpoint_.get(); }

  // The writer of service `writer` ("service:grantstore", …) in this process: it appends to this
  // log directly (a pre-effect record is committed before it is answered); a post-effect record
  // the log cannot take waits in the outbox at `outbox_path` and is delivered into the log from
  // there — no channel, no credential: each record stamped with `writer` and held to its record
  // types (writer_policy.h) as over gRPC. The outbox reports its gauges as `reporting` says.
  // Errors: those of audit::client::AuditClient::Create (the outbox cannot be opened).
  absl::StatusOr<std::unique_ptr<client::AuditWriter>> NewInProcessWriter(
      const std::string& writer, const std::string& outbox_path,
      const client::OutboxReporting& reporting = client::OutboxReporting());

  // The chain's head: its sequence (0: empty) and its record's hash ("" when empty), for
  // sharedos.status.v1 (common/server/status_service.h). Errors: UNAVAILABLE (storage).
  absl::StatusOr<std::pair<int64_t, std::string>> Head();

  // AuditLog.Query in this process, unauthenticated (the caller is in the process): how sharedosd's
  // grant store reads its control-plane records back (docs/adr/0021).
  absl::StatusOr<v1::QueryResponse> Query(const v1::QueryRequest& request) {
    return log_.Query(request);
  }

 private:
  const common::server::Authenticator& authenticator_;
  const common::Clock& clock_;
  common::metrics::Metrics* const metrics_;
  core::AuditLog log_;
  // Declared before the checkpointer, which hands it every checkpoint: destroyed after it.
  std::unique_ptr<core::WitnessSender> witness_sender_;
  std::unique_ptr<core::Checkpointer> checkpointer_;
  // The witness and its endpoint (destroyed first: no request reaches a destroyed witness).
  std::unique_ptr<core::Witness> witness_;
  std::unique_ptr<WitnessEndpoint> witness_endpoint_;
  // Replaced by EnableCheckpoints (before serving) with one that signs.
  std::unique_ptr<AuditService> service_;
};

// --durability: "full" or "normal". Errors: INVALID_ARGUMENT "--durability: must be full or
// normal".
absl::StatusOr<storage::SqliteAuditStore::Durability> ParseAuditDurability(absl::string_view value);

// Prints where the checkpoint key is, its public key file and the interval (a notice on stderr).
// Errors: INVALID_ARGUMENT (checkpoint options: a negative interval; the key or checkpoint file
// inside the data directory — the SQLite log's directory — naming the flag; a key that is not an
// Ed25519 private key; no --checkpoint_key_file with a PostgreSQL log); FAILED_PRECONDITION (the
// default key cannot be minted or read, or is open to group or others); UNAVAILABLE (the checkpoint
// file cannot be opened for appending); those of storage::OpenAuditStore (a URI of another scheme;
// the file or database cannot be opened, or its schema is newer than this binary's, or its
// upgrade fails).
absl::StatusOr<std::unique_ptr<AuditServer>> BuildAuditServer(const AuditServerDeps& deps,
                                                              const AuditServerOptions& options);

}  // namespace sharedos::audit::server

#endif  // SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVER_H_
