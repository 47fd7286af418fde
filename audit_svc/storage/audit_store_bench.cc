// Audit Append throughput on SQLite and on PostgreSQL, one run, the same disk (/tmp or
// $TEST_TMPDIR): 1, 4 and 16 writers appending single-event records (the pre-effect pattern).
//
//   bazel run //audit_svc/storage:audit_store_bench -- --benchmark_min_time=3
//
// BM_AuditAppend/backend:B/writers:W -- W threads call one AuditLog (validation, encoding,
// group commit, chain) over the backend B (0 = SQLite file, 1 = PostgreSQL), each appending
// single events; concurrent callers share group commits. BM_AuditAppendReplicas/writers:W
// (PostgreSQL only) -- W AuditLogs, each over its own PostgresAuditStore (its own
// connections, as W audit_svc replicas would be), one caller each: every commit takes the
// chain's head lock in turn. Both at durability full: SQLite synchronous=FULL (fsync per
// commit); PostgreSQL synchronous_commit=on with the server's defaults (fsync=on; the
// throwaway cluster of tests/testing/postgres_cluster, printed at start).
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/storage/postgres_audit_store.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "benchmark/benchmark.h"
#include "common/time/clock.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::audit::storage {
namespace {

using ::sharedos::audit::core::AuditLog;
using ::sharedos::protocol::v1::AuditEvent;

constexpr int kEventsPerIteration = 2000;
std::atomic<int64_t> next_id{0};

// A realistic authorization.checked record (about 600 bytes of canonical JSON).
AuditEvent MakeEvent(int64_t n) {
  AuditEvent event;
  event.set_version("1");
  event.set_id(absl::StrCat("bench-", n, "-0000-4000-8000-000000000000"));
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_ALLOWED);
  event.mutable_at()->set_seconds(1786438800 + n);
  event.set_trace_id("trace-bench");
  event.set_namespace_id("world-bench");
  event.mutable_actor()->set_agent_id("agent-mallory");
  event.mutable_authority()->set_agent_id("agent-orchestrator");
  event.mutable_owner()->set_human_user_id("user-alice");
  event.set_purpose("benchmark");
  event.mutable_resource()->set_namespace_("files");
  event.mutable_resource()->add_path("Workspace");
  event.set_action("read");
  event.set_grant_id("grant-read-workspace");
  event.set_authority_hash(std::string(64, 'a'));
  event.set_operation_id(absl::StrCat("call-", n));
  event.set_reason("allowed");
  event.set_source(protocol::v1::AUDIT_SOURCE_KERNEL);
  (*event.mutable_metadata()->mutable_fields())["executionId"].set_string_value("exec-bench");
  return event;
}

testing::PostgresCluster* Cluster() {
  static testing::PostgresCluster* cluster = [] {
    absl::StatusOr<testing::PostgresCluster*> shared = testing::PostgresCluster::Shared();
    if (!shared.ok()) {
      std::fprintf(stderr, "PostgreSQL: %s\n", shared.status().ToString().c_str());
      std::exit(1);
    }
    std::fputs((*shared)
                   ->DescribeSettings({"server_version", "fsync", "synchronous_commit",
                                       "wal_sync_method", "shared_buffers"})
                   .c_str(),
               stderr);
    return *shared;
  }();
  return cluster;
}

absl::StatusOr<std::unique_ptr<AuditStore>> OpenBackend(int backend, const std::string& uri) {
  if (backend == 0) {
    const char* dir = std::getenv("TEST_TMPDIR");
    const std::string path = absl::StrCat(dir ? dir : "/tmp", "/sharedos-audit-store-bench-",
                                          getpid(), "-", next_id.fetch_add(1), ".db");
    auto store = SqliteAuditStore::Open(path, {SqliteAuditStore::Durability::kFull});
    if (!store.ok()) return store.status();
    return std::unique_ptr<AuditStore>(*std::move(store));
  }
  PostgresAuditStore::Options options;
  options.uri = uri;
  auto store = PostgresAuditStore::Open(options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<AuditStore>(*std::move(store));
}

// `logs.size()` logs, `writers` threads spread over them round-robin, kEventsPerIteration
// single-event appends in all per iteration (events built before the clock starts).
void RunAppends(benchmark::State& state, std::vector<std::unique_ptr<AuditLog>>& logs,
                int writers) {
  const int per_writer = kEventsPerIteration / writers;
  int64_t total = 0;
  for (auto _ : state) {
    std::vector<std::vector<AuditEvent>> events(writers);
    for (auto& list : events) {
      for (int i = 0; i < per_writer; ++i) list.push_back(MakeEvent(next_id.fetch_add(1)));
    }
    std::atomic<bool> failed{false};
    const absl::Time start = absl::Now();
    std::vector<std::thread> threads;
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, w] {
        AuditLog& log = *logs[w % logs.size()];
        for (AuditEvent& event : events[w]) {
          auto response = log.AppendEvent(std::move(event), "service:authorizer");
          if (!response.ok() || response->appended() != 1) failed = true;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    state.SetIterationTime(absl::ToDoubleSeconds(absl::Now() - start));
    if (failed) {
      state.SkipWithError("append failed");
      return;
    }
    total += static_cast<int64_t>(writers) * per_writer;
  }
  state.SetItemsProcessed(total);
}

void BM_AuditAppend(benchmark::State& state) {
  const int backend = static_cast<int>(state.range(0));
  const int writers = static_cast<int>(state.range(1));
  std::string uri;
  if (backend == 1) {
    auto schema = Cluster()->CreateSchema();
    if (!schema.ok()) {
      state.SkipWithError(schema.status().ToString().c_str());
      return;
    }
    uri = *schema;
  }
  auto store = OpenBackend(backend, uri);
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  std::vector<std::unique_ptr<AuditLog>> logs;
  logs.push_back(
      std::make_unique<AuditLog>(*std::move(store), common::RealClock(), AuditLog::Options{}));
  RunAppends(state, logs, writers);
}
BENCHMARK(BM_AuditAppend)
    ->ArgNames({"backend", "writers"})
    ->ArgsProduct({{0, 1}, {1, 4, 16}})
    ->UseManualTime();

void BM_AuditAppendReplicas(benchmark::State& state) {
  const int writers = static_cast<int>(state.range(0));
  auto schema = Cluster()->CreateSchema();
  if (!schema.ok()) {
    state.SkipWithError(schema.status().ToString().c_str());
    return;
  }
  std::vector<std::unique_ptr<AuditLog>> logs;
  for (int w = 0; w < writers; ++w) {
    auto store = OpenBackend(1, *schema);
    if (!store.ok()) {
      state.SkipWithError(store.status().ToString().c_str());
      return;
    }
    logs.push_back(
        std::make_unique<AuditLog>(*std::move(store), common::RealClock(), AuditLog::Options{}));
  }
  RunAppends(state, logs, writers);
}
BENCHMARK(BM_AuditAppendReplicas)->ArgName("writers")->Arg(1)->Arg(4)->Arg(16)->UseManualTime();

}  // namespace
}  // namespace sharedos::audit::storage

BENCHMARK_MAIN();
