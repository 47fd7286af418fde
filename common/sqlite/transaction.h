// RAII SQLite transaction: rolled back on destruction unless committed.

#ifndef SHAREDOS_COMMON_SQLITE_TRANSACTION_H_
#define SHAREDOS_COMMON_SQLITE_TRANSACTION_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/sqlite/database.h"

namespace sharedos::common::sqlite {

// An open transaction on a Database. Move-only; not thread-safe (like the
// Database, which must outlive it). Transactions do not nest.
//
//   ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
//   RETURN_IF_ERROR(...writes...);
//   return txn.Commit();   // any early return rolls back
class Transaction {
 public:
  enum class Mode {
    kDeferred,   // Locks on first access; a later write may fail with BUSY.
    kImmediate,  // Takes the write lock now (the right default for
                 // read-modify-write).
    kExclusive,  // Also keeps readers out (rollback-journal mode only).
  };

  // Begins a transaction. Errors: UNAVAILABLE when another connection holds the
  // write lock beyond the busy timeout; INTERNAL if a transaction is already
  // open on `db`.
  static absl::StatusOr<Transaction> Begin(Database& db, Mode mode = Mode::kImmediate);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // Rolls back if still active (errors cannot be reported and are ignored:
  // SQLite has then already rolled back, or the connection is unusable).
  ~Transaction();

  // Commits. On success the transaction is finished. On failure (e.g.
  // UNAVAILABLE for a busy or full disk) it stays active if SQLite kept it
  // open, so Commit may be retried and destruction rolls back; if SQLite rolled
  // it back itself, active() is false.
  absl::Status Commit();

  // Rolls back now. The transaction is finished afterwards even on error.
  absl::Status Rollback();

  // Whether Commit/Rollback may still be called.
  bool active() const { return db_ != nullptr; }

 private:
  explicit Transaction(Database* db) : db_(db) {}

  Database* db_;  // Null once finished or moved from.
};

}  // namespace sharedos::common::sqlite

#endif  // SHAREDOS_COMMON_SQLITE_TRANSACTION_H_
