// Benchmarks of the authorization core. Names carry the grant or tool count:
//   BM_Decide/256, BM_Decide/8        one invocation decision served by the LAST grant
//                                     (the worst allow case), 10 capabilities per grant;
//   BM_DecideDenied/256               no grant serves: full scan, explanation and
//                                     requiredAuthority built;
//   BM_Discover/200                   200 tool ceilings discovered against 256 grants (one
//                                     iteration = the whole catalogue);
//   BM_Resolve/256                    the per-turn cost: validation, authorityHash, compiling
//                                     (the same grants every turn: checked and rendered once);
//   BM_ResolveFirst/256               the same, the first time these grants are seen;
//   BM_ResolveWithCopy/256            BM_Resolve with the copy of its input grants timed;
//   BM_Baseline_LinearScan/256        the same allow decision by a naive scan applying the
//                                     §2.3 definition to the protos (the ratio's baseline);
//   BM_Baseline_CanonicalJsonOfOneGrant  canonical JSON of one grant (another yardstick).
// Run: bazel run -c opt //authorizer_svc/core:capability_authorizer_bench --
// --benchmark_repetitions=10

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "authorizer_svc/core/bench_world.h"
#include "authorizer_svc/core/capability_authorizer.h"
#include "benchmark/benchmark.h"
#include "capability/eligibility.h"
#include "capability/matching.h"
#include "capability/test_builders.h"
#include "common/json/canonical_json.h"
#include "common/json/protocol_json.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::capability::testing::MakeContext;
using testing::BenchCeilings;
using testing::BenchGrants;
using testing::TargetRequirement;
using testing::UnservedRequirement;

// Null when the grants are refused (more than 256: grant_limit_exceeded).
std::shared_ptr<const ResolvedAuthority> Resolve(int grants) {
  return AuthorityResolution::Resolve(MakeContext(), BenchGrants(grants), HostPolicyState::Absent())
      .authority();
}

void BM_Decide(benchmark::State& state) {
  const auto authority = Resolve(static_cast<int>(state.range(0)));
  if (authority == nullptr) {
    state.SkipWithError("grants refused");
    return;
  }
  const CapabilityAuthorizer authorizer;
  const auto request = TargetRequirement();
  for (auto _ : state) {
    AuthorizationResult result = authorizer.Authorize(*authority, request);
    benchmark::DoNotOptimize(result);
    if (!result.allowed) state.SkipWithError("not allowed");
  }
}
// 1, 16 and 64 grants: the scale table's curve up to 256 (tools/bench/run_scale.sh). An
// authority of more than 256 grants is refused (grant_limit_exceeded), so none is decided on.
BENCHMARK(BM_Decide)->Arg(256)->Arg(8)->Arg(1)->Arg(16)->Arg(64);

void BM_DecideDenied(benchmark::State& state) {
  const auto authority = Resolve(static_cast<int>(state.range(0)));
  const CapabilityAuthorizer authorizer;
  const auto request = UnservedRequirement();
  for (auto _ : state) {
    AuthorizationResult result = authorizer.Authorize(*authority, request);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_DecideDenied)->Arg(256);

void BM_Discover(benchmark::State& state) {
  const auto authority = Resolve(256);
  const CapabilityAuthorizer authorizer;
  const auto ceilings = BenchCeilings(static_cast<int>(state.range(0)));
  int discoverable = 0;
  for (auto _ : state) {
    discoverable = 0;
    for (const auto& ceiling : ceilings) {
      discoverable += authorizer.Discover(*authority, ceiling).allowed;
    }
    benchmark::DoNotOptimize(discoverable);
  }
  state.counters["discoverable"] = discoverable;
}
BENCHMARK(BM_Discover)->Arg(200)->Unit(benchmark::kMicrosecond);

// The grants are copied outside the timing: the authorizer moves the grant store's answer in.
// Dropping the resolution (the turn's end) is timed.
void BM_Resolve(benchmark::State& state) {
  const auto grants = BenchGrants(static_cast<int>(state.range(0)));
  const auto context = MakeContext();
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<protocol::v1::CapabilityGrant> loaded = grants;
    state.ResumeTiming();
    AuthorityResolution resolution =
        AuthorityResolution::Resolve(context, std::move(loaded), HostPolicyState::Absent());
    benchmark::DoNotOptimize(resolution);
  }
}
BENCHMARK(BM_Resolve)->Arg(256)->Arg(1)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);

// BM_Resolve as measured before 2026-12-02 session 9: the by-value copy of the grants timed.
void BM_ResolveWithCopy(benchmark::State& state) {
  const auto grants = BenchGrants(static_cast<int>(state.range(0)));
  const auto context = MakeContext();
  for (auto _ : state) {
    AuthorityResolution resolution =
        AuthorityResolution::Resolve(context, grants, HostPolicyState::Absent());
    benchmark::DoNotOptimize(resolution);
  }
}
BENCHMARK(BM_ResolveWithCopy)->Arg(256)->Unit(benchmark::kMicrosecond);

// The first resolution of a grant set: none of its grants checked and rendered before.
void BM_ResolveFirst(benchmark::State& state) {
  const auto grants = BenchGrants(static_cast<int>(state.range(0)));
  const auto context = MakeContext();
  for (auto _ : state) {
    state.PauseTiming();
    internal::ClearGrantMemoForTesting();
    std::vector<protocol::v1::CapabilityGrant> loaded = grants;
    state.ResumeTiming();
    AuthorityResolution resolution =
        AuthorityResolution::Resolve(context, std::move(loaded), HostPolicyState::Absent());
    benchmark::DoNotOptimize(resolution);
  }
}
BENCHMARK(BM_ResolveFirst)->Arg(256)->Unit(benchmark::kMicrosecond);

// The §2.3 definition applied grant by grant to the protos, as a straightforward
// implementation would: eligibility, then each capability.
void BM_Baseline_LinearScan(benchmark::State& state) {
  const auto authority = Resolve(static_cast<int>(state.range(0)));
  const auto request = TargetRequirement();
  const auto& context = authority->context();
  for (auto _ : state) {
    const capability::DecisionInstants instants =
        *capability::ResolveInstants(context, std::nullopt);
    const protocol::v1::CapabilityGrant* matched = nullptr;
    for (const auto& grant : authority->grants()) {
      if (capability::InactiveReason(grant, context.purpose(), instants).has_value()) continue;
      for (const auto& capability : grant.capabilities()) {
        if (capability::CapabilityMatches(capability, request, context.owner())) {
          matched = &grant;
          break;
        }
      }
      if (matched != nullptr) break;
    }
    benchmark::DoNotOptimize(matched);
  }
}
BENCHMARK(BM_Baseline_LinearScan)->Arg(256)->Arg(8)->Arg(1)->Arg(16)->Arg(64);

void BM_Baseline_CanonicalJsonOfOneGrant(benchmark::State& state) {
  const auto grant = BenchGrants(1).front();
  for (auto _ : state) {
    std::string text = common::CanonicalJson(*common::CapabilityGrantToJson(grant));
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_Baseline_CanonicalJsonOfOneGrant);

}  // namespace
}  // namespace sharedos::authorizer::core
