// How audit_svc's per-call costs grow with the log: one SQLite log (audit_svc/core AuditLog over
// SqliteAuditStore, durability normal) filled to each size of --sizes in turn, and at each size,
// in the same run:
//   append   p50 of one single-event AppendEvent (the pre-effect pattern: a group of one);
//   query    p50 of a Query filtered on one trace (10 records of the log, indexed lookup keys);
//   verify   p50 of a Verify from the last checkpoint: the --verify_tail records before the head
//            (a checkpoint every 10 s signs the head; what a periodic Verify then re-checks);
//   bytes    the database's bytes (main file and WAL) per record.
// The log is filled between the points (the fill rate is printed too), --fill:
//   log    two callers appending 1,000-event requests through the same AuditLog (the default);
//   store  the fixture builder: two threads validate, stamp and encode events with the code
//          AuditLog runs (ValidateAuditEvent, the writer stamp, CanonicalEventJson,
//          DeriveColumns) and hand --fill_batch of them at a time to the store's own Append, one
//          transaction each, which links the hash chain and inserts as it does for a group
//          commit. The records are those AuditLog would have written; only the grouping differs.
//          Each point then opens an AuditLog over the store (as a restarted audit_svc would).
// --db: "sqlite" (a file, durability normal) or "postgres" (PostgresAuditStore, synchronous_commit
// off, on a throwaway cluster at the server's defaults: tests/testing/postgres_cluster.h; exits 2
// naming the PostgreSQL binaries when they are missing). Bytes per record on PostgreSQL: the
// audit tables with their indexes and TOAST (pg_total_relation_size), WAL not counted.
// --fixture=<file> (SQLite): keep the log there and reuse it in later runs: records already in it
// count towards each size, so a run over a cached 10M-record fixture only measures.
// A per-call cost that rises with the log's size is a defect (docs/performance.md, scale table).
//
//   bazel run //tools/bench:audit_scale_bench -- --sizes=10000,100000,1000000
//   bazel run //tools/bench:audit_scale_bench -- --sizes=10000000 --fill=store
//       --fixture=/tmp/sharedos-scale-audit-10m.db   (one command)
//   bazel run //tools/bench:audit_scale_bench -- --sizes=10000,1000000 --fill=store --db=postgres
//
// Each timed call's CPU on the calling thread is reported beside its wall time (the machine may be
// shared: the CPU figures are the steadier ones). One line per size: "audit_scale records=N
// head=H append_p50_us=... query_p50_us=... verify_p50_us=... append_cpu_p50_us=...
// query_cpu_p50_us=... verify_cpu_p50_us=... verify_checked=... bytes_per_record=...
// fill_events_per_s=... reused=..." (reused: records the fixture already held at the start).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/storage/audit_store.h"
#include "audit_svc/storage/event_codec.h"
#include "audit_svc/storage/postgres_audit_store.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/time/clock.h"
#include "common/validation/protocol.h"
#include "tests/testing/postgres_cluster.h"
#include "tools/bench/bench_deployment.h"

ABSL_FLAG(std::string, sizes, "10000,100000,1000000",
          "Log sizes (records, ascending) at which the costs are measured.");
ABSL_FLAG(int, samples, 300, "Timed appends and queries per size.");
ABSL_FLAG(int, verify_samples, 20, "Timed Verify calls per size.");
ABSL_FLAG(int, verify_tail, 1000, "Records a Verify from the last checkpoint checks.");
ABSL_FLAG(std::string, dir, "", "Directory for the database (default: $TEST_TMPDIR or /tmp).");
ABSL_FLAG(std::string, db, "sqlite", "sqlite, or postgres (a throwaway cluster).");
ABSL_FLAG(std::string, fill, "log", "How the log is filled between points: log or store.");
ABSL_FLAG(int, fill_batch, 5000, "--fill=store: events per store transaction.");
ABSL_FLAG(std::string, fixture, "",
          "SQLite: keep the log in this file and reuse what it holds (default: a scratch file, "
          "removed at the end).");

namespace {

using ::sharedos::audit::core::AuditLog;
using ::sharedos::audit::storage::AuditStore;
using ::sharedos::audit::storage::PendingEvent;
using ::sharedos::audit::storage::PostgresAuditStore;
using ::sharedos::audit::storage::SqliteAuditStore;
using ::sharedos::bench::Die;
using ::sharedos::protocol::v1::AuditEvent;
using Clock = std::chrono::steady_clock;

constexpr int kBatch = 1000;
constexpr int kRecordsPerTrace = 10;
constexpr char kWriter[] = "service:authorizer";

// An authorization.checked record like a mediated call's (about 600 bytes of canonical JSON),
// its trace shared with the 9 records before or after it.
AuditEvent MakeEvent(int64_t n) {
  AuditEvent event;
  event.set_version("1");
  event.set_id(absl::StrCat("scale-", n, "-0000-4000-8000-000000000000"));
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_ALLOWED);
  event.mutable_at()->set_seconds(1786438800 + n / 100);
  event.set_trace_id(absl::StrCat("trace-", n / kRecordsPerTrace));
  event.set_namespace_id("world-bench");
  event.mutable_actor()->set_agent_id(absl::StrCat("agent-", n % 100));
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
  fields["executionId"].set_string_value(absl::StrCat("exec-", n / kRecordsPerTrace));
  return event;
}

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// CPU time of the calling thread (user + system), in µs: what a call itself cost, whatever else
// the machine runs (Query and Verify run on the caller's thread, and so does an append alone in
// the log: a group of one).
double ThreadCpuMicros() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

double P50(const std::vector<double>& values) { return sharedos::bench::Percentile(values, 0.5); }

int64_t FileBytes(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<int64_t>(size);
}

// The fixture builder (--fill=store): events [from, to) appended through the store's own Append in
// transactions of `batch` events, encoded by two threads with the code AuditLog runs before its
// writer (validation, the writer stamp, canonical JSON, indexed columns). While one thread's
// batch is being committed, the other encodes the next. False (with a message) on any error.
bool FillThroughStore(AuditStore& store, int64_t from, int64_t to, int batch) {
  std::atomic<int64_t> next{from};
  std::atomic<bool> failed{false};
  std::vector<std::thread> encoders;
  for (int t = 0; t < 2; ++t) {
    encoders.emplace_back([&] {
      std::vector<AuditEvent> events;
      // One submission, built in place (Append takes the batch by reference: no copy).
      std::vector<std::vector<PendingEvent>> submissions(1);
      std::vector<PendingEvent>& pending = submissions[0];
      while (!failed) {
        const int64_t first = next.fetch_add(batch);
        if (first >= to) return;
        const int64_t count = std::min<int64_t>(batch, to - first);
        events.clear();
        events.reserve(count);  // `pending` points into it
        pending.clear();
        pending.resize(count);
        for (int64_t i = 0; i < count; ++i) {
          events.push_back(MakeEvent(first + i));
          AuditEvent& event = events.back();
          absl::Status valid = sharedos::common::validation::ValidateAuditEvent(&event, "event");
          (*event.mutable_metadata()->mutable_fields())["writer"].set_string_value(kWriter);
          auto json = sharedos::audit::storage::CanonicalEventJson(event);
          if (!valid.ok() || !json.ok()) {
            std::fprintf(stderr, "encode: %s %s\n", valid.ToString().c_str(),
                         json.status().ToString().c_str());
            failed = true;
            return;
          }
          pending[i].event = &event;
          pending[i].canonical_json = *std::move(json);
          pending[i].columns = sharedos::audit::storage::DeriveColumns(event);
        }
        auto result = store.Append(submissions, absl::Now());
        if (!result.ok() || result->submissions.size() != 1 || !result->submissions[0].accepted ||
            static_cast<int64_t>(result->submissions[0].events.size()) != count) {
          std::fprintf(stderr, "store append: %s\n", result.status().ToString().c_str());
          failed = true;
          return;
        }
      }
    });
  }
  for (auto& encoder : encoders) encoder.join();
  return !failed;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::vector<int64_t> sizes;
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',')) {
    int64_t size = 0;
    if (!absl::SimpleAtoi(part, &size) || size <= 0 || (!sizes.empty() && size <= sizes.back())) {
      Die("--sizes: positive and ascending");
    }
    sizes.push_back(size);
  }
  const std::string db = absl::GetFlag(FLAGS_db);
  const std::string fill = absl::GetFlag(FLAGS_fill);
  const int fill_batch = absl::GetFlag(FLAGS_fill_batch);
  if (db != "sqlite" && db != "postgres") Die("--db: sqlite or postgres");
  if (fill != "log" && fill != "store") Die("--fill: log or store");
  if (fill_batch <= 0 || fill_batch > 100000) Die("--fill_batch: 1..100000");
  const std::string fixture = absl::GetFlag(FLAGS_fixture);
  if (!fixture.empty() && db != "sqlite") Die("--fixture: SQLite only");

  std::string dir = absl::GetFlag(FLAGS_dir);
  if (dir.empty()) dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string path =
      fixture.empty() ? absl::StrCat(dir, "/sharedos-audit-scale-", getpid(), ".db") : fixture;
  if (fixture.empty() && db == "sqlite") {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  }
  std::unique_ptr<sharedos::testing::PostgresCluster> cluster;
  std::string uri;
  if (db == "postgres") {
    // Exits 2 ("no PostgreSQL") when the server binaries are missing: run_scale.sh skips the step.
    cluster = sharedos::testing::CreateClusterOrExit("audit_scale_bench");
    auto database = cluster->CreateDatabase("audit_scale");
    if (!database.ok()) Die(database.status().ToString());
    uri = *database;
  }
  const auto open_store = [&]() -> std::unique_ptr<AuditStore> {
    if (db == "sqlite") {
      auto store = SqliteAuditStore::Open(path, {SqliteAuditStore::Durability::kNormal});
      if (!store.ok()) Die(store.status().ToString());
      return *std::move(store);
    }
    PostgresAuditStore::Options options;
    options.uri = uri;
    options.durability = PostgresAuditStore::Durability::kNormal;
    auto store = PostgresAuditStore::Open(options);
    if (!store.ok()) Die(store.status().ToString());
    return *std::move(store);
  };
  const auto stored_bytes = [&]() -> int64_t {
    if (db == "sqlite") return FileBytes(path) + FileBytes(path + "-wal");
    // psql from the cluster's own binaries (the size functions are server-side SQL).
    const std::string command = absl::StrCat(
        cluster->bindir(), "/psql -X -At -h 127.0.0.1 -p ", cluster->port(),
        " -U postgres -d audit_scale -c \"SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = "
        "'public' AND c.relkind = 'r' AND c.relname LIKE 'audit%'\"");
    FILE* pipe = popen(command.c_str(), "r");
    char line[64] = {0};
    const bool read = pipe != nullptr && std::fgets(line, sizeof(line), pipe) != nullptr;
    if (pipe != nullptr) pclose(pipe);
    int64_t bytes = 0;
    if (!read || !absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &bytes)) {
      Die("cannot read the audit tables' size with psql");
    }
    return bytes;
  };

  std::unique_ptr<AuditStore> store = open_store();
  auto head = store->GetHead();
  if (!head.ok()) Die(head.status().ToString());
  const int64_t reused = head->sequence;
  std::atomic<int64_t> next{reused};  // the next event number (the log holds 0..next-1)
  std::mt19937_64 rng(37);

  std::printf(
      "audit_scale_bench: %s, durability normal, fill %s%s, %s (%lld records already)\n",
      db == "sqlite" ? "SQLite" : "PostgreSQL (throwaway cluster, server defaults)", fill.c_str(),
      fill == "store" ? absl::StrCat(" (", fill_batch, " per transaction)").c_str() : "",
      db == "sqlite" ? path.c_str() : "database audit_scale", static_cast<long long>(reused));
  std::fflush(stdout);
  for (const int64_t size : sizes) {
    const auto fill_start = Clock::now();
    const int64_t fill_from = next.load();
    if (fill == "store" && fill_from < size) {
      if (!FillThroughStore(*store, fill_from, size, fill_batch)) Die("fill failed");
    }
    // The log over the store, as audit_svc runs it (a new one per point: as after a restart).
    auto log = std::make_unique<AuditLog>(std::move(store), sharedos::common::RealClock(),
                                          AuditLog::Options{});
    if (fill == "log" && fill_from < size) {
      // Two callers, 1,000-event requests built outside the log's lock.
      std::atomic<int64_t> batch{0};
      std::atomic<bool> failed{false};
      std::vector<std::thread> callers;
      for (int c = 0; c < 2; ++c) {
        callers.emplace_back([&] {
          while (!failed) {
            const int64_t first = fill_from + batch.fetch_add(1) * kBatch;
            if (first >= size) return;
            const int64_t count = std::min<int64_t>(kBatch, size - first);
            sharedos::audit::v1::AppendRequest request;
            for (int64_t i = 0; i < count; ++i) *request.add_events() = MakeEvent(first + i);
            auto response = log->Append(request, kWriter);
            if (!response.ok() || response->appended() != count) {
              std::fprintf(stderr, "append: %s\n", response.status().ToString().c_str());
              failed = true;
            }
          }
        });
      }
      for (auto& caller : callers) caller.join();
      if (failed) Die("fill failed");
    }
    next = std::max(next.load(), size);
    const double fill_seconds = Micros(Clock::now() - fill_start) / 1e6;
    const double fill_rate =
        fill_seconds > 0 ? static_cast<double>(next.load() - fill_from) / fill_seconds : 0;

    // The first Query indexes whatever the background indexer has not yet: untimed.
    sharedos::audit::v1::QueryRequest query;
    query.mutable_filter()->set_trace_id("trace-0");
    if (!log->Query(query).ok()) Die("query failed");

    std::vector<double> append, queried, verified, append_cpu, query_cpu, verify_cpu;
    const int samples = absl::GetFlag(FLAGS_samples);
    for (int i = 0; i < samples; ++i) {
      AuditEvent event = MakeEvent(next.fetch_add(1));
      const double cpu = ThreadCpuMicros();
      const auto start = Clock::now();
      auto response = log->AppendEvent(std::move(event), kWriter);
      append.push_back(Micros(Clock::now() - start));
      append_cpu.push_back(ThreadCpuMicros() - cpu);
      if (!response.ok()) Die("append: " + response.status().ToString());
    }
    std::uniform_int_distribution<int64_t> trace(0, size / kRecordsPerTrace - 1);
    for (int i = 0; i < samples; ++i) {
      query.mutable_filter()->set_trace_id(absl::StrCat("trace-", trace(rng)));
      const double cpu = ThreadCpuMicros();
      const auto start = Clock::now();
      auto response = log->Query(query);
      queried.push_back(Micros(Clock::now() - start));
      query_cpu.push_back(ThreadCpuMicros() - cpu);
      if (!response.ok() || response->records_size() == 0) Die("query found nothing");
    }
    const int64_t head_sequence = log->HeadSequence();
    sharedos::audit::v1::VerifyRequest verify;
    verify.set_from_sequence(
        std::max<int64_t>(1, head_sequence - absl::GetFlag(FLAGS_verify_tail) + 1));
    int64_t checked = 0;
    for (int i = 0; i < absl::GetFlag(FLAGS_verify_samples); ++i) {
      const double cpu = ThreadCpuMicros();
      const auto start = Clock::now();
      auto response = log->Verify(verify);
      verified.push_back(Micros(Clock::now() - start));
      verify_cpu.push_back(ThreadCpuMicros() - cpu);
      if (!response.ok() || !response->ok()) Die("verify failed");
      checked = response->checked();
    }
    log.reset();  // its store closes with it: the WAL checkpointed as audit_svc leaves it
    const int64_t bytes = stored_bytes();
    std::printf(
        "audit_scale records=%lld head=%lld append_p50_us=%.1f query_p50_us=%.1f "
        "verify_p50_us=%.1f "
        "append_cpu_p50_us=%.1f query_cpu_p50_us=%.1f verify_cpu_p50_us=%.1f "
        "verify_checked=%lld bytes_per_record=%.1f fill_events_per_s=%.0f reused=%lld\n",
        static_cast<long long>(size), static_cast<long long>(head_sequence), P50(append),
        P50(queried), P50(verified), P50(append_cpu), P50(query_cpu), P50(verify_cpu),
        static_cast<long long>(checked),
        static_cast<double>(bytes) / static_cast<double>(head_sequence), fill_rate,
        static_cast<long long>(std::min(reused, size)));
    std::fflush(stdout);
    store = open_store();
  }
  store.reset();
  if (fixture.empty() && db == "sqlite") {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  }
  return 0;
}
