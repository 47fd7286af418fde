// In-process cost of AuthorizerCore::Authorize on an open lease (no gRPC, no audit I/O): what the
// authorizer itself adds to a decision — request validation, lease lookup, the core's decision,
// building the authorization.checked record. 100 grants, the last one serving the request.
//
//   bazel run //authorizer_svc/core:authorizer_core_bench
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "benchmark/benchmark.h"
#include "capability/test_builders.h"
#include "common/time/clock.h"
#include "grantstore_svc/client/fake_grant_store_client.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::Req;
using ::sharedos::capability::testing::T0;

// Takes every record and drops it (the cost of durability is measured elsewhere).
class NullAuditWriter : public audit::client::AuditWriter {
 public:
  absl::Status RecordPreEffect(protocol::v1::AuditEvent event) override {
    benchmark::DoNotOptimize(event);
    return absl::OkStatus();
  }
  absl::Status RecordPostEffect(protocol::v1::AuditEvent) override { return absl::OkStatus(); }
  absl::Status RecordControlPlane(audit::v1::ControlPlaneEvent) override {
    return absl::OkStatus();
  }
};

void BM_AuthorizeOnLease(benchmark::State& state) {
  common::SimulatedClock clock(T0());
  grantstore::client::FakeGrantStoreClient store;
  NullAuditWriter audit;
  for (int i = 0; i < 100; ++i) {
    store.IssueGrant(
        GrantBuilder(absl::StrCat("grant-", i))
            .WithCapability(Cap("files", {"projects", i == 99 ? "target" : absl::StrCat("p", i)},
                                {"read", "write"})));
  }
  AuthorizerCore authorizer(store, audit, clock, "bench-secret-0123456789abcdef0123", {});
  v1::OpenTurnAuthorityRequest open;
  *open.mutable_context() = MakeContext();
  open.set_turn_id("turn-1");
  auto lease = authorizer.OpenTurnAuthority(open);
  v1::AuthorizeRequest request;
  request.set_lease_id(lease->lease_id());
  *request.mutable_requirement() = Req("files", {"projects", "target", "notes.md"}, "write");
  request.set_consume(true);
  request.set_operation_id("call-1");
  request.set_tool("files.write");
  for (auto _ : state) {
    auto answer = authorizer.Authorize(request);
    if (!answer.ok() || !answer->decision().allowed()) state.SkipWithError("not allowed");
    benchmark::DoNotOptimize(answer);
  }
}
BENCHMARK(BM_AuthorizeOnLease);

}  // namespace
}  // namespace sharedos::authorizer::core

BENCHMARK_MAIN();
