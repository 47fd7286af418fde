#include "common/postgres/connection.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/postgres/postgres_status.h"
#include "common/status/status_macros.h"

namespace sharedos::common::postgres {
namespace internal {

void ConnectionDeleter::operator()(PGconn* conn) const { PQfinish(conn); }
void ResultDeleter::operator()(PGresult* result) const { PQclear(result); }

}  // namespace internal

namespace {

// Type OIDs of the built-in types (catalog/pg_type_d.h, stable across releases).
constexpr Oid kBoolOid = 16;
constexpr Oid kByteaOid = 17;
constexpr Oid kInt8Oid = 20;
constexpr Oid kInt2Oid = 21;
constexpr Oid kInt4Oid = 23;
constexpr Oid kTextOid = 25;
constexpr Oid kTextArrayOid = 1009;
constexpr Oid kInt8ArrayOid = 1016;

std::string BigEndian(uint64_t value, int bytes) {
  std::string out(bytes, '\0');
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<char>(value & 0xFF);
    value >>= 8;
  }
  return out;
}

uint64_t FromBigEndian(const char* data, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | static_cast<unsigned char>(data[i]);
  return value;
}

// The binary form of a one-dimensional array of `element` (array_recv's input): the number of
// dimensions, whether any element is NULL, the element type, the length and lower bound (1) of
// the one dimension, then each element as its length (-1: NULL) and its binary form.
class ArrayWire {
 public:
  ArrayWire(Oid element, size_t count, bool has_nulls) {
    out_ += BigEndian(count == 0 ? 0 : 1, 4);
    out_ += BigEndian(has_nulls ? 1 : 0, 4);
    out_ += BigEndian(element, 4);
    if (count > 0) {
      out_ += BigEndian(count, 4);
      out_ += BigEndian(1, 4);
    }
  }
  void Add(absl::string_view element) {
    out_ += BigEndian(element.size(), 4);
    out_.append(element.data(), element.size());
  }
  void AddNull() { out_ += BigEndian(static_cast<uint32_t>(-1), 4); }
  std::string Take() && { return std::move(out_); }

 private:
  std::string out_;
};

// The parameters of one statement as libpq takes them (all in binary).
struct WireParams {
  explicit WireParams(absl::Span<const Param> params) {
    for (const Param& param : params) {
      types.push_back(param.oid());
      values.push_back(param.is_null() ? nullptr : param.wire().data());
      lengths.push_back(static_cast<int>(param.wire().size()));
      formats.push_back(1);  // Binary: explicit lengths, no text escaping.
    }
  }
  std::vector<Oid> types;
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

// The statement's opening words, for error context (SQL text is constant: it holds no values).
absl::string_view Abbreviate(absl::string_view sql) {
  while (!sql.empty() && (sql.front() == ' ' || sql.front() == '\n')) sql.remove_prefix(1);
  const size_t end = std::min(sql.find('\n'), static_cast<size_t>(60));
  return sql.substr(0, end);
}

// Notices ("relation already exists, skipping") are not errors: keep them off stderr.
void IgnoreNotice(void*, const char*) {}

}  // namespace

// ---------------------------------------------------------------------------------------
// Param

Param Param::Int64(int64_t value) {
  return Param(Type::kInt64, false, BigEndian(static_cast<uint64_t>(value), 8));
}
Param Param::Bool(bool value) { return Param(Type::kBool, false, std::string(1, value ? 1 : 0)); }
Param Param::Text(absl::string_view value) { return Param(Type::kText, false, std::string(value)); }
Param Param::Bytes(absl::string_view value) {
  return Param(Type::kBytes, false, std::string(value));
}
Param Param::Null(Type type) { return Param(type, true, ""); }
Param Param::OptionalText(const std::optional<std::string>& value) {
  return value.has_value() ? Text(*value) : Null(Type::kText);
}
Param Param::Int64Array(absl::Span<const std::optional<int64_t>> values) {
  const bool has_nulls = std::any_of(
      values.begin(), values.end(), [](const std::optional<int64_t>& v) { return !v.has_value(); });
  ArrayWire wire(kInt8Oid, values.size(), has_nulls);
  for (const std::optional<int64_t>& value : values) {
    if (value.has_value()) {
      wire.Add(BigEndian(static_cast<uint64_t>(*value), 8));
    } else {
      wire.AddNull();
    }
  }
  return Param(Type::kInt64Array, false, std::move(wire).Take());
}
Param Param::TextArray(absl::Span<const absl::string_view> values) {
  ArrayWire wire(kTextOid, values.size(), /*has_nulls=*/false);
  for (absl::string_view value : values) wire.Add(value);
  return Param(Type::kTextArray, false, std::move(wire).Take());
}

Oid Param::oid() const {
  switch (type_) {
    case Type::kInt64:
      return kInt8Oid;
    case Type::kBool:
      return kBoolOid;
    case Type::kText:
      return kTextOid;
    case Type::kBytes:
      return kByteaOid;
    case Type::kInt64Array:
      return kInt8ArrayOid;
    case Type::kTextArray:
      return kTextArrayOid;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// Result

int Result::rows() const { return PQntuples(result_.get()); }
int Result::columns() const { return PQnfields(result_.get()); }
bool Result::IsNull(int row, int column) const {
  return PQgetisnull(result_.get(), row, column) != 0;
}

int64_t Result::Int64(int row, int column) const {
  if (IsNull(row, column)) return 0;
  const char* data = PQgetvalue(result_.get(), row, column);
  const int length = PQgetlength(result_.get(), row, column);
  switch (PQftype(result_.get(), column)) {
    case kInt8Oid:
      return length == 8 ? static_cast<int64_t>(FromBigEndian(data, 8)) : 0;
    case kInt4Oid:
      return length == 4 ? static_cast<int32_t>(FromBigEndian(data, 4)) : 0;
    case kInt2Oid:
      return length == 2 ? static_cast<int16_t>(FromBigEndian(data, 2)) : 0;
    case kBoolOid:
      return length == 1 && data[0] != 0 ? 1 : 0;
    default:
      return 0;
  }
}

bool Result::Bool(int row, int column) const { return Int64(row, column) != 0; }

absl::string_view Result::Bytes(int row, int column) const {
  if (IsNull(row, column)) return absl::string_view();
  return absl::string_view(PQgetvalue(result_.get(), row, column),
                           PQgetlength(result_.get(), row, column));
}

int64_t Result::affected_rows() const {
  int64_t count = 0;
  if (!absl::SimpleAtoi(PQcmdTuples(result_.get()), &count)) return 0;
  return count;
}

// ---------------------------------------------------------------------------------------
// Connection

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(absl::string_view conninfo) {
  return Open(conninfo, Options());
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(absl::string_view conninfo,
                                                             const Options& options) {
  const std::string timeout =
      absl::StrCat(std::max<int64_t>(2, absl::ToInt64Seconds(options.connect_timeout)));
  const std::string dbname(conninfo);
  // Later entries win; `dbname` is expanded (expand_dbname = 1) into the settings it holds, so
  // it comes last and its own settings override these defaults.
  const char* keywords[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), options.application_name.c_str(), dbname.c_str(),
                          nullptr};
  internal::ConnectionHandle conn(PQconnectdbParams(keywords, values, /*expand_dbname=*/1));
  if (conn == nullptr) return absl::ResourceExhaustedError("libpq could not allocate a connection");
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return PostgresError("", "connect to PostgreSQL", PQerrorMessage(conn.get()));
  }
  PQsetNoticeProcessor(conn.get(), IgnoreNotice, nullptr);
  return std::unique_ptr<Connection>(new Connection(std::move(conn)));
}

Connection::~Connection() = default;

absl::Status Connection::Error(const PGresult* result, absl::string_view sql) const {
  const std::string context = absl::StrCat("PostgreSQL \"", Abbreviate(sql), "\"");
  const char* sqlstate = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  // The primary message only: DETAIL can quote key values ("Key (k)=(...) already exists").
  const char* message =
      result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
  if (message == nullptr || *message == '\0') message = PQerrorMessage(conn_.get());
  // A statement that broke the connection is a connection failure, whatever the server said
  // on its way out (e.g. FATAL 57P01 on shutdown, or an unrelated code).
  if (PQstatus(conn_.get()) != CONNECTION_OK) return PostgresError("", context, message);
  return PostgresError(sqlstate == nullptr ? "" : sqlstate, context, message);
}

absl::StatusOr<Result> Connection::Exec(absl::string_view sql, absl::Span<const Param> params) {
  if (params.size() > 65535) {
    return absl::InvalidArgumentError("PostgreSQL statements take at most 65535 parameters");
  }
  const WireParams wire(params);
  const std::string text(sql);
  internal::ResultHandle result(PQexecParams(
      conn_.get(), text.c_str(), static_cast<int>(params.size()), wire.types.data(),
      wire.values.data(), wire.lengths.data(), wire.formats.data(), /*resultFormat=*/1));
  return Check(std::move(result), sql);
}

absl::StatusOr<Result> Connection::ExecPrepared(absl::string_view name, absl::string_view sql,
                                                absl::Span<const Param> params) {
  if (params.size() > 65535) {
    return absl::InvalidArgumentError("PostgreSQL statements take at most 65535 parameters");
  }
  const WireParams wire(params);
  const std::string statement(name);
  if (!prepared_.contains(statement)) {
    const std::string text(sql);
    internal::ResultHandle prepared(PQprepare(conn_.get(), statement.c_str(), text.c_str(),
                                              static_cast<int>(params.size()), wire.types.data()));
    RETURN_IF_ERROR(Check(std::move(prepared), sql).status());
    prepared_.insert(statement);
  }
  internal::ResultHandle result(PQexecPrepared(
      conn_.get(), statement.c_str(), static_cast<int>(params.size()), wire.values.data(),
      wire.lengths.data(), wire.formats.data(), /*resultFormat=*/1));
  return Check(std::move(result), sql);
}

absl::StatusOr<Result> Connection::Check(internal::ResultHandle result,
                                         absl::string_view sql) const {
  const ExecStatusType status =
      result == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return Error(result.get(), sql);
  return Result(std::move(result));
}

absl::Status Connection::ExecScript(absl::string_view sql) {
  const std::string text(sql);
  internal::ResultHandle result(PQexec(conn_.get(), text.c_str()));
  // PQexec returns the last statement's result; an error stops the script there.
  const ExecStatusType status =
      result == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY) {
    return Error(result.get(), sql);
  }
  return absl::OkStatus();
}

bool Connection::healthy() {
  if (PQstatus(conn_.get()) != CONNECTION_OK) return false;
  const int fd = PQsocket(conn_.get());
  if (fd < 0) return false;
  // An idle connection has nothing to read; anything there is a notice, a notification, or
  // the server's farewell (an error report, then end of file). Read until the socket is empty:
  // the end of file is only seen by the read after the farewell's.
  for (int reads = 0; reads < 8; ++reads) {
    pollfd poll_fd{fd, POLLIN, 0};
    if (poll(&poll_fd, 1, 0) <= 0) break;
    if (PQconsumeInput(conn_.get()) == 0) return false;
    while (PGnotify* notify = PQnotifies(conn_.get())) PQfreemem(notify);
  }
  return PQstatus(conn_.get()) == CONNECTION_OK;
}

bool Connection::InTransaction() const {
  const PGTransactionStatusType status = PQtransactionStatus(conn_.get());
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

}  // namespace sharedos::common::postgres
