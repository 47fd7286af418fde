// The host clients' READMEs, verbatim: the quickstart block of clients/python/README.md and of
// clients/typescript/README.md, each a host program, generated against the protos (Debian's
// protoc with grpc_python_plugin; ts-proto from node_modules), type-checked (tsc) and run against
//   - `sharedosd --demo` (plaintext on loopback), and
//   - the four services as separate processes with TLS on every hop (SHAREDOS_TLS_CA), the demo
//     grant issued and alice's reviewer credential in place;
// each must print the README's lines: the read allowed, the write refused no_matching_grant and
// escalated with the denial's authority, pending, approved by alice, the write allowed in the next
// turn, an MCP turn's URL. Between the two languages the approved grant is revoked and the
// summary removed, so each starts from the same state. Last, with the grant store stopped, a turn
// is refused fail-closed and `sharedosctl explain` says so and names the next step.

#include <sys/stat.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/client/channel.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"
#include "tests/testing/test_certificates.h"

namespace sharedos {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace demo = ::sharedos::testing::demo;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::RunfilePath;
using ::sharedos::testing::SharedosdDeployment;
using ::sharedos::testing::TempPath;
using ::testing::HasSubstr;

struct Ran {
  int exit_code = -1;
  std::string output;
};

// `command` under sh: stdout and stderr together, or stderr into `stderr_file` when given (a
// program's own lines are then its stdout alone: node warns on stderr, e.g. about TLS).
Ran Shell(const std::string& command, const std::string& stderr_file = "") {
  Ran ran;
  const std::string redirect = stderr_file.empty() ? "2>&1" : absl::StrCat("2>'", stderr_file, "'");
  FILE* pipe = popen(absl::StrCat("(", command, ") ", redirect).c_str(), "r");
  if (pipe == nullptr) return ran;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    ran.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return ran;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fenced block (```<fence>) between the quickstart markers of a README.
std::string QuickstartBlock(const std::string& readme, const std::string& fence) {
  const std::string text = ReadAll(readme);
  const size_t begin = text.find("<!-- quickstart:begin -->");
  const size_t end = text.find("<!-- quickstart:end -->");
  if (begin == std::string::npos || end == std::string::npos) return "";
  const std::string section = text.substr(begin, end - begin);
  const size_t open = section.find("```" + fence + "\n");
  if (open == std::string::npos) return "";
  const size_t body = open + 4 + fence.size();
  return section.substr(body, section.find("\n```", body) - body + 1);
}

std::string Quote(const std::string& text) { return absl::StrCat("'", text, "'"); }

// Where a quickstart runs: the targets, the CA, the token files.
struct Target {
  std::string envelope;
  std::string grant_store;
  std::string ca_file;  // empty: plaintext
  std::string host_token_file;
  std::string reviewer_token_file;
  std::string admin_token;

  std::string Environment() const {
    std::string env = absl::StrCat("SHAREDOS_TARGET=", Quote(envelope),
                                   " SHAREDOS_GRANTSTORE_TARGET=", Quote(grant_store),
                                   " SHAREDOS_HOST_TOKEN_FILE=", Quote(host_token_file),
                                   " SHAREDOS_REVIEWER_TOKEN_FILE=", Quote(reviewer_token_file));
    if (!ca_file.empty()) absl::StrAppend(&env, " SHAREDOS_TLS_CA=", Quote(ca_file));
    return env;
  }
};

class QuickstartsTest : public ::testing::Test {
 protected:
  // Generates both clients and compiles the TypeScript quickstart once for every test.
  static void SetUpTestSuite() {
    work_ = TempPath("clients");
    mkdir(work_.c_str(), 0700);
    const std::string root = RunfilePath("");
    workspace_ =
        Shell(absl::StrCat("dirname \"$(readlink -f ", Quote(root + "/package.json"), ")\""))
            .output;
    while (!workspace_.empty() && workspace_.back() == '\n') workspace_.pop_back();
    const std::string proto = root + "/proto";

    // Python: the modules into work/py/gen, the README's block as quickstart.py.
    Ran python = Shell(absl::StrCat("mkdir -p ", Quote(work_ + "/py"), " && bash ",
                                    Quote(root + "/clients/python/generate.sh"), " ",
                                    Quote(work_ + "/py/gen"), " ", Quote(proto)));
    ASSERT_EQ(python.exit_code, 0) << python.output;
    const std::string python_block = QuickstartBlock(root + "/clients/python/README.md", "python");
    ASSERT_FALSE(python_block.empty()) << "clients/python/README.md: no quickstart block";
    std::ofstream(work_ + "/py/quickstart.py") << python_block;

    // TypeScript: a copy of the package with node_modules beside it, generated and compiled.
    const std::string ts = work_ + "/ts";
    Ran copied = Shell(absl::StrCat(
        "mkdir -p ", Quote(ts + "/src"), " && cp ",
        Quote(root + "/clients/typescript/src/index.ts"), " ", Quote(ts + "/src/"), " && cp ",
        Quote(root + "/clients/typescript/tsconfig.json"), " ", Quote(ts + "/"), " && ln -sfn ",
        Quote(workspace_ + "/node_modules"), " ", Quote(ts + "/node_modules"), " && bash ",
        Quote(root + "/clients/typescript/generate.sh"), " ", Quote(ts + "/gen"), " ", Quote(proto),
        " ", Quote(workspace_ + "/node_modules")));
    ASSERT_EQ(copied.exit_code, 0) << copied.output;
    const std::string ts_block = QuickstartBlock(root + "/clients/typescript/README.md", "ts");
    ASSERT_FALSE(ts_block.empty()) << "clients/typescript/README.md: no quickstart block";
    std::ofstream(ts + "/quickstart.ts") << ts_block;
    Ran compiled =
        Shell(absl::StrCat("cd ", Quote(ts), " && /usr/bin/node ",
                           Quote(workspace_ + "/node_modules/typescript/bin/tsc"), " -p ."));
    ASSERT_EQ(compiled.exit_code, 0) << "tsc:\n" << compiled.output;
  }

  Ran RunPython(const Target& target) {
    return Shell(absl::StrCat("cd ", Quote(work_), " && ", target.Environment(), " PYTHONPATH=",
                              Quote(RunfilePath("") + "/clients/python:" + work_ + "/py/gen"),
                              " /usr/bin/python3 ", Quote(work_ + "/py/quickstart.py")),
                 work_ + "/python.stderr");
  }

  Ran RunTypeScript(const Target& target) {
    return Shell(absl::StrCat("cd ", Quote(work_), " && ", target.Environment(), " /usr/bin/node ",
                              Quote(work_ + "/ts/dist/quickstart.js")),
                 work_ + "/typescript.stderr");
  }

  // A run's stdout, then what it wrote on stderr, for a failure message.
  static std::string Both(const Ran& ran, const std::string& stream) {
    return absl::StrCat(ran.output, "--- stderr:\n", ReadAll(work_ + "/" + stream + ".stderr"));
  }

  // The README's lines, in order.
  static void ExpectQuickstartLines(const Ran& ran, const std::string& language) {
    const std::string stream = absl::StartsWith(language, "python") ? "python" : "typescript";
    ASSERT_EQ(ran.exit_code, 0) << language << ":\n" << Both(ran, stream);
    const std::vector<std::string> expected = {"read: succeeded",
                                               "write: denied no_matching_grant",
                                               "turn: escalated - pending approval esc-",
                                               "escalation: pending",
                                               "escalation: approved",
                                               "write again: succeeded",
                                               "turn: succeeded",
                                               "mcp: http"};
    const std::vector<std::string> lines = absl::StrSplit(ran.output, '\n', absl::SkipEmpty());
    ASSERT_EQ(lines.size(), expected.size()) << language << ":\n" << Both(ran, stream);
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_TRUE(absl::StartsWith(lines[i], expected[i]))
          << language << " line " << i << ": " << lines[i] << "\nwant: " << expected[i];
    }
    EXPECT_THAT(ran.output, HasSubstr("/mcp token issued: "));
  }

  // Back to the demo's state: the approved grants revoked, the summary removed.
  static void Reset(gs::GrantStore::Stub& grants, const std::string& admin_token,
                    const std::string& files_root) {
    gs::ListGrantsRequest list;
    list.mutable_filter()->set_namespace_id(demo::kNamespace);
    gs::ListGrantsResponse listed;
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + admin_token);
    ASSERT_TRUE(grants.ListGrants(&context, list, &listed).ok());
    for (const auto& grant : listed.grants()) {
      if (grant.id() == "grant-demo-assistant") continue;
      gs::RevokeGrantRequest revoke;
      revoke.set_namespace_id(demo::kNamespace);
      revoke.set_grant_id(grant.id());
      gs::RevokeGrantResponse revoked;
      grpc::ClientContext call;
      call.AddMetadata("authorization", "Bearer " + admin_token);
      ASSERT_TRUE(grants.RevokeGrant(&call, revoke, &revoked).ok());
    }
    std::remove((demo::WorkspaceRoot(files_root) + "/Workspace/summary.txt").c_str());
  }

  static std::string work_;
  static std::string workspace_;
};

std::string QuickstartsTest::work_;
std::string QuickstartsTest::workspace_;

TEST_F(QuickstartsTest, BothRunVerbatimAgainstSharedosd) {
  SharedosdDeployment::Options options;
  options.data_dir = TempPath("sharedosd-data");
  options.demo = true;
  options.mcp = true;
  auto sharedosd = SharedosdDeployment::Start(options);
  ASSERT_TRUE(sharedosd.ok()) << sharedosd.status();
  auto grants = gs::GrantStore::NewStub(
      grpc::CreateChannel((*sharedosd)->address(), grpc::InsecureChannelCredentials()));
  // The operator issues alice's reviewer credential (the README's first step).
  gs::IssueCredentialRequest issue;
  issue.set_role(gs::CREDENTIAL_ROLE_REVIEWER);
  issue.mutable_principal()->set_human_user_id(demo::kOwner);
  issue.mutable_scope()->add_namespaces(demo::kNamespace);
  gs::IssueCredentialResponse issued;
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + (*sharedosd)->admin_token());
  ASSERT_TRUE(grants->IssueCredential(&context, issue, &issued).ok());
  const std::string alice = TempPath("alice.token");
  std::ofstream(alice) << issued.secret() << "\n";

  Target target{(*sharedosd)->address(),
                (*sharedosd)->address(),
                "",
                options.data_dir + "/host.token",
                alice,
                (*sharedosd)->admin_token()};
  ExpectQuickstartLines(RunPython(target), "python");
  Reset(*grants, target.admin_token, options.data_dir + "/files");
  ExpectQuickstartLines(RunTypeScript(target), "typescript");

  // The layer's refusals: a turn refused at admission raises TurnRefused naming the code; a
  // wrong credential raises grpc.RpcError UNAUTHENTICATED unchanged.
  std::ofstream(work_ + "/py/refusals.py") << R"py(
import os, grpc
from sharedos_host import Connection, Host, TurnRefused
target = os.environ["SHAREDOS_TARGET"]
host = Host(Connection.from_token_file(target, os.environ["SHAREDOS_HOST_TOKEN_FILE"]))
try:
    host.open_turn(namespace="world-demo", agent="agent:nobody", owner="human:user-alice",
                   purpose="keep notes", tools=["files.read"], message="hi")
except TurnRefused as refused:
    print("refused:", refused.end.status, refused.end.result.error.code)
try:
    Host(Connection(target, "sos_not-a-credential")).escalation("esc-x")
except grpc.RpcError as error:
    print("error:", error.code().name)
)py";
  Ran refusals = Shell(
      absl::StrCat("cd ", Quote(work_), " && ", target.Environment(),
                   " PYTHONPATH=", Quote(RunfilePath("") + "/clients/python:" + work_ + "/py/gen"),
                   " /usr/bin/python3 ", Quote(work_ + "/py/refusals.py")));
  EXPECT_EQ(refusals.exit_code, 0) << refusals.output;
  EXPECT_THAT(refusals.output, HasSubstr("refused: denied no_matching_grant"));
  EXPECT_THAT(refusals.output, HasSubstr("error: UNAUTHENTICATED"));
  EXPECT_TRUE((*sharedosd)->Stop().ok());
}

TEST_F(QuickstartsTest, BothRunVerbatimAgainstFourProcessesWithTls) {
  const std::string dir = TempPath("four");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  ASSERT_TRUE(demo::WriteWorkspace(dir + "/files").ok());
  ASSERT_TRUE(
      ::sharedos::testing::WriteFile(dir + "/registry.textproto", demo::RegistryText()).ok());
  auto ca = ::sharedos::testing::TestCertificateAuthority::Create(dir, "deployment");
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto services = (*ca)->IssueLoopback("services");
  ASSERT_TRUE(services.ok()) << services.status();
  FourProcessDeployment::Options options;
  options.dir = dir;
  options.registry = dir + "/registry.textproto";
  options.files_root = dir + "/files";
  options.mcp = true;
  options.tls = {(*ca)->ca_file(), services->cert_file, services->key_file, false};
  auto deployment = FourProcessDeployment::Start(options);
  ASSERT_TRUE(deployment.ok()) << deployment.status();
  FourProcessDeployment& four = **deployment;

  common::client::ChannelTls tls;
  tls.ca_file = (*ca)->ca_file();
  auto channel = common::client::NewChannel(four.grantstore_address(), tls, "--target");
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto grants = gs::GrantStore::NewStub(*channel);
  gs::IssueGrantRequest issue;
  *issue.mutable_grant() = demo::Grant();
  gs::IssueGrantResponse issued;
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + four.admin_token());
  ASSERT_TRUE(grants->IssueGrant(&context, issue, &issued).ok());
  const std::string host_token = dir + "/host-client.token";
  std::ofstream(host_token) << four.host_token() << "\n";
  const std::string alice = dir + "/alice.token";
  std::ofstream(alice) << four.credentials().reviewer_token << "\n";

  Target target{
      four.envelope_address(), four.grantstore_address(), (*ca)->ca_file(), host_token, alice,
      four.admin_token()};
  ExpectQuickstartLines(RunPython(target), "python over TLS");
  Reset(*grants, four.admin_token(), options.files_root);
  ExpectQuickstartLines(RunTypeScript(target), "typescript over TLS");

  // A fail-closed refusal, explained: the grant store stopped, a turn is refused
  // authority_unavailable; with it back, `sharedosctl explain` names the dependency.
  ASSERT_TRUE(four.Stop(FourProcessDeployment::Service::kGrantstore).ok());
  auto envelope_channel = common::client::NewChannel(four.envelope_address(), tls, "--target");
  ASSERT_TRUE(envelope_channel.ok());
  auto envelope = envelope::v1::Envelope::NewStub(*envelope_channel);
  envelope::v1::OpenTurnResponse refused;
  grpc::ClientContext open;
  open.AddMetadata("authorization", "Bearer " + four.host_token());
  open.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ASSERT_TRUE(
      envelope
          ->OpenTurn(&open, demo::TurnRequest("exec-fail-closed", "trace-fail-closed"), &refused)
          .ok());
  ASSERT_EQ(refused.result().error().code(), "authority_unavailable") << refused.DebugString();
  ASSERT_TRUE(four.Restart(FourProcessDeployment::Service::kGrantstore).ok());

  const std::string admin_token = dir + "/admin-client.token";
  std::ofstream(admin_token) << four.admin_token() << "\n";
  const std::string ctl = absl::StrCat(
      "SHAREDOS_GRANTSTORE_TARGET=", Quote(four.grantstore_address()),
      " SHAREDOS_AUDIT_TARGET=", Quote(four.audit_address()), " ",
      Quote(RunfilePath("tools/sharedosctl/sharedosctl")),
      " --target=", Quote(four.envelope_address()), " --tls_ca=", Quote((*ca)->ca_file()),
      " --token_file=", Quote(admin_token), " ");
  Ran query = Shell(ctl + "audit query --reason=authority_unavailable --trace=trace-fail-closed");
  ASSERT_EQ(query.exit_code, 0) << query.output;
  const std::vector<std::string> rows = absl::StrSplit(query.output, '\n', absl::SkipEmpty());
  ASSERT_GE(rows.size(), 2u) << query.output;
  const std::string sequence = rows[1].substr(0, rows[1].find(' '));
  Ran explained = Shell(ctl + "explain --id=" + sequence);
  ASSERT_EQ(explained.exit_code, 0) << explained.output;
  EXPECT_THAT(explained.output, HasSubstr("reason: authority_unavailable — "));
  EXPECT_THAT(explained.output, HasSubstr("fail closed: yes"));
  EXPECT_THAT(explained.output, HasSubstr("sharedosctl status"));
  EXPECT_TRUE(four.StopAll().ok());
}

}  // namespace
}  // namespace sharedos
