#include "tools/sharedosctl/backup_command.h"

#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "audit_svc/core/checkpoint.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "common/text/terminal_safe.h"
#include "grantstore_svc/client/operator_render.h"
#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/requests.h"

namespace sharedos::sharedosctl {
namespace {

namespace av1 = ::sharedos::audit::v1;
namespace fs = std::filesystem;
using common::text::TerminalSafe;

// How long the copy waits for the grant store's write lock (a mutation in flight).
constexpr int kBusyTimeoutMs = 10000;

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Db = std::unique_ptr<sqlite3, CloseDb>;

absl::Status SqliteError(sqlite3* db, const std::string& what) {
  return absl::UnavailableError(
      absl::StrCat(what, ": ", db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

absl::StatusOr<Db> Open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) return SqliteError(raw, absl::StrCat("cannot open ", path));
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  return db;
}

// Copies the whole of `source` (main) into a new database file at `to`, in one step: one read
// transaction, so the copy is one consistent state.
absl::Status CopyDatabase(sqlite3* source, const std::string& to) {
  ASSIGN_OR_RETURN(Db dest, Open(to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  sqlite3_backup* backup = sqlite3_backup_init(dest.get(), "main", source, "main");
  if (backup == nullptr) return SqliteError(dest.get(), absl::StrCat("backup to ", to));
  const int stepped = sqlite3_backup_step(backup, -1);
  const int finished = sqlite3_backup_finish(backup);
  if (stepped != SQLITE_DONE || finished != SQLITE_OK) {
    return SqliteError(dest.get(), absl::StrCat("backup to ", to));
  }
  // A self-contained file: no WAL beside it.
  if (sqlite3_exec(dest.get(), "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    return SqliteError(dest.get(), absl::StrCat("finishing ", to));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ReadInt(sqlite3* db, const char* sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) return SqliteError(db, sql);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
  if (sqlite3_step(raw) != SQLITE_ROW) return SqliteError(db, sql);
  return sqlite3_column_int64(raw, 0);
}

absl::Status Run(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                 std::ostream& out) {
  const fs::path data = inv.Get("data_dir");
  const fs::path to = inv.Get("to");
  std::error_code ec;
  if (!fs::exists(data / "audit.db") || !fs::exists(data / "grants.db")) {
    return absl::InvalidArgumentError(
        absl::StrCat("--data_dir: ", data.string(), " holds no audit.db and grants.db"));
  }
  fs::create_directories(to, ec);
  if (ec || !fs::is_empty(to, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--to: ", to.string(), " must be a new or empty directory"));
  }

  // 1. The checkpoint, before the copy: the copied log extends it.
  av1::CheckpointResponse checkpoint;
  grpc::Status signed_now = clients.audit->Checkpoint(Context(clients, globals).get(),
                                                      av1::CheckpointRequest(), &checkpoint);
  if (!signed_now.ok()) {
    return absl::UnavailableError(
        absl::StrCat("AuditLog.Checkpoint: ", signed_now.error_message()));
  }
  {
    // As the process log writes it (event audit.checkpoint): what `audit verify --checkpoints`
    // reads.
    std::ofstream line(to / "checkpoint.jsonl", std::ios::trunc);
    line << common::logging::FormatLine(common::logging::Level::kInfo,
                                        audit::core::kCheckpointLogEvent, "",
                                        {{audit::core::kCheckpointLogField,
                                          audit::core::CheckpointJson(checkpoint.checkpoint())}})
         << "\n";
    std::ofstream key(to / "checkpoint.pub.pem", std::ios::trunc);
    key << checkpoint.public_key_pem();
    if (!line.flush() || !key.flush()) {
      return absl::UnavailableError(absl::StrCat("--to: cannot write ", to.string()));
    }
  }

  // 2. No grant-store mutation in flight or starting while both are copied.
  ASSIGN_OR_RETURN(Db grants, Open((data / "grants.db").string(), SQLITE_OPEN_READWRITE));
  if (sqlite3_exec(grants.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return SqliteError(grants.get(), "locking grants.db");
  }
  // Copied through connections of their own (a reader of the WAL is not blocked by the lock).
  ASSIGN_OR_RETURN(Db audit, Open((data / "audit.db").string(), SQLITE_OPEN_READONLY));
  absl::Status copied = CopyDatabase(audit.get(), (to / "audit.db").string());
  absl::StatusOr<int64_t> revision = absl::UnavailableError("not copied");
  if (copied.ok()) {
    absl::StatusOr<Db> reader = Open((data / "grants.db").string(), SQLITE_OPEN_READONLY);
    copied =
        reader.ok() ? CopyDatabase(reader->get(), (to / "grants.db").string()) : reader.status();
    if (copied.ok()) {
      revision = ReadInt(reader->get(), "SELECT revision FROM store_revision WHERE id = 1");
    }
  }
  sqlite3_exec(grants.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  RETURN_IF_ERROR(copied);
  {
    // A revision announced by a change waiting for the lock belongs to the live store, not to
    // the copy (docs/adr/0021): the copy announces only what it holds.
    ASSIGN_OR_RETURN(Db copy, Open((to / "grants.db").string(), SQLITE_OPEN_READWRITE));
    sqlite3_exec(copy.get(),
                 "UPDATE revision_announcement SET revision = (SELECT revision FROM "
                 "store_revision WHERE id = 1)",
                 nullptr, nullptr, nullptr);  // absent in a store of an earlier build: nothing
  }

  ASSIGN_OR_RETURN(Db copy, Open((to / "audit.db").string(), SQLITE_OPEN_READONLY));
  absl::StatusOr<int64_t> head =
      ReadInt(copy.get(), "SELECT COALESCE(MAX(sequence), 0) FROM audit_records");
  out << "backup in " << TerminalSafe(to.string()) << ": audit.db (head "
      << (head.ok() ? absl::StrCat(*head) : "?") << "), grants.db (revision "
      << (revision.ok() ? absl::StrCat(*revision) : "?") << "), checkpoint.jsonl (sequence "
      << checkpoint.checkpoint().sequence() << ", key "
      << TerminalSafe(checkpoint.checkpoint().key_id()) << "), checkpoint.pub.pem\n";
  return absl::OkStatus();
}

}  // namespace

int Backup(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
           std::ostream& out, std::ostream& err) {
  const absl::Status done = Run(inv, globals, clients, out);
  if (absl::IsInvalidArgument(done)) return UsageError(err, done);
  if (!done.ok()) return CallError(err, done);
  return kExitOk;
}

}  // namespace sharedos::sharedosctl
