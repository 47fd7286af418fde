// A throwaway PostgreSQL cluster for one test (or one test binary): initdb into a fresh
// directory under /tmp, a postgres server on a free 127.0.0.1 port (and a Unix socket in that
// directory), torn down and deleted by the destructor.
//
// PostgreSQL refuses to run as root, and CI runs tests as root: then initdb, postgres and
// pg_ctl run as the unprivileged user `nobody` through
//   setpriv --reuid=<nobody> --regid=<nobody's group> --clear-groups -- <binary> ...
// in a directory created by mkdtemp(/tmp/sharedos-pg.XXXXXX) and chowned to that user (Bazel's
// TEST_TMPDIR lies under /root, which `nobody` cannot traverse).
//
// The server is started directly as a child of the test (not through `pg_ctl start`, which
// detaches it into a session of its own), so that Bazel's kill of a timed-out test's process
// group takes the server with it. It is stopped with `pg_ctl stop -m immediate`.
//
// A test killed before its destructor runs leaves its directory behind; the next Create()
// removes directories whose owning test process is gone.
//
// Settings: initdb -A trust -U postgres -E UTF8 --locale=C --no-sync (--no-sync only skips
// initdb's final flush of the throwaway files); the server gets listen_addresses=127.0.0.1,
// port, unix_socket_directories=<dir>, and otherwise PostgreSQL's defaults (fsync stays on).
// Trust authentication is acceptable only because the cluster is local and lives for one test.
//
// Not thread-safe: one owner (the test); the databases it serves take any number of clients.

#ifndef SHAREDOS_TESTS_TESTING_POSTGRES_CLUSTER_H_
#define SHAREDOS_TESTS_TESTING_POSTGRES_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::testing {

class PostgresCluster {
 public:
  struct Options {
    // Bound on initdb, on the server becoming ready, and on each stop.
    absl::Duration timeout = absl::Seconds(30);
  };

  // Finds the PostgreSQL binaries ($SHAREDOS_POSTGRES_BINDIR, `pg_config --bindir`, else the
  // newest /usr/lib/postgresql/*/bin), runs initdb and starts the server. Errors: NOT_FOUND (no
  // PostgreSQL installed: run tools/setup.sh; or no `nobody` user when root); UNAVAILABLE
  // (initdb or the server failed or timed out; the message carries the tail of their log);
  // INTERNAL.
  static absl::StatusOr<std::unique_ptr<PostgresCluster>> Create(const Options& options);
  static absl::StatusOr<std::unique_ptr<PostgresCluster>> Create();

  // One cluster shared by every test of the binary, created on first use and torn down at exit
  // (each test then takes its own database, see CreateDatabase). Errors: as Create, every call
  // once the first failed.
  static absl::StatusOr<PostgresCluster*> Shared();

  PostgresCluster(const PostgresCluster&) = delete;
  PostgresCluster& operator=(const PostgresCluster&) = delete;
  // Stops the server (pg_ctl stop -m immediate; SIGKILL if that fails) and removes the
  // directory.
  ~PostgresCluster();

  // A libpq URI for `database` on this cluster, as the superuser `postgres`.
  std::string Uri(absl::string_view database = "postgres") const;

  // Creates an empty database and returns its URI. `name`: lower-case letters, digits and '_';
  // empty picks a fresh "db_<n>". Errors: INVALID_ARGUMENT (name); ALREADY_EXISTS; UNAVAILABLE.
  absl::StatusOr<std::string> CreateDatabase(absl::string_view name = "");

  // Creates an empty schema in database "postgres" and returns a URI whose search_path is that
  // schema alone, so a store opened on it creates and sees only its own tables: much cheaper
  // than a database per test (CREATE DATABASE copies and syncs a template). `name` as for
  // CreateDatabase; empty picks a fresh "schema_<n>". Errors: as CreateDatabase.
  absl::StatusOr<std::string> CreateSchema(absl::string_view name = "");

  // Stops the server at once (pg_ctl stop -m immediate: clients see their connections drop;
  // data committed so far survives). Errors: FAILED_PRECONDITION (not running); INTERNAL.
  absl::Status Stop();
  // Starts the server again on the same directory and port. Errors: FAILED_PRECONDITION
  // (already running); UNAVAILABLE (did not become ready in time, or the port was taken).
  absl::Status Start();

  bool running() const { return pid_ > 0; }
  // The server's (postmaster's) pid while running, else -1: its backends are its children.
  pid_t pid() const { return pid_; }
  // The directory of the PostgreSQL binaries the cluster runs (pg_dump, pg_restore and psql
  // among them: tests take and restore copies the way an operator does).
  const std::string& bindir() const { return bindir_; }
  int port() const { return port_; }
  // The temporary directory: data/ (the cluster), server.log, owner (the test's pid), the Unix
  // socket.
  const std::string& directory() const { return directory_; }
  // The last `bytes` of the server's log, for failure messages.
  std::string LogTail(size_t bytes = 2000) const;
  // "PostgreSQL <name> = <value>\n" for each server setting in `names` (SHOW <name>; "?" for one
  // that cannot be read): what a benchmark prints beside figures that depend on them.
  std::string DescribeSettings(const std::vector<std::string>& names) const;

 private:
  PostgresCluster(Options options, std::string bindir, std::string directory, uid_t uid, gid_t gid,
                  bool drop_root);

  absl::Status InitDb();
  // Starts the server on port_ and waits until it answers. `retry_port`: on "address in use",
  // picks another free port (first start only).
  absl::Status StartServer(bool retry_port);
  // Runs a PostgreSQL binary (as the unprivileged user when root) to completion, its output
  // appended to `log`. Errors: UNAVAILABLE (non-zero exit or timeout, with the log's tail).
  absl::Status Run(const std::string& binary, const std::vector<std::string>& args,
                   const std::string& log);
  // posix_spawn of `binary` `args` (through setpriv when root), stdout and stderr to `log`.
  absl::StatusOr<pid_t> Spawn(const std::string& binary, const std::vector<std::string>& args,
                              const std::string& log);

  const Options options_;
  const std::string bindir_;
  const std::string directory_;
  const uid_t uid_;
  const gid_t gid_;
  const bool drop_root_;
  int port_ = 0;
  pid_t pid_ = -1;
  int next_database_ = 0;
  int next_schema_ = 0;
};

// The set-up the tests and benchmarks on PostgreSQL share, written once.

// A fresh, empty database on the binary's shared cluster (Shared(), then CreateDatabase()): a test
// of its own tables on the cluster every test of the binary uses. Errors: as Shared and
// CreateDatabase.
absl::StatusOr<std::string> FreshDatabase();
// A fresh schema on the shared cluster (Shared(), then CreateSchema()): a URI whose search_path is
// that schema alone, far cheaper than a database. Errors: as Shared and CreateSchema.
absl::StatusOr<std::string> FreshSchema();

// A cluster of the caller's own with one database on it: for a test that stops and starts the
// server under its clients, or runs processes that must not share the binary's cluster.
struct OwnedDatabase {
  std::unique_ptr<PostgresCluster> cluster;
  std::string uri;  // the database's (CreateDatabase)
};
// PostgresCluster::Create(), then CreateDatabase(`name`). Errors: as those two.
absl::StatusOr<OwnedDatabase> CreateClusterWithDatabase(absl::string_view name);

// For a benchmark's main: a cluster of its own, or the process exits — with status 2 and
// "<program>: no PostgreSQL: <why>" when PostgreSQL's server binaries are missing (NOT_FOUND: the
// benchmark is skipped, tools/bench/run_scale.sh reads 2 so), with status 1 and
// "<program>: PostgreSQL: <why>" on any other failure.
std::unique_ptr<PostgresCluster> CreateClusterOrExit(absl::string_view program);

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_POSTGRES_CLUSTER_H_
