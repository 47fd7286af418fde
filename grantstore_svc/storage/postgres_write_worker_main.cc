// Test helper: a grant-store replica on PostgreSQL stopped between a change's records and its
// commit. Opens the store, begins a write transaction (its revision announced, docs/adr/0021),
// inserts a grant, prints "announced <revision>" and then waits for a signal, never committing:
// the test writes the change's record to its log and kills this process (SIGKILL).
//
//   postgres_write_worker <uri> <namespace> <grant id>
#include <unistd.h>

#include <cstdio>

#include "grantstore_svc/storage/postgres_grant_store.h"
#include "sharedos/protocol/v1/grant.pb.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: postgres_write_worker <uri> <namespace> <grant id>\n");
    return 2;
  }
  sharedos::grantstore::storage::PostgresGrantStore::Options options;
  options.uri = argv[1];
  options.lock_timeout = absl::Seconds(30);
  auto store = sharedos::grantstore::storage::PostgresGrantStore::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  auto txn = (*store)->BeginWrite();
  if (!txn.ok()) {
    std::fprintf(stderr, "%s\n", txn.status().ToString().c_str());
    return 1;
  }
  sharedos::protocol::v1::CapabilityGrant grant;
  grant.set_namespace_id(argv[2]);
  grant.set_id(argv[3]);
  grant.mutable_subject()->set_agent_id("agent-assistant");
  grant.mutable_issuer()->set_human_user_id("user-alice");
  if (const absl::Status inserted = (*txn)->InsertGrant(grant); !inserted.ok()) {
    std::fprintf(stderr, "%s\n", inserted.ToString().c_str());
    return 1;
  }
  std::printf("announced %lld\n", static_cast<long long>((*txn)->revision()));
  std::fflush(stdout);
  while (true) pause();
}
