#include "common/server/dependency_probes.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/client/health_check.h"
#include "common/postgres/connection.h"
#include "common/postgres/uri.h"
#include "common/sqlite/database.h"

namespace sharedos::common::server {
namespace {

absl::Status ProbeSqlite(const std::string& path, absl::Duration timeout) {
  sqlite::Database::Options options;
  options.create = false;
  options.read_only = true;
  options.wal = false;
  options.busy_timeout = timeout;
  absl::StatusOr<std::unique_ptr<sqlite::Database>> db = sqlite::Database::Open(path, options);
  if (!db.ok()) return db.status();
  absl::StatusOr<sqlite::Statement> read = (*db)->Prepare("SELECT count(*) FROM sqlite_master");
  if (!read.ok()) return read.status();
  absl::StatusOr<bool> row = read->Step();
  if (!row.ok()) return row.status();
  return *row ? absl::OkStatus() : absl::UnavailableError("store: no answer");
}

absl::Status ProbePostgres(const std::string& uri, absl::Duration timeout) {
  postgres::Connection::Options options;
  // libpq's connect_timeout is whole seconds, at least 2.
  options.connect_timeout = std::max(timeout, absl::Seconds(2));
  options.application_name = "sharedos-readiness";
  absl::StatusOr<std::unique_ptr<postgres::Connection>> connection =
      postgres::Connection::Open(uri, options);
  if (!connection.ok()) return connection.status();
  return (*connection)->Exec("SELECT 1").status();
}

}  // namespace

DependencyCheck ServiceDependency(std::string name, std::shared_ptr<grpc::Channel> channel) {
  return {std::move(name), [channel = std::move(channel)](absl::Duration timeout) {
            absl::StatusOr<client::HealthStatus> health = client::CheckHealth(channel, "", timeout);
            if (!health.ok()) return health.status();
            if (*health != client::HealthStatus::kServing) {
              return absl::UnavailableError(
                  absl::StrCat("health: ", client::HealthStatusName(*health)));
            }
            return absl::OkStatus();
          }};
}

DependencyCheck StoreDependency(std::string db, std::string name) {
  const absl::StatusOr<bool> is_postgres = postgres::IsPostgresUri(db);
  const bool postgres = is_postgres.ok() && *is_postgres;
  return {std::move(name), [db = std::move(db), postgres](absl::Duration timeout) {
            return postgres ? ProbePostgres(db, timeout) : ProbeSqlite(db, timeout);
          }};
}

}  // namespace sharedos::common::server
