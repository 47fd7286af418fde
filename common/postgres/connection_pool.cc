#include "common/postgres/connection_pool.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace sharedos::common::postgres {

PooledConnection::~PooledConnection() {
  if (conn_ != nullptr) pool_->Release(std::move(conn_));
}

ConnectionPool::ConnectionPool(Options options) : options_(std::move(options)) {}

bool ConnectionPool::Available() const {
  return !idle_.empty() || open_ < std::max(1, options_.max_connections);
}

void ConnectionPool::Unreserve() {
  absl::MutexLock lock(&mu_);
  --open_;
}

absl::StatusOr<PooledConnection> ConnectionPool::Acquire() {
  while (true) {
    std::unique_ptr<Connection> idle;
    {
      absl::MutexLock lock(&mu_);
      if (!mu_.AwaitWithTimeout(absl::Condition(this, &ConnectionPool::Available),
                                options_.acquire_timeout)) {
        return absl::UnavailableError(absl::StrCat("all ", options_.max_connections,
                                                   " PostgreSQL connections of ", options_.owner,
                                                   " are busy"));
      }
      if (idle_.empty()) {
        ++open_;  // Reserves the slot the new connection takes.
        break;
      }
      idle = std::move(idle_.back());
      idle_.pop_back();
    }
    // A connection the server closed while idle (restart, failover) is dropped here, so the
    // call reconnects instead of failing.
    if (idle->healthy()) return PooledConnection(this, std::move(idle));
    idle.reset();
    Unreserve();
  }
  absl::StatusOr<std::unique_ptr<Connection>> conn =
      Connection::Open(options_.uri, options_.connection);
  if (!conn.ok()) {
    Unreserve();
    return conn.status();
  }
  if (options_.on_connect) {
    const absl::Status setup = options_.on_connect(**conn);
    if (!setup.ok()) {
      conn->reset();
      Unreserve();
      return setup;
    }
  }
  return PooledConnection(this, *std::move(conn));
}

void ConnectionPool::Release(std::unique_ptr<Connection> conn) {
  const bool reusable = conn->healthy() && !conn->InTransaction();
  {
    absl::MutexLock lock(&mu_);
    if (reusable && static_cast<int>(idle_.size()) < options_.max_idle_connections) {
      idle_.push_back(std::move(conn));
      return;
    }
    --open_;
  }
  conn.reset();  // Closed outside the lock.
}

}  // namespace sharedos::common::postgres
