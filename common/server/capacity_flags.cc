#include "common/server/capacity_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/server/long_poll_limiter.h"
#include "common/server/server_runner.h"

ABSL_FLAG(int, grpc_max_threads, 256,
          "Threads a gRPC server may run calls on; a call that finds none is RESOURCE_EXHAUSTED.");
ABSL_FLAG(int, max_long_polls_per_principal, 8,
          "Long-polls (MessageRoutes.Receive, Envelope.WatchTurn, AuditLog.Tail) one credential "
          "holds at once in one service; beyond, RESOURCE_EXHAUSTED.");
ABSL_FLAG(int, max_long_polls, 64,
          "Long-polls one service holds at once, every credential together (below "
          "--grpc_max_threads); beyond, RESOURCE_EXHAUSTED.");

namespace sharedos::common::server {

absl::Status ApplyCapacityFlags() {
  const int threads = absl::GetFlag(FLAGS_grpc_max_threads);
  const int per_principal = absl::GetFlag(FLAGS_max_long_polls_per_principal);
  const int total = absl::GetFlag(FLAGS_max_long_polls);
  if (threads < 16 || threads > 100000) {
    return absl::InvalidArgumentError("--grpc_max_threads: must be 16..100000");
  }
  if (per_principal < 1) {
    return absl::InvalidArgumentError("--max_long_polls_per_principal: must be at least 1");
  }
  // Three long-polling services may share one server (sharedosd): their long-polls together
  // must leave threads for unary calls.
  if (total < per_principal || 3 * total > threads - 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_long_polls: must be at least --max_long_polls_per_principal and at "
                     "most (--grpc_max_threads - 16) / 3 = ",
                     (threads - 16) / 3));
  }
  SetDefaultMaxThreads(threads);
  LongPollLimiter::SetDefaults(
      LongPollLimiter::Options{static_cast<size_t>(per_principal), static_cast<size_t>(total)});
  return absl::OkStatus();
}

}  // namespace sharedos::common::server
