#include "authorizer_svc/core/bench_world.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "capability/test_builders.h"

namespace sharedos::authorizer::core::testing {
namespace {

using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::Req;
using ::sharedos::capability::testing::T0;

const std::vector<std::string>& Namespaces() {
  static const auto* kNamespaces =
      new std::vector<std::string>{"files",  "repo", "calendar",           "github",
                                   "notion", "mail", "sharedos.messaging", "sharedos.execution"};
  return *kNamespaces;
}

const std::vector<std::string>& Actions() {
  static const auto* kActions = new std::vector<std::string>{
      "read",    "list",   "stat",   "search", "grep",   "create",
      "replace", "append", "delete", "send",   "invoke", "snapshot:create"};
  return *kActions;
}

std::string SegmentName(uint64_t i) { return absl::StrCat("seg-", i % 48); }

// A small linear congruential generator: the same world on every machine.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return state_ >> 33;
  }

 private:
  uint64_t state_;
};

}  // namespace

std::vector<protocol::v1::CapabilityGrant> BenchGrants(int grants, const std::string& id_prefix) {
  Lcg lcg(42);
  std::vector<protocol::v1::CapabilityGrant> result;
  for (int g = 0; g < grants; ++g) {
    GrantBuilder grant(absl::StrCat(id_prefix, g));
    const bool last = g == grants - 1;
    for (int c = 0; c < kCapabilitiesPerGrant; ++c) {
      if (last && c == kCapabilitiesPerGrant - 1) {
        grant.WithCapability(Cap("files", {"projects", "target-project"}, {"read", "list"}));
        continue;
      }
      std::vector<std::string> path;
      for (uint64_t depth = 1 + lcg.Next() % 3; depth > 0; --depth) {
        path.push_back(SegmentName(lcg.Next()));
      }
      std::vector<std::string> actions;
      for (uint64_t n = 1 + lcg.Next() % 3; n > 0; --n) {
        actions.push_back(Actions()[lcg.Next() % Actions().size()]);
      }
      grant.WithCapability(
          Cap(Namespaces()[lcg.Next() % Namespaces().size()], path, actions,
              lcg.Next() % 4 == 0 ? protocol::v1::SCOPE_EXACT : protocol::v1::SCOPE_DESCENDANTS));
    }
    if (g % 16 == 3) grant.ExpiresAt(T0() + absl::Hours(8));
    result.push_back(grant);
  }
  return result;
}

protocol::v1::CapabilityRequirement TargetRequirement() {
  return Req("files", {"projects", "target-project", "notes.md"}, "read");
}

protocol::v1::CapabilityRequirement UnservedRequirement() {
  return Req("files", {"projects", "other-project", "notes.md"}, "read");
}

std::vector<protocol::v1::CapabilityRequirement> BenchCeilings(int tools) {
  std::vector<protocol::v1::CapabilityRequirement> ceilings;
  for (int t = 0; t < tools; ++t) {
    std::vector<std::string> path;
    if (t % 3 != 0) path.push_back(SegmentName(static_cast<uint64_t>(t) * 7));
    ceilings.push_back(
        Req(Namespaces()[t % Namespaces().size()], path, Actions()[(t / 8) % Actions().size()]));
  }
  return ceilings;
}

}  // namespace sharedos::authorizer::core::testing
