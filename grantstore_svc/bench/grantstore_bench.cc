// grantstore_svc latency and throughput, in-process (core + store, no gRPC):
//   LoadAuthority of a 100-grant authority, TryConsume (usage durability full and normal),
//   and sustained IssueGrant with synchronous=FULL.
//
// The fixture (namespace "bench": --grants grants spread round-robin over --actors actors, all
// issued by human:owner) is built once through the GrantStore API (WriteTransaction::InsertGrant,
// 10,000 grants per transaction) into --fixture and reused while it matches.
//
//   bazel run -c opt //grantstore_svc/bench:grantstore_bench --
//       --fixture=/tmp/grantstore_bench_1m.db --grants=1000000 --actors=10000
//
// --db=postgres (the store on PostgreSQL instead): the fixture goes into a throwaway cluster
// started for the run (tests/testing/postgres_cluster: the server's defaults, fsync=on,
// synchronous_commit=on, printed at start), under /tmp like the SQLite file; --db=postgresql://...
// uses that database instead (the fixture is reused there while it matches). On PostgreSQL
// TryConsume has one durability (the server's synchronous_commit): BM_TryConsume_Normal skips.
//
// Every benchmark reports p50/p90/p99 (µs) of individual operations as counters.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "audit_svc/client/audit_writer.h"
#include "benchmark/benchmark.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/grpc_grant_store_client.h"
#include "grantstore_svc/client/local_grant_store_client.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "grantstore_svc/server/grantstore_service.h"
#include "grantstore_svc/storage/open_grant_store.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "grpcpp/grpcpp.h"
#include "tests/testing/postgres_cluster.h"

// Every heap allocation of this process (malloc, calloc, realloc to a new block; operator new
// goes through malloc), for BM_TryConsumeHop's allocations per call.
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
}
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace
extern "C" void* malloc(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
extern "C" void* calloc(size_t count, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, size);
}
extern "C" void* realloc(void* pointer, size_t size) {
  if (pointer == nullptr) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(pointer, size);
}

namespace sharedos::grantstore::bench {
namespace {

namespace pb = ::sharedos::protocol::v1;
using storage::SqliteGrantStore;

struct Config {
  // "" (SQLite at `fixture`), "postgres" (a throwaway cluster) or a PostgreSQL URI.
  std::string db;
  std::string fixture = "/tmp/grantstore_bench_1m.db";
  int64_t grants = 1000000;
  int actors = 10000;
  int64_t reader_mmap_bytes = 0;
};
Config& GetConfig() {
  static Config config;
  return config;
}

// Accepts every event (the audit path is measured by audit_svc's own benchmarks).
class NullAuditWriter : public audit::client::AuditWriter {
 public:
  absl::Status RecordPreEffect(pb::AuditEvent) override { return absl::OkStatus(); }
  absl::Status RecordPostEffect(pb::AuditEvent) override { return absl::OkStatus(); }
  absl::Status RecordControlPlane(audit::v1::ControlPlaneEvent) override {
    return absl::OkStatus();
  }
};

std::string ActorId(int actor) { return absl::StrFormat("actor-%05d", actor); }

pb::CapabilityGrant FixtureGrant(int actor, int64_t index) {
  pb::CapabilityGrant grant;
  grant.set_id(absl::StrFormat("g-%05d-%07d", actor, index));
  grant.set_namespace_id("bench");
  grant.mutable_subject()->set_agent_id(ActorId(actor));
  grant.mutable_issuer()->set_human_user_id("owner");
  pb::Capability* capability = grant.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path(ActorId(actor));
  capability->mutable_resource()->add_path(absl::StrCat("doc-", index));
  capability->add_actions("read");
  capability->add_actions("write");
  capability->set_scope(pb::SCOPE_DESCENDANTS);
  grant.mutable_constraints()->add_purposes("assist");
  grant.mutable_issued_at()->set_seconds(1700000000);
  return grant;
}

// The fixture's name in messages: the SQLite path, never a PostgreSQL URI (it may hold a
// password).
std::string FixtureLabel(const Config& config) {
  return config.db.empty() ? config.fixture : std::string("in PostgreSQL");
}

// Builds the fixture unless a complete one is already there (its last grant exists).
void EnsureFixture(storage::GrantStore& store, const Config& config) {
  const int last_actor = static_cast<int>((config.grants - 1) % config.actors);
  const pb::CapabilityGrant last = FixtureGrant(last_actor, config.grants - 1);
  auto existing = store.GetGrant("bench", last.id(), std::nullopt);
  if (existing.ok() && existing->has_value()) {
    std::fprintf(stderr, "fixture %s: reusing (%lld grants)\n", FixtureLabel(config).c_str(),
                 static_cast<long long>(config.grants));
    return;
  }
  std::fprintf(stderr, "fixture %s: building %lld grants over %d actors...\n",
               FixtureLabel(config).c_str(), static_cast<long long>(config.grants), config.actors);
  const auto start = std::chrono::steady_clock::now();
  constexpr int64_t kBatch = 10000;
  for (int64_t begin = 0; begin < config.grants; begin += kBatch) {
    auto txn = store.BeginWrite();
    if (!txn.ok()) {
      std::fprintf(stderr, "%s\n", txn.status().ToString().c_str());
      std::exit(1);
    }
    for (int64_t i = begin; i < std::min(config.grants, begin + kBatch); ++i) {
      // Round-robin over actors: an actor's grants are spread over the whole table.
      const absl::Status status =
          (*txn)->InsertGrant(FixtureGrant(static_cast<int>(i % config.actors), i));
      if (!status.ok()) {
        std::fprintf(stderr, "%s\n", status.ToString().c_str());
        std::exit(1);
      }
    }
    const absl::Status status = (*txn)->Commit();
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      std::exit(1);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "fixture built in %.1f s (%.0f grants/s)\n", seconds,
               config.grants / seconds);
}

// Where the store is: the SQLite fixture file, or a PostgreSQL URI (a throwaway cluster's,
// started once and printing the settings the figures depend on).
std::string StoreLocation(const Config& config) {
  if (config.db.empty()) return config.fixture;
  if (config.db != "postgres") return config.db;
  static const std::string uri = [] {
    absl::StatusOr<testing::PostgresCluster*> cluster = testing::PostgresCluster::Shared();
    if (!cluster.ok()) {
      std::fprintf(stderr, "PostgreSQL: %s\n", cluster.status().ToString().c_str());
      std::exit(1);
    }
    absl::StatusOr<std::string> database = (*cluster)->CreateDatabase("grantstore_bench");
    if (!database.ok()) {
      std::fprintf(stderr, "PostgreSQL: %s\n", database.status().ToString().c_str());
      std::exit(1);
    }
    std::fputs(
        (*cluster)
            ->DescribeSettings({"server_version", "fsync", "synchronous_commit", "shared_buffers"})
            .c_str(),
        stderr);
    return *database;
  }();
  return uri;
}

bool OnPostgres() { return !GetConfig().db.empty(); }

// One store + core over the fixture per usage durability.
struct Env {
  std::unique_ptr<storage::GrantStore> store;
  NullAuditWriter audit;
  std::unique_ptr<core::GrantStoreCore> core;
};

Env& GetEnv(SqliteGrantStore::UsageDurability durability) {
  static absl::Mutex mu;
  static Env* envs[2] ABSL_GUARDED_BY(mu) = {nullptr, nullptr};
  absl::MutexLock lock(&mu);
  Env*& env = envs[durability == SqliteGrantStore::UsageDurability::kFull ? 0 : 1];
  if (env == nullptr) {
    env = new Env();
    storage::GrantStoreOptions options;
    options.sqlite.usage_durability = durability;
    options.sqlite.reader_mmap_bytes = GetConfig().reader_mmap_bytes;
    auto store = storage::OpenGrantStore(StoreLocation(GetConfig()), options);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      std::exit(1);
    }
    env->store = *std::move(store);
    EnsureFixture(*env->store, GetConfig());
    env->core =
        std::make_unique<core::GrantStoreCore>(*env->store, env->audit, common::RealClock());
  }
  return *env;
}

// Per-operation latencies, merged across threads, reported as percentiles (µs).
class Samples {
 public:
  void Add(std::chrono::steady_clock::duration d) {
    values_.push_back(std::chrono::duration<double, std::micro>(d).count());
  }
  void Report(benchmark::State& state) {
    if (values_.empty()) return;
    std::sort(values_.begin(), values_.end());
    auto at = [&](double q) {
      return values_[std::min(values_.size() - 1, static_cast<size_t>(q * values_.size()))];
    };
    // Per-thread percentiles, averaged over threads (not summed).
    state.counters["p50_us"] = benchmark::Counter(at(0.50), benchmark::Counter::kAvgThreads);
    state.counters["p90_us"] = benchmark::Counter(at(0.90), benchmark::Counter::kAvgThreads);
    state.counters["p99_us"] = benchmark::Counter(at(0.99), benchmark::Counter::kAvgThreads);
  }

 private:
  std::vector<double> values_;
};

void BM_LoadAuthority100(benchmark::State& state) {
  Env& env = GetEnv(SqliteGrantStore::UsageDurability::kFull);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> actor(0, GetConfig().actors - 1);
  v1::LoadAuthorityRequest request;
  request.set_namespace_id("bench");
  request.mutable_authority()->set_human_user_id("owner");
  const int64_t expected = GetConfig().grants / GetConfig().actors;
  Samples samples;
  for (auto _ : state) {
    request.mutable_actor()->set_agent_id(ActorId(actor(rng)));
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<v1::LoadAuthorityResponse> response = env.core->LoadAuthority(request);
    samples.Add(std::chrono::steady_clock::now() - start);
    if (!response.ok() || response->grants_size() != expected) {
      state.SkipWithError("LoadAuthority failed or returned the wrong grants");
      break;
    }
  }
  samples.Report(state);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LoadAuthority100)->UseRealTime()->MinTime(3);

// The same over gRPC: a GrantStoreService on 127.0.0.1:0 in this process, one caller with a
// service credential (the loopback round trip, ~90 µs here, is included).
void BM_LoadAuthority100_Grpc(benchmark::State& state) {
  Env& env = GetEnv(SqliteGrantStore::UsageDurability::kFull);
  static constexpr char kToken[] = "bench-service-token";
  auto authenticator = common::server::Authenticator::FromJson(absl::StrCat(
      R"({"credentials": [{"name": "authorizer", "role": "service", "token_sha256": ")",
      common::server::TokenDigestHex(kToken), R"("}]})"));
  if (!authenticator.ok()) {
    state.SkipWithError("credentials");
    return;
  }
  server::GrantStoreService service(*env.core, **authenticator);
  auto runner = common::server::ServerRunner::Start(common::server::ServerOptions{}, {&service});
  if (!runner.ok()) {
    state.SkipWithError("server");
    return;
  }
  auto stub = v1::GrantStore::NewStub(
      grpc::CreateChannel((*runner)->address(), grpc::InsecureChannelCredentials()));
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> actor(0, GetConfig().actors - 1);
  v1::LoadAuthorityRequest request;
  request.set_namespace_id("bench");
  request.mutable_authority()->set_human_user_id("owner");
  const int64_t expected = GetConfig().grants / GetConfig().actors;
  Samples samples;
  for (auto _ : state) {
    request.mutable_actor()->set_agent_id(ActorId(actor(rng)));
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", kToken));
    v1::LoadAuthorityResponse response;
    const auto start = std::chrono::steady_clock::now();
    const grpc::Status status = stub->LoadAuthority(&context, request, &response);
    samples.Add(std::chrono::steady_clock::now() - start);
    if (!status.ok() || response.grants_size() != expected) {
      state.SkipWithError("LoadAuthority failed or returned the wrong grants");
      break;
    }
  }
  samples.Report(state);
  state.SetItemsProcessed(state.iterations());
  (*runner)->Shutdown();
  (*runner)->Wait();
}
BENCHMARK(BM_LoadAuthority100_Grpc)->UseRealTime()->MinTime(3);

void TryConsume(benchmark::State& state, SqliteGrantStore::UsageDurability durability) {
  Env& env = GetEnv(durability);
  std::mt19937 rng(11 + state.thread_index());
  std::uniform_int_distribution<int64_t> index(0, GetConfig().grants - 1);
  v1::TryConsumeRequest request;
  request.set_namespace_id("bench");
  request.set_max_uses(1000000000);
  Samples samples;
  for (auto _ : state) {
    const int64_t i = index(rng);
    request.set_grant_id(FixtureGrant(static_cast<int>(i % GetConfig().actors), i).id());
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<v1::TryConsumeResponse> response = env.core->TryConsume(request);
    samples.Add(std::chrono::steady_clock::now() - start);
    if (!response.ok() || !response->consumed()) {
      state.SkipWithError("TryConsume failed");
      break;
    }
  }
  samples.Report(state);
  state.SetItemsProcessed(state.iterations());
}
void BM_TryConsume_Full(benchmark::State& state) {
  TryConsume(state, SqliteGrantStore::UsageDurability::kFull);
}
void BM_TryConsume_Normal(benchmark::State& state) {
  if (OnPostgres()) {
    state.SkipWithError("PostgreSQL: one usage durability (the server's synchronous_commit)");
    return;
  }
  TryConsume(state, SqliteGrantStore::UsageDurability::kNormal);
}
BENCHMARK(BM_TryConsume_Full)->UseRealTime()->MinTime(3);
BENCHMARK(BM_TryConsume_Normal)->UseRealTime()->MinTime(3);

// The hop from sharedosd's authorizer to its grant store on a consuming call, through the
// GrantStoreClient the authorizer holds (usage durability normal, so the store's own part is
// small): hop 0 = LocalGrantStoreClient (the core called directly, sharedosd since issue 33);
// hop 1 = GrpcGrantStoreClient over an in-process channel to a GrantStoreService with the
// authorizer's service credential (sharedosd before); hop 2 = hop 0 with that gRPC server
// started, idle, in the process. Reports allocations per call too.
void BM_TryConsumeHop(benchmark::State& state) {
  if (OnPostgres()) {
    state.SkipWithError("SQLite only");
    return;
  }
  Env& env = GetEnv(SqliteGrantStore::UsageDurability::kNormal);
  static constexpr char kToken[] = "bench-service-token";
  std::unique_ptr<client::GrantStoreClient> hop;
  std::unique_ptr<server::GrantStoreService> service;
  std::unique_ptr<common::server::ServerRunner> runner;
  if (state.range(0) == 0) {
    hop = std::make_unique<client::LocalGrantStoreClient>(*env.core);
  }
  if (state.range(0) != 0) {
    static auto* authenticator = new absl::StatusOr<std::unique_ptr<common::server::Authenticator>>(
        common::server::Authenticator::FromJson(absl::StrCat(
            R"({"credentials": [{"name": "authorizer", "role": "service", "token_sha256": ")",
            common::server::TokenDigestHex(kToken), R"("}]})")));
    if (!authenticator->ok()) {
      state.SkipWithError("credentials");
      return;
    }
    service = std::make_unique<server::GrantStoreService>(*env.core, ***authenticator);
    auto started =
        common::server::ServerRunner::Start(common::server::ServerOptions{}, {service.get()});
    if (!started.ok()) {
      state.SkipWithError("server");
      return;
    }
    runner = *std::move(started);
    if (state.range(0) == 1) {
      hop = std::make_unique<client::GrpcGrantStoreClient>(runner->InProcessChannel(), kToken);
    } else {
      hop = std::make_unique<client::LocalGrantStoreClient>(*env.core);
    }
  }
  std::mt19937 rng(13);
  std::uniform_int_distribution<int64_t> index(0, GetConfig().grants - 1);
  v1::TryConsumeRequest request;
  request.set_namespace_id("bench");
  request.set_max_uses(1000000000);
  Samples samples;
  uint64_t allocations = 0;
  for (auto _ : state) {
    const int64_t i = index(rng);
    request.set_grant_id(FixtureGrant(static_cast<int>(i % GetConfig().actors), i).id());
    const uint64_t allocations_start = g_allocations.load(std::memory_order_relaxed);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<v1::TryConsumeResponse> response = hop->TryConsume(request, {});
    samples.Add(std::chrono::steady_clock::now() - start);
    allocations += g_allocations.load(std::memory_order_relaxed) - allocations_start;
    if (!response.ok() || !response->consumed()) {
      state.SkipWithError("TryConsume failed");
      break;
    }
  }
  samples.Report(state);
  state.counters["allocs_per_call"] = static_cast<double>(allocations) /
                                      static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.SetItemsProcessed(state.iterations());
  hop.reset();
  if (runner != nullptr) {
    runner->Shutdown();
    runner->Wait();
  }
}
BENCHMARK(BM_TryConsumeHop)->ArgName("hop")->Arg(0)->Arg(1)->Arg(2)->UseRealTime()->MinTime(3);

// Sustained IssueGrant (one durable commit each: SQLite synchronous=FULL, PostgreSQL
// synchronous_commit=on) into the fixture store.
void BM_IssueGrant(benchmark::State& state) {
  Env& env = GetEnv(SqliteGrantStore::UsageDurability::kFull);
  static std::atomic<int64_t> next{0};
  const std::string run = absl::StrCat(std::chrono::steady_clock::now().time_since_epoch().count());
  v1::IssueGrantRequest request;
  *request.mutable_grant() = FixtureGrant(0, 0);
  request.mutable_grant()->set_namespace_id("bench-issue");
  Samples samples;
  for (auto _ : state) {
    request.mutable_grant()->set_id(absl::StrCat("issued-", run, "-", next.fetch_add(1)));
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<v1::IssueGrantResponse> response =
        env.core->IssueGrant(core::InProcessOperator("bench"), request);
    samples.Add(std::chrono::steady_clock::now() - start);
    if (!response.ok()) {
      state.SkipWithError(std::string(response.status().message()).c_str());
      break;
    }
  }
  samples.Report(state);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_IssueGrant)->UseRealTime()->MinTime(5);
BENCHMARK(BM_IssueGrant)->UseRealTime()->MinTime(5)->Threads(4);

}  // namespace
}  // namespace sharedos::grantstore::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  sharedos::grantstore::bench::Config& config = sharedos::grantstore::bench::GetConfig();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      const size_t n = std::strlen(name);
      return arg.compare(0, n, name) == 0 ? arg.c_str() + n : nullptr;
    };
    if (const char* v = value("--db=")) {
      config.db = v;
    } else if (const char* v = value("--fixture=")) {
      config.fixture = v;
    } else if (const char* v = value("--grants=")) {
      if (!absl::SimpleAtoi(v, &config.grants) || config.grants < 1) return 2;
    } else if (const char* v = value("--reader_mmap_bytes=")) {
      if (!absl::SimpleAtoi(v, &config.reader_mmap_bytes)) return 2;
    } else if (const char* v = value("--actors=")) {
      if (!absl::SimpleAtoi(v, &config.actors) || config.actors < 1) return 2;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", arg.c_str());
      return 2;
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
