// The cost the journal of open turns adds to a turn (ADR 0009): one fsynced insert when it opens
// and one delete when it ends. Run: bazel run -c opt //envelope_svc/core:turn_journal_bench
// (the file goes to $TEST_TMPDIR or /tmp; the figure depends on the disk's fsync).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "envelope_svc/core/turn_journal.h"

namespace sharedos::envelope::core {
namespace {

void BM_OpenAndEndOneTurn(benchmark::State& state) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/turn_journal_bench_", getpid(), ".db");
  auto journal = TurnJournal::Open(path);
  if (!journal.ok()) {
    state.SkipWithError("the journal cannot be opened");
    return;
  }
  TurnJournal::Entry entry;
  entry.execution_id = "exec-bench";
  entry.context.set_namespace_id("ns-bench");
  entry.context.set_trace_id("trace-bench");
  entry.lease_id = "lease-bench";
  entry.started_at = absl::Now();
  entry.ended_event_id = "00000000-0000-4000-8000-000000000000";
  int64_t n = 0;
  for (auto _ : state) {
    entry.turn_id = absl::StrCat("turn-", n++);
    if (!(*journal)->Put(entry).ok() || !(*journal)->Remove(entry.turn_id).ok()) {
      state.SkipWithError("a journal write failed");
      break;
    }
  }
  state.SetItemsProcessed(n);
  journal->reset();
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
}
BENCHMARK(BM_OpenAndEndOneTurn)->UseRealTime();

}  // namespace
}  // namespace sharedos::envelope::core

BENCHMARK_MAIN();
