#include "sharedosd/demo.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "grantstore_svc/core/owner_binding.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"

namespace sharedos::sharedosd {
namespace {

constexpr char kDemoGrant[] = R"pb(
  id: "grant-demo-assistant"
  namespace_id: "world-demo"
  subject { agent_id: "agent-assistant" }
  issuer { human_user_id: "user-alice" }
  capabilities {
    resource { namespace: "sharedos.execution" path: "agent" path: "agent-assistant" }
    actions: "invoke"
    scope: SCOPE_EXACT
  }
  capabilities {
    resource { namespace: "files" path: "Workspace" }
    actions: "read"
    scope: SCOPE_DESCENDANTS
  }
  capabilities {
    resource { namespace: "files" path: "Scratch" }
    actions: "create"
    scope: SCOPE_DESCENDANTS
  }
  capabilities {
    resource { namespace: "sharedos" path: "escalation" }
    actions: "request"
    scope: SCOPE_EXACT
  }
  constraints {}
  issued_at { seconds: 1700000000 }
)pb";

absl::Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
}

}  // namespace

protocol::v1::CapabilityGrant DemoGrant() {
  protocol::v1::CapabilityGrant grant;
  google::protobuf::TextFormat::ParseFromString(kDemoGrant, &grant);
  return grant;
}

absl::StatusOr<std::vector<std::string>> SeedDemo(grantstore::core::GrantStoreCore& grantstore,
                                                  const std::string& files_root) {
  std::vector<std::string> lines;
  grantstore::v1::GetGrantRequest get;
  get.set_namespace_id(kDemoNamespace);
  get.set_grant_id(kDemoGrantId);
  auto existing = grantstore.GetGrant(get);
  if (existing.ok()) {
    lines.push_back(
        absl::StrCat("grant ", kDemoGrantId, " in ", kDemoNamespace, " already present"));
    // Seeded before owner binding (ADR 0014): it reaches whichever owner a turn names.
    if (grantstore::core::ReachesAnyOwner(existing->grant())) {
      lines.push_back(absl::StrCat(
          "WARNING: ", kDemoGrantId,
          " was issued by an earlier version without an owner and reaches any owner's files; "
          "revoke it (sharedosctl grants revoke --namespace=",
          kDemoNamespace, " --id=", kDemoGrantId, ") or start from an empty --data_dir"));
    }
  } else if (absl::IsNotFound(existing.status())) {
    grantstore::v1::IssueGrantRequest issue;
    *issue.mutable_grant() = DemoGrant();
    auto issued =
        grantstore.IssueGrant(grantstore::core::InProcessOperator("sharedosd-demo"), issue);
    if (!issued.ok()) return issued.status();
    lines.push_back(absl::StrCat("issued grant ", kDemoGrantId, " in ", kDemoNamespace,
                                 " (agent:agent-assistant for human:user-alice, on alice's own "
                                 "resources only: read Workspace/**, create Scratch/**, "
                                 "escalate)"));
  } else {
    return existing.status();
  }

  std::string dir = files_root;
  for (const char* part : {"human", "user-alice", "workspace", "Workspace"}) {
    dir = absl::StrCat(dir, "/", part);
    if (absl::Status made = MakeDir(dir); !made.ok()) return made;
  }
  const std::string notes = dir + "/notes.txt";
  struct stat info;
  if (stat(notes.c_str(), &info) == 0) {
    lines.push_back(absl::StrCat("file ", notes, " already present"));
  } else {
    std::ofstream out(notes, std::ios::binary | std::ios::trunc);
    out << "buy milk\n";
    out.close();
    if (!out) return absl::FailedPreconditionError(absl::StrCat("cannot write ", notes));
    lines.push_back(absl::StrCat("wrote ", notes));
  }
  return lines;
}

std::string DemoNextSteps() {
  return "sharedosd: what to do next: in another terminal, from the repository root (README "
         "\"Quickstart\"):\n"
         "  export PATH=\"$PWD/bazel-bin/tools/sharedosctl:$PATH\"\n"
         "  out=$(sharedosctl turn); echo \"$out\"\n"
         "  ESC=$(echo \"$out\" | sed -n 's/^escalation: //p')\n"
         "  (umask 077; sharedosctl credentials issue --role=reviewer "
         "--principal=human:user-alice \\\n"
         "    --namespace=world-demo | sed -n 's/^secret: //p' > alice.token)\n"
         "  sharedosctl --token_file=alice.token escalations approve --id=\"$ESC\"\n"
         "  sharedosctl turn\n"
         "  sharedosctl audit verify\n";
}

}  // namespace sharedos::sharedosd
