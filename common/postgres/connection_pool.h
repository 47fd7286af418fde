// A bounded pool of PostgreSQL connections to one database, for a thread-safe store: each call
// checks a connection out (PooledConnection, RAII), and it goes back to the pool when released.
// Broken connections are dropped on release, and idle ones are checked (Connection::healthy)
// before reuse, so after a server restart the next call reconnects instead of failing: no
// restart of the caller needed.

#ifndef SHAREDOS_COMMON_POSTGRES_CONNECTION_POOL_H_
#define SHAREDOS_COMMON_POSTGRES_CONNECTION_POOL_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/postgres/connection.h"

namespace sharedos::common::postgres {

class ConnectionPool;

// A connection checked out of a pool; goes back (or is closed) when destroyed. Move-only.
class PooledConnection {
 public:
  PooledConnection(PooledConnection&& other) noexcept = default;
  PooledConnection& operator=(PooledConnection&&) = delete;
  ~PooledConnection();

  Connection& operator*() const { return *conn_; }
  Connection* operator->() const { return conn_.get(); }

 private:
  friend class ConnectionPool;
  PooledConnection(ConnectionPool* pool, std::unique_ptr<Connection> conn)
      : pool_(pool), conn_(std::move(conn)) {}

  ConnectionPool* pool_;
  std::unique_ptr<Connection> conn_;
};

// Thread-safe. Must outlive its PooledConnections.
class ConnectionPool {
 public:
  struct Options {
    // A libpq URI (postgres://..., postgresql://...) or key=value string.
    std::string uri;
    Connection::Options connection;
    // Connections open at once (checked out and idle), >= 1.
    int max_connections = 8;
    // Idle connections kept open between calls.
    int max_idle_connections = 4;
    // How long Acquire waits for a free connection while max_connections are checked out.
    absl::Duration acquire_timeout = absl::Seconds(5);
    // Run once on every new connection before its first use (session settings); an error
    // closes the connection and fails the Acquire.
    std::function<absl::Status(Connection&)> on_connect;
    // Names the pool's user in the "all N connections ... are busy" error.
    std::string owner = "the store";
  };

  explicit ConnectionPool(Options options);
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // A healthy idle connection, or a new one. Errors: UNAVAILABLE (cannot connect, or every
  // connection stayed busy for acquire_timeout); on_connect's error.
  absl::StatusOr<PooledConnection> Acquire() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class PooledConnection;
  bool Available() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps `conn` when it is healthy, outside a transaction and the pool has room; else closes.
  void Release(std::unique_ptr<Connection> conn) ABSL_LOCKS_EXCLUDED(mu_);
  void Unreserve() ABSL_LOCKS_EXCLUDED(mu_);

  const Options options_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // checked out or idle
};

}  // namespace sharedos::common::postgres

#endif  // SHAREDOS_COMMON_POSTGRES_CONNECTION_POOL_H_
