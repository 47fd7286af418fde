// The deployments cross-service tests and benchmarks start from real binaries (the runfiles of
// the calling target), each reached over loopback at the addresses they report (--port=0):
//
//   SharedosdDeployment    one sharedosd process: all four services, SQLite files in its data
//                          directory, the tokens it minted there.
//   FourProcessDeployment  audit_svc, grantstore_svc, authorizer_svc and envelope_svc as
//                          separate processes (SQLite files, service credentials, writers with
//                          outboxes), optionally a second envelope_svc without the host
//                          providers, or two envelope_svc replicas of one service (ADR 0011);
//                          every service can be stopped (or killed) and started again on the
//                          same port and database. With Options::replicate_all, two replicas of
//                          every service on one PostgreSQL database (issue 18): each dependent
//                          reaches a service's two replicas through one target.
//
// Both start with Start() (every process reported listening, never a sleep) and stop what still
// runs on destruction. Neither is thread-safe: one owner drives one deployment.

#ifndef SHAREDOS_TESTS_TESTING_DEPLOYMENT_H_
#define SHAREDOS_TESTS_TESTING_DEPLOYMENT_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/testing/process.h"

namespace sharedos::testing {

// One sharedosd process.
class SharedosdDeployment {
 public:
  struct Options {
    // The data directory (created by sharedosd; its tokens are read from there).
    std::string data_dir;
    // --files_root; empty: sharedosd's default under the data directory.
    std::string files_root;
    // --registry; empty: the shipped default (standard_tools.textproto).
    std::string registry;
    // --durability of its SQLite files; empty: sharedosd's default.
    std::string durability = "normal";
    // --demo: seed the demo world (sharedosd/demo.h).
    bool demo = false;
    // --mcp_port=0: serve the MCP front door (mcp_url() then holds its URL).
    bool mcp = false;
    // --console_port=0: serve the reviewer console (console_url() then holds its URL).
    bool console = false;
    // More flags (e.g. turn-engine flags such as --drain_grace).
    std::vector<std::string> args;
    // argv[0] of a binary run by `bazel run` (for its runfiles); null in a test.
    const char* argv0 = nullptr;
    absl::Duration start_timeout = absl::Seconds(60);
  };

  // Errors: those of Process::StartService; FAILED_PRECONDITION when sharedosd minted no admin
  // or host token.
  static absl::StatusOr<std::unique_ptr<SharedosdDeployment>> Start(Options options);
  ~SharedosdDeployment();

  // "host:port" of every service.
  const std::string& address() const { return process_->address(); }
  // The MCP front door's URL (Options::mcp).
  const std::string& mcp_url() const { return mcp_url_; }
  // The reviewer console's URL, "http://127.0.0.1:<port>/" (Options::console).
  const std::string& console_url() const { return console_url_; }
  const std::string& admin_token() const { return admin_token_; }
  const std::string& host_token() const { return host_token_; }
  pid_t pid() const { return process_->pid(); }
  std::string output() const { return process_->output(); }

  // SIGTERM and wait. Errors: INTERNAL when it does not exit 0 (its output in the message).
  absl::Status Stop();

 private:
  SharedosdDeployment() = default;

  std::unique_ptr<Process> process_;
  std::string mcp_url_, console_url_, admin_token_, host_token_;
  bool stopped_ = false;
};

// The credentials file the four processes load, and the secrets they share.
struct DeploymentCredentials {
  std::string admin_token = "e2e-admin-token-0123456789";
  // Each service its own principal (service:<name>), calling only what the access table gives it
  // (ADR 0014, T4): the authorizer reaches the grant store's data plane, the envelope the
  // authorizer and its peers, the grant store writes control-plane records.
  std::string authorizer_token = "e2e-authorizer-token-0123456789";
  std::string envelope_token = "e2e-envelope-token-0123456789";
  std::string grantstore_token = "e2e-grantstore-token-0123456789";
  // audit_svc's own principal (service:audit), with which it looks credentials up at
  // grantstore_svc (FourProcessDeployment::Options::audit_credential_lookup).
  std::string audit_token = "e2e-audit-token-0123456789";
  // The reviewer console's own principal (service:console), with which it looks up the
  // credentials people sign in with (FourProcessDeployment::Options::console).
  std::string console_token = "e2e-console-token-0123456789";
  std::string host_token = "e2e-host-token-0123456789";
  // The host credential's name and scope (authorities empty: its owners).
  std::string host_name = "host-a";
  std::vector<std::string> host_namespaces = {"world-demo"};
  std::vector<std::string> host_owners = {"human:user-alice"};
  std::vector<std::string> host_authorities;
  // An admin of `namespace_admin_namespaces` only (not the operator).
  std::string namespace_admin_token = "e2e-namespace-admin-token-0123456789";
  std::vector<std::string> namespace_admin_namespaces = {"world-b"};
  // Another host, of the same namespaces but one other owner (a tenant's neighbour).
  std::string other_host_token = "e2e-other-host-token-0123456789";
  std::vector<std::string> other_host_owners = {"human:user-bob"};
  // A reviewer credential for `reviewer_principal` (the owner escalations are addressed to) and
  // one for another human, both in host_namespaces.
  std::string reviewer_token = "e2e-reviewer-token-0123456789";
  std::string reviewer_principal = "human:user-alice";
  std::string other_reviewer_token = "e2e-other-reviewer-token-0123456789";
  std::string other_reviewer_principal = "human:user-bob";
  std::string lease_secret = "e2e-lease-secret-0123456789abcdef0123456789";
  std::string mcp_secret = "e2e-mcp-secret-0123456789abcdef0123456789abcdef";
};

// audit_svc, grantstore_svc, authorizer_svc and envelope_svc, each its own process.
class FourProcessDeployment {
 public:
  enum class Service {
    kAudit,
    kGrantstore,
    kAuthorizer,
    kEnvelope,
    kUnattachedEnvelope,
    // The second replica (Options::replicas).
    kEnvelopeReplica,
    // The second replica of each of the others (Options::replicate_all).
    kAuditReplica,
    kGrantstoreReplica,
    kAuthorizerReplica,
    // The reviewer console, its own process (Options::console).
    kConsole
  };

  struct Options {
    // An existing writable directory: credentials.json, <service>.token, lease.secret,
    // mcp.secret, audit.db, grantstore.db and one <writer>.outbox per audit writer.
    std::string dir;
    // envelope_svc --registry (one path, or several comma-separated).
    std::string registry;
    // envelope_svc --files_root.
    std::string files_root;
    DeploymentCredentials credentials;
    // audit_svc --durability.
    std::string audit_durability = "normal";
    // --audit of grantstore_svc, authorizer_svc and envelope_svc: "remote" (pre-effect records
    // appended to audit_svc before the answer) or "local" (made durable in the writer's outbox
    // and shipped from there). Every writer has its outbox either way.
    std::string audit_mode = "remote";
    // --audit_outbox_durability of the three writers; empty: their default.
    std::string outbox_durability;
    // Host ToolProviders the envelope attaches: --provider=<id>=<address> each, and with
    // `provider_token` --provider_token_file=<the envelope's token>.
    std::vector<std::pair<std::string, std::string>> providers;
    bool provider_token = false;
    // A second envelope_svc ("envelope-unattached"), the same but without `providers`.
    bool unattached_envelope = false;
    // Two replicas of the envelope (ADR 0011): kEnvelope is --replica_name=r1, kEnvelopeReplica
    // r2 (the same flags, its own outbox and journal), each the other's peer over gRPC and, with
    // `mcp`, over MCP; their ports are chosen before they start, so a restarted replica is
    // found where its peer expects it.
    bool replicas = false;
    // grantstore_svc's and audit_svc's --db: empty, SQLite files in `dir`; otherwise a PostgreSQL
    // URI both use (docs/postgres.md), e.g. tests/testing/postgres_cluster.h's.
    std::string database;
    // grantstore_svc's --db when it is not `database`: e.g. a database of its own, dumped and
    // restored apart from the audit log's (docs/operations.md).
    std::string grantstore_database;
    // Two replicas of every service (implies `replicas`; needs `database`, since replicas of
    // grantstore_svc and audit_svc share one): kAuditReplica, kGrantstoreReplica and
    // kAuthorizerReplica run with the same flags as the first (each writer its own outbox), and
    // every dependent dials both replicas of a service as one target ("ipv4:<a>,<b>", spread
    // round-robin by common/client/channel.h), never one replica by name. `dial` is not used.
    bool replicate_all = false;
    // Each envelope serves the MCP front door (--mcp_secret_file, --mcp_port=0); Start waits
    // for its MCP line.
    bool mcp = false;
    // More envelope_svc flags, on every envelope (e.g. --drain_grace).
    std::vector<std::string> envelope_args;
    // More audit_svc flags, on every audit_svc (e.g. --checkpoint_key_file).
    std::vector<std::string> audit_args;
    // More authorizer_svc flags, on every authorizer (e.g. --grantstore_timeout).
    std::vector<std::string> authorizer_args;
    // --oidc_config=<this file> on every process (ADR 0020): each verifies the identity
    // provider's JWT access tokens beside the static credentials. Empty: no provider.
    std::string oidc_config;
    // audit_svc honours the credentials issued through the control plane, as the compose and
    // Kubernetes deployments run it: --grantstore_target (the grant store's ports are chosen
    // before either starts) and --grantstore_token_file with its own token (audit.token,
    // service:audit). Off: audit_svc knows the static credentials file only.
    bool audit_credential_lookup = false;
    // The reviewer console runs as its own process (//console:console, --console_port=0) over
    // the grant store and the audit log, looking credentials up at the grant store with its own
    // token (console.token, service:console); Start waits for its line, console_url() then
    // holds its URL.
    bool console = false;
    // The address a dependent service dials for `service` (audit, grantstore or authorizer), given
    // its own: e.g. a proxy in front of it (tests/testing/tcp_proxy.h). Called once per dependent
    // (the audit log's three writers each ask). Unset: its own address.
    std::function<std::string(Service service, const std::string& address)> dial;
    // TLS on every hop (empty ca_file: plaintext on loopback): every process listens with
    // cert_file and key_file (--tls_cert, --tls_key) and verifies the ones it calls against
    // ca_file (--tls_ca). `mutual`: every listener also requires a client certificate of ca_file
    // (--tls_client_ca), and every process presents cert_file as its own (--tls_client_cert);
    // the certificate must then serve both ends (tests/testing/test_certificates.h).
    struct Tls {
      std::string ca_file;
      std::string cert_file;
      std::string key_file;
      bool mutual = false;
    };
    Tls tls;
    // argv[0] of a binary run by `bazel run` (for its runfiles); null in a test.
    const char* argv0 = nullptr;
    absl::Duration start_timeout = absl::Seconds(60);
  };

  // Writes the credentials and secrets into Options::dir and starts the processes in the order
  // of their dependencies. Errors: INTERNAL (a file cannot be written); those of
  // Process::StartService (a process that does not start or report its address), naming it.
  static absl::StatusOr<std::unique_ptr<FourProcessDeployment>> Start(Options options);
  // Stops what still runs (envelopes first, audit_svc last), ignoring exit codes.
  ~FourProcessDeployment();

  // "host:port" of `service` ("" while it is stopped, or when it was not started).
  const std::string& address(Service service) const;
  const std::string& audit_address() const { return address(Service::kAudit); }
  const std::string& grantstore_address() const { return address(Service::kGrantstore); }
  const std::string& authorizer_address() const { return address(Service::kAuthorizer); }
  const std::string& envelope_address() const { return address(Service::kEnvelope); }
  // The one target that reaches `service` (kAudit, kGrantstore, kAuthorizer or kEnvelope) as its
  // dependents and hosts dial it: with replicas, both ("ipv4:127.0.0.1:<a>,127.0.0.1:<b>",
  // whether running or not); otherwise its address.
  std::string target(Service service) const;
  // An envelope's MCP front door URL (Options::mcp).
  const std::string& mcp_url(Service envelope = Service::kEnvelope) const;
  // The reviewer console's URL, "http://127.0.0.1:<port>/" (Options::console).
  const std::string& console_url() const;
  bool running(Service service) const;
  // What `service` has printed so far, stdout and stderr ("" when it is not running).
  std::string output(Service service) const;
  // The process of `service` (0 when it is not running), e.g. to signal it without waiting.
  pid_t pid(Service service) const;
  // The processes running now, in the order they started (e.g. to read their CPU time).
  std::vector<pid_t> pids() const;
  const DeploymentCredentials& credentials() const { return options_.credentials; }
  const std::string& admin_token() const { return options_.credentials.admin_token; }
  const std::string& host_token() const { return options_.credentials.host_token; }
  // The files the deployment keeps (e.g. to open a database behind a service's back).
  // SQLite: the files; with Options::database, that URI (both stores share it).
  std::string grantstore_db() const {
    if (!options_.grantstore_database.empty()) return options_.grantstore_database;
    return options_.database.empty() ? options_.dir + "/grantstore.db" : options_.database;
  }
  std::string audit_db() const {
    return options_.database.empty() ? options_.dir + "/audit.db" : options_.database;
  }
  // The token file of service `name` ("authorizer", "envelope", "grantstore", "audit",
  // "console").
  std::string token_file(const std::string& name) const {
    return options_.dir + "/" + name + ".token";
  }

  // SIGTERM and wait: the service becomes unreachable (audit_svc: pre-effect writes fail,
  // post-effect ones wait in the writers' outboxes). Errors: FAILED_PRECONDITION (not
  // running); INTERNAL when it does not exit 0 (its output in the message).
  absl::Status Stop(Service service);
  // SIGKILL and wait: a crash (nothing flushed, no orderly shutdown). Restart brings it back.
  // Errors: FAILED_PRECONDITION (not running).
  absl::Status Kill(Service service);
  // Starts a stopped service again with its former flags, port and database (the outboxes
  // then deliver what they held). Errors: FAILED_PRECONDITION (running, or never started);
  // those of Process::StartService; INTERNAL when it reports another address.
  absl::Status Restart(Service service);
  // Stops every running process, envelopes first. Errors: INTERNAL naming each that did not
  // exit 0, with its output.
  absl::Status StopAll();

 private:
  struct Member {
    std::string binary;  // runfiles-relative
    std::string name;    // "<name> listening on"
    std::vector<std::string> args;
    std::unique_ptr<Process> process;
    std::string address, mcp_url, console_url;
    std::vector<std::string> former_args;  // with --port=<its port>, for Restart
  };

  explicit FourProcessDeployment(Options options) : options_(std::move(options)) {}
  absl::Status WriteFiles();
  absl::Status StartMember(Service service, std::string binary, std::string name,
                           std::vector<std::string> args);
  absl::Status Launch(Member& member, const std::vector<std::string>& args);
  std::vector<std::string> AuditFlags(const std::string& writer) const;
  // What dependents dial for `service` (Options::dial; with replicate_all, target()).
  std::string Dialed(Service service) const;
  // The replica of `service` (kAudit → kAuditReplica, …); `service` itself when it has none.
  static Service ReplicaOf(Service service);
  std::vector<std::string> EnvelopeArgs(const std::string& writer, bool attached) const;
  // --replica_name and the peers of replica `self` (0: r1, 1: r2) on the chosen ports.
  std::vector<std::string> ReplicaArgs(int self) const;
  std::vector<std::string> TlsFlags() const;
  Member& member(Service service) { return members_[static_cast<int>(service)]; }
  const Member& member(Service service) const { return members_[static_cast<int>(service)]; }

  const Options options_;
  // "--checkpoint_key_file=…" for audit_svc on PostgreSQL (WriteFiles); empty on SQLite (the
  // default key beside the data directory).
  std::string audit_checkpoint_flag_;
  std::string credentials_flag_;
  // Options::replicas: each replica's gRPC and MCP port.
  int replica_ports_[2] = {0, 0};
  int replica_mcp_ports_[2] = {0, 0};
  // Options::audit_credential_lookup: each grant store replica's gRPC port.
  int grantstore_ports_[2] = {0, 0};
  Member members_[10];
};

// The credentials.json of `credentials`: the operator "ops", the namespace admin, a service
// credential per service (authorizer, envelope, grantstore, audit), the hosts and the reviewers.
std::string CredentialsJson(const DeploymentCredentials& credentials);

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_DEPLOYMENT_H_
