#include "tests/testing/deployment.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "common/server/auth.h"
#include "common/status/status_macros.h"

namespace sharedos::testing {
namespace {

using Service = FourProcessDeployment::Service;

// The order processes are stopped in: every dependent before what it depends on.
constexpr Service kStopOrder[] = {Service::kConsole,
                                  Service::kEnvelopeReplica,
                                  Service::kUnattachedEnvelope,
                                  Service::kEnvelope,
                                  Service::kAuthorizerReplica,
                                  Service::kAuthorizer,
                                  Service::kGrantstoreReplica,
                                  Service::kGrantstore,
                                  Service::kAuditReplica,
                                  Service::kAudit};

// The exit of an orderly stop: OK on 0, else INTERNAL naming the process, with its output.
absl::Status Stopped(const std::string& name, Process& process) {
  const int code = process.Terminate();
  if (code == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(name, " exited with ", code, " on SIGTERM; output:\n", process.output()));
}

// A port free on 127.0.0.1 now (bound to port 0, then released): for processes that must know
// each other's ports before either starts.
absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket() failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                     getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!bound) return absl::InternalError("no free loopback port");
  return static_cast<int>(ntohs(address.sin_port));
}

// `args` with --port=0 replaced by the port `address` ends with.
std::vector<std::string> WithPortOf(const std::vector<std::string>& args,
                                    const std::string& address) {
  std::vector<std::string> pinned = args;
  for (std::string& arg : pinned) {
    if (arg == "--port=0") arg = "--port=" + address.substr(address.rfind(':') + 1);
  }
  return pinned;
}

}  // namespace

// ---------------------------------------------------------------- sharedosd

absl::StatusOr<std::unique_ptr<SharedosdDeployment>> SharedosdDeployment::Start(Options options) {
  std::vector<std::string> args = {"--port=0", "--data_dir=" + options.data_dir};
  if (!options.durability.empty()) args.push_back("--durability=" + options.durability);
  if (!options.files_root.empty()) args.push_back("--files_root=" + options.files_root);
  if (!options.registry.empty()) args.push_back("--registry=" + options.registry);
  if (options.demo) args.push_back("--demo");
  if (options.mcp) args.push_back("--mcp_port=0");
  if (options.console) args.push_back("--console_port=0");
  args.insert(args.end(), options.args.begin(), options.args.end());

  auto deployment = std::unique_ptr<SharedosdDeployment>(new SharedosdDeployment());
  ASSIGN_OR_RETURN(deployment->process_,
                   Process::StartService("sharedosd/sharedosd", args, "sharedosd", options.argv0,
                                         options.start_timeout));
  if (options.mcp) {
    ASSIGN_OR_RETURN(
        deployment->mcp_url_,
        deployment->process_->WaitForLine("sharedosd mcp listening on ", options.start_timeout));
  }
  if (options.console) {
    ASSIGN_OR_RETURN(deployment->console_url_, deployment->process_->WaitForLine(
                                                   "sharedosd console on ", options.start_timeout));
  }
  deployment->admin_token_ = ReadFirstLine(options.data_dir + "/admin.token");
  deployment->host_token_ = ReadFirstLine(options.data_dir + "/host.token");
  if (deployment->admin_token_.empty() || deployment->host_token_.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sharedosd minted no admin or host token in ", options.data_dir));
  }
  return deployment;
}

SharedosdDeployment::~SharedosdDeployment() {
  if (!stopped_ && process_) process_->Terminate();
}

absl::Status SharedosdDeployment::Stop() {
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  return Stopped("sharedosd", *process_);
}

// ---------------------------------------------------------------- four processes

std::string CredentialsJson(const DeploymentCredentials& credentials) {
  auto quoted = [](const std::vector<std::string>& values) {
    return absl::StrCat("[\"", absl::StrJoin(values, "\", \""), "\"]");
  };
  const std::string authorities =
      credentials.host_authorities.empty()
          ? ""
          : absl::StrCat(R"(, "authorities": )", quoted(credentials.host_authorities));
  return absl::StrCat(
      R"({"credentials": [)", R"({"name": "ops", "role": "admin", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.admin_token), R"("},)",
      R"({"name": "namespace-admin", "role": "admin", "principal": "human:op-b", )",
      R"("token_sha256": ")", common::server::TokenDigestHex(credentials.namespace_admin_token),
      R"(", "scope": {"namespaces": )", quoted(credentials.namespace_admin_namespaces), "}},",
      R"({"name": "authorizer", "role": "service", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.authorizer_token), R"("},)",
      R"({"name": "envelope", "role": "service", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.envelope_token), R"("},)",
      R"({"name": "grantstore", "role": "service", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.grantstore_token), R"("},)",
      R"({"name": "audit", "role": "service", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.audit_token), R"("},)",
      R"({"name": "console", "role": "service", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.console_token), R"("},)", R"({"name": ")",
      credentials.host_name, R"(", "role": "host", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.host_token), R"(", "scope": {"namespaces": )",
      quoted(credentials.host_namespaces), R"(, "owners": )", quoted(credentials.host_owners),
      authorities, "}},",
      R"({"name": "other-host", "role": "host", "principal": "service:other-host", )",
      R"("token_sha256": ")", common::server::TokenDigestHex(credentials.other_host_token),
      R"(", "scope": {"namespaces": )", quoted(credentials.host_namespaces), R"(, "owners": )",
      quoted(credentials.other_host_owners), "}},",
      R"({"name": "reviewer", "role": "reviewer", "principal": ")", credentials.reviewer_principal,
      R"(", "token_sha256": ")", common::server::TokenDigestHex(credentials.reviewer_token),
      R"(", "scope": {"namespaces": )", quoted(credentials.host_namespaces), "}},",
      R"({"name": "other-reviewer", "role": "reviewer", "principal": ")",
      credentials.other_reviewer_principal, R"(", "token_sha256": ")",
      common::server::TokenDigestHex(credentials.other_reviewer_token),
      R"(", "scope": {"namespaces": )", quoted(credentials.host_namespaces), "}}]}");
}

absl::StatusOr<std::unique_ptr<FourProcessDeployment>> FourProcessDeployment::Start(
    Options options) {
  auto deployment =
      std::unique_ptr<FourProcessDeployment>(new FourProcessDeployment(std::move(options)));
  FourProcessDeployment& d = *deployment;
  if (d.options_.replicate_all && d.options_.database.empty()) {
    return absl::InvalidArgumentError(
        "replicate_all: needs a PostgreSQL `database` for the replicas to share");
  }
  RETURN_IF_ERROR(d.WriteFiles());
  const std::string& dir = d.options_.dir;
  const int copies = d.options_.replicate_all ? 2 : 1;
  // audit_svc dials the grant store for credentials before the grant store starts: its ports are
  // chosen first.
  std::string grantstore_lookup;
  if (d.options_.audit_credential_lookup) {
    for (int copy = 0; copy < copies; ++copy) {
      ASSIGN_OR_RETURN(d.grantstore_ports_[copy], FreeLoopbackPort());
    }
    grantstore_lookup = copies == 1 ? absl::StrCat("127.0.0.1:", d.grantstore_ports_[0])
                                    : absl::StrCat("ipv4:127.0.0.1:", d.grantstore_ports_[0],
                                                   ",127.0.0.1:", d.grantstore_ports_[1]);
  }
  // The second replica's outbox is "<writer>-r2.outbox".
  auto writer = [](const char* name, int copy) {
    return copy == 0 ? std::string(name) : absl::StrCat(name, "-r2");
  };

  for (int copy = 0; copy < copies; ++copy) {
    std::vector<std::string> args = {"--port=0", "--db=" + d.audit_db(),
                                     "--durability=" + d.options_.audit_durability,
                                     d.credentials_flag_};
    if (!d.audit_checkpoint_flag_.empty()) args.push_back(d.audit_checkpoint_flag_);
    if (!grantstore_lookup.empty()) {
      args.push_back("--grantstore_target=" + grantstore_lookup);
      args.push_back("--grantstore_token_file=" + d.token_file("audit"));
    }
    args.insert(args.end(), d.options_.audit_args.begin(), d.options_.audit_args.end());
    RETURN_IF_ERROR(d.StartMember(copy == 0 ? Service::kAudit : Service::kAuditReplica,
                                  "audit_svc/server/audit_svc", "audit_svc", std::move(args)));
  }
  for (int copy = 0; copy < copies; ++copy) {
    std::vector<std::string> args = {d.grantstore_ports_[copy] == 0
                                         ? std::string("--port=0")
                                         : absl::StrCat("--port=", d.grantstore_ports_[copy]),
                                     "--db=" + d.grantstore_db(), d.credentials_flag_};
    for (const std::string& flag : d.AuditFlags(writer("grantstore", copy))) {
      args.push_back(flag);
    }
    RETURN_IF_ERROR(d.StartMember(copy == 0 ? Service::kGrantstore : Service::kGrantstoreReplica,
                                  "grantstore_svc/server/grantstore_svc", "grantstore_svc",
                                  std::move(args)));
  }
  for (int copy = 0; copy < copies; ++copy) {
    std::vector<std::string> args = {"--port=0", d.credentials_flag_,
                                     "--grantstore_target=" + d.Dialed(Service::kGrantstore),
                                     "--grantstore_token_file=" + d.token_file("authorizer"),
                                     "--lease_secret_file=" + dir + "/lease.secret"};
    for (const std::string& flag : d.AuditFlags(writer("authorizer", copy))) {
      args.push_back(flag);
    }
    args.insert(args.end(), d.options_.authorizer_args.begin(), d.options_.authorizer_args.end());
    RETURN_IF_ERROR(d.StartMember(copy == 0 ? Service::kAuthorizer : Service::kAuthorizerReplica,
                                  "authorizer_svc/server/authorizer_svc", "authorizer_svc",
                                  std::move(args)));
  }
  if (d.options_.replicas || d.options_.replicate_all) {
    for (int i = 0; i < 2; ++i) {
      ASSIGN_OR_RETURN(d.replica_ports_[i], FreeLoopbackPort());
      ASSIGN_OR_RETURN(d.replica_mcp_ports_[i], FreeLoopbackPort());
    }
    RETURN_IF_ERROR(d.StartMember(Service::kEnvelope, "envelope_svc/server/envelope_svc",
                                  "envelope_svc", d.ReplicaArgs(0)));
    RETURN_IF_ERROR(d.StartMember(Service::kEnvelopeReplica, "envelope_svc/server/envelope_svc",
                                  "envelope_svc", d.ReplicaArgs(1)));
  } else {
    RETURN_IF_ERROR(d.StartMember(Service::kEnvelope, "envelope_svc/server/envelope_svc",
                                  "envelope_svc", d.EnvelopeArgs("envelope", /*attached=*/true)));
  }
  if (d.options_.unattached_envelope) {
    RETURN_IF_ERROR(d.StartMember(Service::kUnattachedEnvelope, "envelope_svc/server/envelope_svc",
                                  "envelope_svc",
                                  d.EnvelopeArgs("envelope-unattached", /*attached=*/false)));
  }
  if (d.options_.console) {
    RETURN_IF_ERROR(d.StartMember(Service::kConsole, "console/console", "console",
                                  {"--port=0", "--console_port=0", d.credentials_flag_,
                                   "--grantstore_target=" + d.Dialed(Service::kGrantstore),
                                   "--grantstore_token_file=" + d.token_file("console"),
                                   "--audit_target=" + d.Dialed(Service::kAudit)}));
  }
  return deployment;
}

FourProcessDeployment::~FourProcessDeployment() {
  for (Service service : kStopOrder) {
    if (member(service).process) member(service).process->Terminate();
  }
}

absl::Status FourProcessDeployment::WriteFiles() {
  const std::string& dir = options_.dir;
  RETURN_IF_ERROR(WriteFile(dir + "/credentials.json", CredentialsJson(options_.credentials)));
  for (const auto& [name, token] :
       {std::pair<std::string, std::string>{"authorizer", options_.credentials.authorizer_token},
        {"envelope", options_.credentials.envelope_token},
        {"grantstore", options_.credentials.grantstore_token},
        {"audit", options_.credentials.audit_token},
        {"console", options_.credentials.console_token}}) {
    RETURN_IF_ERROR(WriteFile(token_file(name), token + "\n"));
  }
  RETURN_IF_ERROR(WriteFile(dir + "/lease.secret", options_.credentials.lease_secret));
  if (options_.mcp) {
    RETURN_IF_ERROR(WriteFile(dir + "/mcp.secret", options_.credentials.mcp_secret));
  }
  credentials_flag_ = "--credentials=" + dir + "/credentials.json";
  // A PostgreSQL log has no default checkpoint key: one key, shared by the audit replicas.
  if (!options_.database.empty()) {
    const std::string key = dir + "/audit-checkpoint.key";
    RETURN_IF_ERROR(::sharedos::audit::core::testing::WriteNewEd25519Key(key));
    audit_checkpoint_flag_ = "--checkpoint_key_file=" + key;
  }
  return absl::OkStatus();
}

FourProcessDeployment::Service FourProcessDeployment::ReplicaOf(Service service) {
  switch (service) {
    case Service::kAudit:
      return Service::kAuditReplica;
    case Service::kGrantstore:
      return Service::kGrantstoreReplica;
    case Service::kAuthorizer:
      return Service::kAuthorizerReplica;
    case Service::kEnvelope:
      return Service::kEnvelopeReplica;
    default:
      return service;
  }
}

std::string FourProcessDeployment::target(Service service) const {
  const bool replicated = service == Service::kEnvelope
                              ? options_.replicas || options_.replicate_all
                              : options_.replicate_all && ReplicaOf(service) != service;
  if (!replicated) return address(service);
  if (service == Service::kEnvelope) {
    return absl::StrCat("ipv4:127.0.0.1:", replica_ports_[0], ",127.0.0.1:", replica_ports_[1]);
  }
  // Both replicas listen on the ports they first took (Restart keeps them).
  auto port = [this](Service of) {
    const std::vector<std::string>& args = member(of).former_args;
    for (const std::string& arg : args) {
      if (absl::StartsWith(arg, "--port=")) return arg.substr(7);
    }
    return std::string("0");
  };
  return absl::StrCat("ipv4:127.0.0.1:", port(service), ",127.0.0.1:", port(ReplicaOf(service)));
}

std::string FourProcessDeployment::Dialed(Service service) const {
  if (options_.replicate_all) return target(service);
  const std::string& own = address(service);
  return options_.dial ? options_.dial(service, own) : own;
}

std::vector<std::string> FourProcessDeployment::AuditFlags(const std::string& writer) const {
  // The writer's own credential: "envelope-r2" writes as the envelope.
  const std::string service = writer.substr(0, writer.find('-'));
  std::vector<std::string> flags = {"--audit=" + options_.audit_mode,
                                    "--audit_target=" + Dialed(Service::kAudit),
                                    "--audit_token_file=" + token_file(service),
                                    "--audit_outbox=" + options_.dir + "/" + writer + ".outbox"};
  if (!options_.outbox_durability.empty()) {
    flags.push_back("--audit_outbox_durability=" + options_.outbox_durability);
  }
  return flags;
}

std::vector<std::string> FourProcessDeployment::EnvelopeArgs(const std::string& writer,
                                                             bool attached) const {
  std::vector<std::string> args = {"--port=0",
                                   credentials_flag_,
                                   "--authorizer_target=" + Dialed(Service::kAuthorizer),
                                   "--authorizer_token_file=" + token_file("envelope"),
                                   "--grantstore_target=" + Dialed(Service::kGrantstore),
                                   "--grantstore_token_file=" + token_file("envelope"),
                                   "--registry=" + options_.registry,
                                   "--files_root=" + options_.files_root};
  if (attached) {
    for (const auto& [id, address] : options_.providers) {
      args.push_back(absl::StrCat("--provider=", id, "=", address));
    }
    if (options_.provider_token && !options_.providers.empty()) {
      args.push_back("--provider_token_file=" + token_file("envelope"));
    }
  }
  for (const std::string& flag : AuditFlags(writer)) args.push_back(flag);
  if (options_.mcp) {
    args.push_back("--mcp_secret_file=" + options_.dir + "/mcp.secret");
    args.push_back("--mcp_port=0");
  }
  args.insert(args.end(), options_.envelope_args.begin(), options_.envelope_args.end());
  return args;
}

std::vector<std::string> FourProcessDeployment::ReplicaArgs(int self) const {
  const char* names[] = {"r1", "r2"};
  std::vector<std::string> args =
      EnvelopeArgs(self == 0 ? "envelope" : "envelope-r2", /*attached=*/true);
  const std::string scheme = options_.tls.ca_file.empty() ? "http" : "https";
  for (std::string& arg : args) {
    if (arg == "--port=0") arg = absl::StrCat("--port=", replica_ports_[self]);
    if (arg == "--mcp_port=0") arg = absl::StrCat("--mcp_port=", replica_mcp_ports_[self]);
  }
  const int peer = 1 - self;
  args.push_back(absl::StrCat("--replica_name=", names[self]));
  // Each world's messages live at one replica; its peer reaches them with this (ADR 0013).
  args.push_back("--replica_token_file=" + token_file("envelope"));
  args.push_back(
      absl::StrCat("--replica_peers=", names[peer], "=127.0.0.1:", replica_ports_[peer]));
  if (options_.mcp) {
    args.push_back(absl::StrCat("--replica_mcp_peers=", names[peer], "=", scheme,
                                "://127.0.0.1:", replica_mcp_ports_[peer], "/mcp"));
  }
  return args;
}

std::vector<std::string> FourProcessDeployment::TlsFlags() const {
  const Options::Tls& tls = options_.tls;
  if (tls.ca_file.empty()) return {};
  std::vector<std::string> flags = {"--tls_cert=" + tls.cert_file, "--tls_key=" + tls.key_file,
                                    "--tls_ca=" + tls.ca_file, "--tls_reload_interval=1s"};
  if (tls.mutual) {
    flags.push_back("--tls_client_ca=" + tls.ca_file);
    flags.push_back("--tls_client_cert=" + tls.cert_file);
    flags.push_back("--tls_client_key=" + tls.key_file);
  }
  return flags;
}

absl::Status FourProcessDeployment::StartMember(Service service, std::string binary,
                                                std::string name, std::vector<std::string> args) {
  Member& started = member(service);
  started.binary = std::move(binary);
  started.name = std::move(name);
  started.args = std::move(args);
  for (std::string& flag : TlsFlags()) started.args.push_back(std::move(flag));
  if (!options_.oidc_config.empty()) {
    started.args.push_back("--oidc_config=" + options_.oidc_config);
  }
  RETURN_IF_ERROR(Launch(started, started.args));
  started.former_args = WithPortOf(started.args, started.address);
  return absl::OkStatus();
}

absl::Status FourProcessDeployment::Launch(Member& member, const std::vector<std::string>& args) {
  absl::StatusOr<std::unique_ptr<Process>> process = Process::StartService(
      member.binary, args, member.name, options_.argv0, options_.start_timeout);
  if (!process.ok()) {
    return absl::Status(process.status().code(),
                        absl::StrCat(member.name, ": ", process.status().message()));
  }
  member.process = *std::move(process);
  member.address = member.process->address();
  if (options_.mcp && member.name == "envelope_svc") {
    absl::StatusOr<std::string> url =
        member.process->WaitForLine("envelope_svc mcp listening on ", options_.start_timeout);
    if (!url.ok()) {
      return absl::Status(url.status().code(),
                          absl::StrCat(member.name, " mcp: ", url.status().message()));
    }
    member.mcp_url = *std::move(url);
  }
  if (member.name == "console") {
    absl::StatusOr<std::string> url =
        member.process->WaitForLine("console web listening on ", options_.start_timeout);
    if (!url.ok()) {
      return absl::Status(url.status().code(),
                          absl::StrCat(member.name, " console: ", url.status().message()));
    }
    member.console_url = *std::move(url);
  }
  return absl::OkStatus();
}

const std::string& FourProcessDeployment::address(Service service) const {
  return member(service).address;
}

const std::string& FourProcessDeployment::mcp_url(Service envelope) const {
  return member(envelope).mcp_url;
}

const std::string& FourProcessDeployment::console_url() const {
  return member(Service::kConsole).console_url;
}

bool FourProcessDeployment::running(Service service) const {
  return member(service).process != nullptr;
}

std::string FourProcessDeployment::output(Service service) const {
  const Member& m = member(service);
  return m.process == nullptr ? "" : m.process->output();
}

pid_t FourProcessDeployment::pid(Service service) const {
  const Member& m = member(service);
  return m.process == nullptr ? 0 : m.process->pid();
}

std::vector<pid_t> FourProcessDeployment::pids() const {
  std::vector<pid_t> pids;
  for (const Member& m : members_) {
    if (m.process) pids.push_back(m.process->pid());
  }
  return pids;
}

absl::Status FourProcessDeployment::Stop(Service service) {
  Member& stopping = member(service);
  if (!stopping.process) {
    return absl::FailedPreconditionError(absl::StrCat(stopping.name, " is not running"));
  }
  const absl::Status stopped = Stopped(stopping.name, *stopping.process);
  stopping.process.reset();
  stopping.address.clear();
  stopping.mcp_url.clear();
  stopping.console_url.clear();
  return stopped;
}

absl::Status FourProcessDeployment::Kill(Service service) {
  Member& killing = member(service);
  if (!killing.process) {
    return absl::FailedPreconditionError(absl::StrCat(killing.name, " is not running"));
  }
  killing.process->Kill();
  killing.process.reset();
  killing.address.clear();
  killing.mcp_url.clear();
  killing.console_url.clear();
  return absl::OkStatus();
}

absl::Status FourProcessDeployment::Restart(Service service) {
  Member& restarting = member(service);
  if (restarting.process || restarting.former_args.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(restarting.name, restarting.process ? " is running" : " never started"));
  }
  RETURN_IF_ERROR(Launch(restarting, restarting.former_args));
  if (WithPortOf(restarting.args, restarting.address) != restarting.former_args) {
    return absl::InternalError(
        absl::StrCat(restarting.name, " restarted on another port: ", restarting.address));
  }
  return absl::OkStatus();
}

absl::Status FourProcessDeployment::StopAll() {
  std::vector<std::string> failures;
  for (Service service : kStopOrder) {
    if (!member(service).process) continue;
    absl::Status stopped = Stop(service);
    if (!stopped.ok()) failures.push_back(std::string(stopped.message()));
  }
  if (failures.empty()) return absl::OkStatus();
  return absl::InternalError(absl::StrJoin(failures, "\n"));
}

}  // namespace sharedos::testing
