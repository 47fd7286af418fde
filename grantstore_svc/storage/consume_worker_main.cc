// Test helper: opens a grant store file and tries to consume one grant `attempts` times,
// printing "consumed <n>" (exit 0) or the first error (exit 1). Used by
// sqlite_grant_store_test to prove TryConsume is atomic across processes.
//
//   consume_worker <db> <namespace> <grant> <max_uses> <attempts>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: consume_worker <db> <namespace> <grant> <max_uses> <attempts>\n");
    return 2;
  }
  int64_t max_uses = 0;
  int attempts = 0;
  if (!absl::SimpleAtoi(argv[4], &max_uses) || !absl::SimpleAtoi(argv[5], &attempts)) return 2;
  sharedos::grantstore::storage::SqliteGrantStore::Options options;
  options.path = argv[1];
  options.busy_timeout = absl::Seconds(30);
  auto store = sharedos::grantstore::storage::SqliteGrantStore::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  int consumed = 0;
  for (int i = 0; i < attempts; ++i) {
    auto result = (*store)->TryConsume(argv[2], argv[3], max_uses);
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
      return 1;
    }
    if (result->consumed) ++consumed;
  }
  std::printf("consumed %d\n", consumed);
  return 0;
}
