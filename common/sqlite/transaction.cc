#include "common/sqlite/transaction.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/sqlite/database.h"
#include "common/status/status_macros.h"

namespace sharedos::common::sqlite {
namespace {

// Runs a transaction-control statement through the connection's statement
// cache.
absl::Status Run(Database& db, const char* sql) {
  ASSIGN_OR_RETURN(Statement statement, db.Cached(sql));
  return statement.Step().status();
}

}  // namespace

absl::StatusOr<Transaction> Transaction::Begin(Database& db, Mode mode) {
  const char* sql = "BEGIN IMMEDIATE";
  switch (mode) {
    case Mode::kDeferred:
      sql = "BEGIN DEFERRED";
      break;
    case Mode::kImmediate:
      sql = "BEGIN IMMEDIATE";
      break;
    case Mode::kExclusive:
      sql = "BEGIN EXCLUSIVE";
      break;
  }
  RETURN_IF_ERROR(Run(db, sql));
  return Transaction(&db);
}

Transaction::Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }

Transaction::~Transaction() {
  if (db_ != nullptr && db_->InTransaction()) {
    Run(*db_, "ROLLBACK").IgnoreError();
  }
}

absl::Status Transaction::Commit() {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError("transaction is no longer active");
  }
  const absl::Status status = Run(*db_, "COMMIT");
  if (status.ok() || !db_->InTransaction()) db_ = nullptr;
  return status;
}

absl::Status Transaction::Rollback() {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError("transaction is no longer active");
  }
  Database* db = db_;
  db_ = nullptr;
  if (!db->InTransaction()) return absl::OkStatus();  // SQLite already rolled back.
  return Run(*db, "ROLLBACK");
}

}  // namespace sharedos::common::sqlite
