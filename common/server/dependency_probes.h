// The readiness probes of SharedOS's dependencies (readiness.h): each cheap, each bounded by the
// timeout the poller gives it.

#ifndef SHAREDOS_COMMON_SERVER_DEPENDENCY_PROBES_H_
#define SHAREDOS_COMMON_SERVER_DEPENDENCY_PROBES_H_

#include <memory>
#include <string>

#include "common/server/readiness.h"
#include "grpcpp/channel.h"

namespace sharedos::common::server {

// A service this one calls, named `name`: up while grpc.health.v1 at `channel` answers SERVING
// for the whole server (so a dependency that is itself not ready makes this one not ready: it
// could not answer either).
DependencyCheck ServiceDependency(std::string name, std::shared_ptr<grpc::Channel> channel);

// The store at `db` (a --db value: a SQLite file, or a postgres:// URI), named `name`: up while
// a fresh connection opens within the timeout and reads the schema (SQLite: the file exists and
// is readable; PostgreSQL: the server accepts a connection and answers SELECT 1).
DependencyCheck StoreDependency(std::string db, std::string name = "store");

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_DEPENDENCY_PROBES_H_
