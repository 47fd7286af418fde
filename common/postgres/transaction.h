// RAII PostgreSQL transaction (rolled back on destruction unless committed), and
// RunInTransaction, which retries a whole transaction when PostgreSQL aborts it to keep
// transactions serializable (SQLSTATE 40001, or a deadlock 40P01: both ABORTED).

#ifndef SHAREDOS_COMMON_POSTGRES_TRANSACTION_H_
#define SHAREDOS_COMMON_POSTGRES_TRANSACTION_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/postgres/connection.h"

namespace sharedos::common::postgres {

struct TransactionOptions {
  enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };
  Isolation isolation = Isolation::kReadCommitted;
  // READ ONLY: writes fail (SQLSTATE 25006, UNAVAILABLE); a standby accepts only these.
  bool read_only = false;
};

// An open transaction block on a Connection. Move-only; not thread-safe (like the Connection,
// which must outlive it). Transactions do not nest.
//
//   ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn));
//   RETURN_IF_ERROR(...statements...);
//   return txn.Commit();   // any early return rolls back
class Transaction {
 public:
  // BEGIN with `options`. Errors: UNAVAILABLE (connection lost); INTERNAL when a transaction
  // is already open on `conn`.
  static absl::StatusOr<Transaction> Begin(Connection& conn,
                                           const TransactionOptions& options = {});

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // Rolls back if still active (errors are ignored: the server rolls back a transaction whose
  // connection is gone).
  ~Transaction();

  // COMMIT. The transaction is finished afterwards, whatever the outcome. Errors: ABORTED (a
  // serialization failure at commit: nothing was written; retry the whole transaction);
  // FAILED_PRECONDITION when an earlier statement failed (PostgreSQL then rolls back);
  // UNAVAILABLE when the connection broke, and then the outcome is unknown (it may have
  // committed).
  absl::Status Commit();

  // ROLLBACK now. Finished afterwards even on error.
  absl::Status Rollback();

  bool active() const { return conn_ != nullptr; }

 private:
  explicit Transaction(Connection* conn) : conn_(conn) {}

  Connection* conn_;  // Null once finished or moved from.
};

struct RetryOptions {
  // Attempts in all, the first included (>= 1).
  int max_attempts = 5;
};

// Runs `body` inside a transaction and commits it; while `body` or the commit fails with
// ABORTED, rolls back and runs it again in a fresh transaction, up to retry.max_attempts. So
// `body` must be safe to run more than once (no effects outside the transaction). Any other
// error is returned at once. Errors: `body`'s or Commit's; ABORTED "... after N attempts".
absl::Status RunInTransaction(Connection& conn, const TransactionOptions& options,
                              const std::function<absl::Status(Connection&)>& body,
                              const RetryOptions& retry = {});

}  // namespace sharedos::common::postgres

#endif  // SHAREDOS_COMMON_POSTGRES_TRANSACTION_H_
