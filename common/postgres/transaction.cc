#include "common/postgres/transaction.h"

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/postgres/connection.h"
#include "common/status/status_macros.h"

namespace sharedos::common::postgres {
namespace {

const char* BeginSql(const TransactionOptions& options) {
  using Isolation = TransactionOptions::Isolation;
  switch (options.isolation) {
    case Isolation::kReadCommitted:
      return options.read_only ? "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY"
                               : "BEGIN ISOLATION LEVEL READ COMMITTED";
    case Isolation::kRepeatableRead:
      return options.read_only ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                               : "BEGIN ISOLATION LEVEL REPEATABLE READ";
    case Isolation::kSerializable:
      return options.read_only ? "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY"
                               : "BEGIN ISOLATION LEVEL SERIALIZABLE";
  }
  return "BEGIN";
}

}  // namespace

absl::StatusOr<Transaction> Transaction::Begin(Connection& conn,
                                               const TransactionOptions& options) {
  if (conn.InTransaction()) {
    return absl::InternalError("a transaction is already open on this connection");
  }
  RETURN_IF_ERROR(conn.Exec(BeginSql(options)).status());
  return Transaction(&conn);
}

Transaction::Transaction(Transaction&& other) noexcept : conn_(other.conn_) {
  other.conn_ = nullptr;
}

Transaction::~Transaction() {
  if (active()) (void)Rollback();
}

absl::Status Transaction::Commit() {
  if (!active()) return absl::FailedPreconditionError("transaction is no longer active");
  Connection* conn = conn_;
  conn_ = nullptr;
  const bool failed = PQtransactionStatus(conn->handle()) == PQTRANS_INERROR;
  absl::StatusOr<Result> result = conn->Exec("COMMIT");
  if (!result.ok()) return result.status();
  // COMMIT of a failed transaction "succeeds" as a ROLLBACK.
  if (failed) {
    return absl::FailedPreconditionError(
        "transaction was rolled back: an earlier statement in it failed");
  }
  return absl::OkStatus();
}

absl::Status Transaction::Rollback() {
  if (!active()) return absl::FailedPreconditionError("transaction is no longer active");
  Connection* conn = conn_;
  conn_ = nullptr;
  if (PQstatus(conn->handle()) != CONNECTION_OK) {
    return absl::UnavailableError("rollback: the connection is lost (the server rolled back)");
  }
  return conn->Exec("ROLLBACK").status();
}

absl::Status RunInTransaction(Connection& conn, const TransactionOptions& options,
                              const std::function<absl::Status(Connection&)>& body,
                              const RetryOptions& retry) {
  const int attempts = retry.max_attempts < 1 ? 1 : retry.max_attempts;
  absl::Status status;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn, options));
    status = body(conn);
    if (status.ok()) status = txn.Commit();
    if (!absl::IsAborted(status)) return status;
    // Destroying `txn` rolls an aborted body back before the next attempt.
  }
  return absl::AbortedError(
      absl::StrCat(status.message(), " (still conflicting after ", attempts, " attempts)"));
}

}  // namespace sharedos::common::postgres
