// audit_svc throughput and latency against raw SQLite, measured in one run.
//
//   bazel run //tools/bench:audit_bench -- --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true   (one line; .bazelrc builds with -O2)
//
// Baseline: BM_RawSqliteBatchedInsert inserts the same rows (precomputed columns, canonical
// JSON and hashes) into the same records table (its UNIQUE id index; the lookup keys are indexed
// off the commit path, and the baseline leaves them out), 1000 per transaction. Against it:
// BM_AuditLogAppend, the whole core path per event — strict validation, redaction guard,
// canonical JSON, group commit, hash chaining, duplicate detection — also 1000 per call.
// durability 0 = normal (WAL, synchronous=NORMAL), 1 = full (fsync per commit).
// BM_SingleEventLatency/8 has 8 threads each appending single events; it reports p50/p99.
// BM_PreEffectRecord: one pre-effect record through the client, remote vs local mode.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/audit_client.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/server/audit_service.h"
#include "audit_svc/storage/event_codec.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "benchmark/benchmark.h"
#include "common/crypto/random.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/sqlite/database.h"
#include "common/sqlite/transaction.h"
#include "common/time/clock.h"
#include "common/validation/protocol.h"

namespace {

using ::sharedos::audit::core::AuditLog;
using ::sharedos::audit::storage::SqliteAuditStore;
using ::sharedos::protocol::v1::AuditEvent;

constexpr int kBatch = 1000;
std::atomic<int64_t> next_id{0};

std::string FreshPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = absl::StrCat(dir ? dir : "/tmp", "/sharedos-audit-bench-", getpid(), "-", name,
                                  "-", next_id.fetch_add(1), ".db");
  std::remove(path.c_str());
  return path;
}

// A realistic authorization.checked record (about 600 bytes of canonical JSON).
AuditEvent MakeEvent(int64_t n) {
  AuditEvent event;
  event.set_version("1");
  event.set_id(absl::StrCat("bench-", n, "-0000-4000-8000-000000000000"));
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_ALLOWED);
  event.mutable_at()->set_seconds(1786438800 + n);
  event.set_trace_id("trace-bench");
  event.set_namespace_id("world-bench");
  event.mutable_actor()->set_agent_id("agent-mallory");
  event.mutable_authority()->set_agent_id("agent-orchestrator");
  event.mutable_owner()->set_human_user_id("user-alice");
  event.set_purpose("benchmark");
  event.mutable_resource()->set_namespace_("files");
  event.mutable_resource()->add_path("Workspace");
  event.mutable_resource()->add_path("scratch");
  event.set_action("read");
  event.set_grant_id("grant-read-workspace");
  event.set_authority_hash(std::string(64, 'a'));
  event.set_operation_id(absl::StrCat("call-", n));
  event.set_reason("allowed");
  event.set_source(sharedos::protocol::v1::AUDIT_SOURCE_KERNEL);
  event.set_consumed(false);
  auto& fields = *event.mutable_metadata()->mutable_fields();
  fields["grantsResolved"].set_number_value(12);
  fields["executionId"].set_string_value("exec-bench");
  return event;
}

SqliteAuditStore::Durability DurabilityArg(const benchmark::State& state) {
  return state.range(0) == 0 ? SqliteAuditStore::Durability::kNormal
                             : SqliteAuditStore::Durability::kFull;
}

void BM_RawSqliteBatchedInsert(benchmark::State& state) {
  const std::string path = FreshPath("raw");
  // The store creates the schema; the rows then go in straight through SQLite.
  { (void)SqliteAuditStore::Open(path, {DurabilityArg(state)}); }
  sharedos::common::sqlite::Database::Options options;
  options.synchronous = state.range(0) == 0
                            ? sharedos::common::sqlite::Database::Synchronous::kNormal
                            : sharedos::common::sqlite::Database::Synchronous::kFull;
  auto db = sharedos::common::sqlite::Database::Open(path, options);
  if (!db.ok()) {
    state.SkipWithError(db.status().ToString().c_str());
    return;
  }
  struct Row {
    std::string id;
    sharedos::audit::storage::IndexedColumns columns;
    std::string json, hash;
  };
  int64_t sequence = 0;
  std::string prev(64, '0');
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Row> rows;
    rows.reserve(kBatch);
    for (int i = 0; i < kBatch; ++i) {
      AuditEvent event = MakeEvent(next_id.fetch_add(1));
      std::string json = *sharedos::audit::storage::CanonicalEventJson(event);
      rows.push_back({event.id(), sharedos::audit::storage::DeriveColumns(event), json,
                      sharedos::audit::storage::ChainHash(prev, json)});
    }
    state.ResumeTiming();
    auto txn = sharedos::common::sqlite::Transaction::Begin(**db);
    auto insert = (*db)->Cached(SqliteAuditStore::InsertSql());
    for (const Row& row : rows) {
      (void)insert->BindInt64(1, ++sequence);
      (void)insert->BindText(2, row.id);
      (void)insert->BindInt64(3, row.columns.type);
      (void)insert->BindInt64(4, row.columns.outcome);
      (void)insert->BindText(5, row.columns.namespace_id);
      (void)insert->BindText(6, row.columns.trace_id);
      (void)insert->BindText(7, row.columns.execution_id);
      (void)insert->BindText(8, row.columns.reason);
      (void)insert->BindInt64(9, row.columns.source.value_or(0));
      (void)insert->BindText(10, row.columns.actor);
      (void)insert->BindInt64(11, row.columns.at_micros);
      (void)insert->BindText(12, row.json);
      (void)insert->BindText(13, prev);
      (void)insert->BindText(14, row.hash);
      (void)insert->BindInt64(15, 0);
      (void)insert->Step();
    }
    (void)txn->Commit();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_RawSqliteBatchedInsert)->ArgName("durability")->Arg(0)->Arg(1)->UseRealTime();

// `callers` threads append 1000-event requests between them (each 1000/callers events) to one
// log: callers validate and encode in parallel while the single writer commits groups. Events
// are built before the clock starts; the rate is total events over wall time.
void BM_AuditLogAppend(benchmark::State& state) {
  const int callers = static_cast<int>(state.range(1));
  const int rounds = 20;
  const auto durability = state.range(0) == 0 ? SqliteAuditStore::Durability::kNormal
                                              : SqliteAuditStore::Durability::kFull;
  auto store = SqliteAuditStore::Open(FreshPath("log"), {durability});
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  AuditLog log(*std::move(store), sharedos::common::RealClock(), AuditLog::Options{});
  int64_t total = 0;
  for (auto _ : state) {
    std::vector<std::vector<sharedos::audit::v1::AppendRequest>> requests(callers);
    for (int c = 0; c < callers; ++c) {
      for (int r = 0; r < rounds; ++r) {
        sharedos::audit::v1::AppendRequest request;
        for (int i = 0; i < kBatch / callers; ++i) {
          *request.add_events() = MakeEvent(next_id.fetch_add(1));
        }
        requests[c].push_back(std::move(request));
      }
    }
    std::atomic<bool> failed{false};
    const absl::Time start = absl::Now();
    std::vector<std::thread> threads;
    for (int c = 0; c < callers; ++c) {
      threads.emplace_back([&, c] {
        for (const auto& request : requests[c]) {
          auto response = log.Append(request, "service:authorizer");
          if (!response.ok() || response->appended() != request.events_size()) failed = true;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    state.SetIterationTime(absl::ToDoubleSeconds(absl::Now() - start));
    if (failed) {
      state.SkipWithError("append failed");
      return;
    }
    total += static_cast<int64_t>(callers) * rounds * (kBatch / callers);
  }
  state.SetItemsProcessed(total);
}
BENCHMARK(BM_AuditLogAppend)
    ->ArgNames({"durability", "callers"})
    ->Args({0, 1})
    ->Args({0, 2})
    ->Args({0, 4})
    ->Args({1, 1})
    ->Args({1, 2})
    ->Args({1, 4})
    ->UseManualTime();

// One single-event commit straight into the store, on the calling thread: what the storage
// (SQLite transaction, chain hash, the row and its id index, the head, WAL; the background
// indexer's batches of lookup keys included in the mean) costs per group
// of one, without the validation, encoding and writer-thread handoff AuditLog::Append adds
// around it. The mean includes the WAL checkpoints the commits cause (now in the background).
void BM_StoreAppendOneEvent(benchmark::State& state) {
  const auto durability = state.range(0) == 0 ? SqliteAuditStore::Durability::kNormal
                                              : SqliteAuditStore::Durability::kFull;
  auto store = SqliteAuditStore::Open(FreshPath("one"), {durability});
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    AuditEvent event = MakeEvent(next_id.fetch_add(1));
    std::vector<std::vector<sharedos::audit::storage::PendingEvent>> submissions(1);
    submissions[0].push_back({&event, *sharedos::audit::storage::CanonicalEventJson(event),
                              sharedos::audit::storage::DeriveColumns(event)});
    state.ResumeTiming();
    auto appended = (*store)->Append(submissions, absl::Now());
    if (!appended.ok()) state.SkipWithError(appended.status().ToString().c_str());
  }
}
BENCHMARK(BM_StoreAppendOneEvent)->ArgName("durability")->Arg(0)->Arg(1);

// Single-event appends from `writers` threads at once: what a pre-effect record costs a caller
// while others write too. Reports per-call latency percentiles (group commit amortizes fsync).
void BM_SingleEventLatency(benchmark::State& state) {
  const int writers = static_cast<int>(state.range(0));
  const int per_writer = 500;
  const auto durability = state.range(1) == 0 ? SqliteAuditStore::Durability::kNormal
                                              : SqliteAuditStore::Durability::kFull;
  auto store = SqliteAuditStore::Open(FreshPath("lat"), {durability});
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  AuditLog log(*std::move(store), sharedos::common::RealClock(), AuditLog::Options{});
  std::vector<double> latencies_us;
  for (auto _ : state) {
    std::vector<std::vector<double>> per_thread(writers);
    std::vector<std::thread> threads;
    const absl::Time start = absl::Now();
    for (int w = 0; w < writers; ++w) {
      threads.emplace_back([&, w] {
        for (int i = 0; i < per_writer; ++i) {
          sharedos::audit::v1::AppendRequest request;
          *request.add_events() = MakeEvent(next_id.fetch_add(1));
          const absl::Time t0 = absl::Now();
          (void)log.Append(request, "service:authorizer");
          per_thread[w].push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
        }
      });
    }
    for (auto& thread : threads) thread.join();
    state.SetIterationTime(absl::ToDoubleSeconds(absl::Now() - start));
    for (const auto& v : per_thread) latencies_us.insert(latencies_us.end(), v.begin(), v.end());
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  auto percentile = [&](double p) {
    return latencies_us[std::min(latencies_us.size() - 1,
                                 static_cast<size_t>(p * latencies_us.size()))];
  };
  state.counters["p50_us"] = percentile(0.50);
  state.counters["p99_us"] = percentile(0.99);
  state.SetItemsProcessed(state.iterations() * writers * per_writer);
}
BENCHMARK(BM_SingleEventLatency)
    ->ArgNames({"writers", "durability"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({8, 0})
    ->Args({8, 1})
    ->UseManualTime()
    ->Iterations(3);

// What one pre-effect record costs a writer, in each mode, against a real audit_svc on
// loopback (gRPC server with the SQLite store, durability normal): remote = a synchronous
// Append round trip; local = an fsync into the writer's own outbox (shipped in the background).
void BM_PreEffectRecord(benchmark::State& state) {
  const bool local = state.range(0) == 1;
  auto store = SqliteAuditStore::Open(FreshPath("pre"), {SqliteAuditStore::Durability::kNormal});
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  AuditLog log(*std::move(store), sharedos::common::RealClock(), AuditLog::Options{});
  // The writer is the authorizer (service:authorizer), which produces authorization.checked
  // (ADR 0014, T4: audit_svc admits a writer only to its own record types).
  auto authenticator = sharedos::common::server::Authenticator::FromJson(
      R"({"credentials": [{"name": "authorizer", "role": "service", "token_sha256": ")" +
      sharedos::common::server::TokenDigestHex("svc") + R"("}]})");
  sharedos::audit::server::AuditService service(log, **authenticator);
  auto runner = sharedos::common::server::ServerRunner::Start({}, {&service});
  if (!runner.ok()) {
    state.SkipWithError(runner.status().ToString().c_str());
    return;
  }
  sharedos::audit::client::AuditClientOptions options;
  options.mode = local ? sharedos::audit::client::PreEffectMode::kLocal
                       : sharedos::audit::client::PreEffectMode::kRemote;
  options.token = "svc";
  options.outbox_path = FreshPath("outbox");
  auto client = sharedos::audit::client::AuditClient::Create(
      sharedos::audit::v1::AuditLog::NewStub(
          grpc::CreateChannel((*runner)->address(), grpc::InsecureChannelCredentials())),
      options);
  if (!client.ok()) {
    state.SkipWithError(client.status().ToString().c_str());
    return;
  }
  std::vector<double> latencies_us;
  for (auto _ : state) {
    AuditEvent event = MakeEvent(next_id.fetch_add(1));
    event.clear_id();
    const absl::Time t0 = absl::Now();
    if (!(*client)->RecordPreEffect(std::move(event)).ok()) {
      state.SkipWithError("pre-effect record failed");
      return;
    }
    latencies_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
  }
  (*client)->Flush(absl::Seconds(30));
  std::sort(latencies_us.begin(), latencies_us.end());
  state.counters["p50_us"] = latencies_us[latencies_us.size() / 2];
  state.counters["p99_us"] = latencies_us[latencies_us.size() * 99 / 100];
}
BENCHMARK(BM_PreEffectRecord)->ArgName("local")->Arg(0)->Arg(1)->UseRealTime();

// Where an appended event's time goes, per event (the parts of BM_AuditLogAppend's path that run
// before the writer).
void BM_ValidateEvent(benchmark::State& state) {
  AuditEvent event = MakeEvent(1);
  for (auto _ : state) {
    AuditEvent copy = event;
    benchmark::DoNotOptimize(sharedos::common::validation::ValidateAuditEvent(&copy, "event"));
  }
}
BENCHMARK(BM_ValidateEvent);

void BM_CanonicalEventJson(benchmark::State& state) {
  AuditEvent event = MakeEvent(1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(sharedos::audit::storage::CanonicalEventJson(event));
  }
}
BENCHMARK(BM_CanonicalEventJson);

// Every record and turn id is a fresh UUID (several per mediated call).
void BM_NewUuidV4(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(sharedos::common::NewUuidV4());
}
BENCHMARK(BM_NewUuidV4);

}  // namespace

BENCHMARK_MAIN();
