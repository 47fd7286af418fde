#include "tests/testing/postgres_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/postgres/connection.h"

namespace sharedos::testing {
namespace {

constexpr char kSetpriv[] = "/usr/bin/setpriv";
constexpr char kUnprivilegedUser[] = "nobody";

bool IsExecutable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

bool HasServerBinaries(const std::string& bindir) {
  return IsExecutable(bindir + "/initdb") && IsExecutable(bindir + "/postgres") &&
         IsExecutable(bindir + "/pg_ctl");
}

// The first line `command` prints ("" when it fails).
std::string FirstLineOf(const char* command) {
  FILE* pipe = popen(command, "r");
  if (pipe == nullptr) return "";
  char line[4096] = {0};
  const bool read = fgets(line, sizeof(line), pipe) != nullptr;
  const int status = pclose(pipe);
  if (!read || status != 0) return "";
  return std::string(absl::StripAsciiWhitespace(line));
}

// The directory of initdb, postgres and pg_ctl; the newest installed major version wins.
absl::StatusOr<std::string> FindBinDir() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("SHAREDOS_POSTGRES_BINDIR"); env != nullptr && *env) {
    if (HasServerBinaries(env)) return std::string(env);
    tried.push_back(env);
  }
  const std::string from_pg_config = FirstLineOf("pg_config --bindir 2>/dev/null");
  if (!from_pg_config.empty()) {
    if (HasServerBinaries(from_pg_config)) return from_pg_config;
    tried.push_back(from_pg_config);
  }
  glob_t matches;
  std::vector<std::pair<int, std::string>> found;
  if (glob("/usr/lib/postgresql/*/bin", 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) {
      const std::string dir = matches.gl_pathv[i];
      absl::string_view version = dir;
      absl::ConsumePrefix(&version, "/usr/lib/postgresql/");
      absl::ConsumeSuffix(&version, "/bin");
      int major = 0;
      if (absl::SimpleAtoi(version, &major) && HasServerBinaries(dir)) {
        found.emplace_back(major, dir);
      }
    }
  }
  globfree(&matches);
  if (!found.empty()) return std::max_element(found.begin(), found.end())->second;
  tried.push_back("/usr/lib/postgresql/*/bin");
  return absl::NotFoundError(absl::StrCat(
      "PostgreSQL server binaries (initdb, postgres, pg_ctl) not found in ",
      absl::StrJoin(tried, ", "),
      "; install Debian's postgresql package (tools/setup.sh) or set SHAREDOS_POSTGRES_BINDIR"));
}

// A TCP port on 127.0.0.1 that was free a moment ago (the server binds it next; a lost race
// is retried by StartServer).
absl::StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  const int error = errno;
  close(fd);
  if (port <= 0) return absl::InternalError(absl::StrCat("no free port: ", std::strerror(error)));
  return port;
}

std::string Tail(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  const std::string text = contents.str();
  return text.size() <= bytes ? text : text.substr(text.size() - bytes);
}

// waitpid with a deadline; true when the child exited (its wait status in `status`).
bool WaitFor(pid_t pid, absl::Duration timeout, int* status) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid || (done < 0 && errno == ECHILD)) return true;
    if (absl::Now() >= deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

bool ValidDatabaseName(absl::string_view name) {
  if (name.empty() || name.size() > 63 || absl::ascii_isdigit(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_';
  });
}

// The pid in the first line of `path`, or -1.
pid_t ReadPid(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int pid = -1;
  if (!std::getline(in, line) || !absl::SimpleAtoi(line, &pid) || pid <= 0) return -1;
  return pid;
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// Removes the directories of clusters whose test died before its destructor ran (a timed-out
// test is SIGKILLed with its process group, which takes the server along but leaves ~40 MB of
// files). A directory counts as stale once the pid in its "owner" file is gone; a server still
// running from it (its command line names the directory) is killed first.
void SweepStaleDirectories() {
  glob_t matches;
  if (glob("/tmp/sharedos-pg.*", 0, nullptr, &matches) != 0) return;
  for (size_t i = 0; i < matches.gl_pathc; ++i) {
    const std::string dir = matches.gl_pathv[i];
    const pid_t owner = ReadPid(dir + "/owner");
    if (owner <= 0 || Alive(owner)) continue;  // In use, or still being created.
    const pid_t server = ReadPid(dir + "/data/postmaster.pid");
    if (server > 0 && Alive(server)) {
      std::ifstream cmdline(absl::StrCat("/proc/", server, "/cmdline"), std::ios::binary);
      std::stringstream text;
      text << cmdline.rdbuf();
      if (absl::StrContains(text.str(), dir)) kill(server, SIGKILL);
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  globfree(&matches);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresCluster>> PostgresCluster::Create() {
  return Create(Options());
}

absl::StatusOr<std::unique_ptr<PostgresCluster>> PostgresCluster::Create(const Options& options) {
  absl::StatusOr<std::string> bindir = FindBinDir();
  if (!bindir.ok()) return bindir.status();

  const bool drop_root = geteuid() == 0;
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (drop_root) {
    const passwd* user = getpwnam(kUnprivilegedUser);
    if (user == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("running as root, and PostgreSQL refuses root: no user \"",
                       kUnprivilegedUser, "\" to run it as"));
    }
    if (!IsExecutable(kSetpriv)) {
      return absl::NotFoundError(absl::StrCat("running as root: ", kSetpriv,
                                              " (util-linux) is needed to drop to \"",
                                              kUnprivilegedUser, "\""));
    }
    uid = user->pw_uid;
    gid = user->pw_gid;
  }

  SweepStaleDirectories();
  char pattern[] = "/tmp/sharedos-pg.XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp /tmp: ", std::strerror(errno)));
  }
  const std::string directory = pattern;
  std::unique_ptr<PostgresCluster> cluster(
      new PostgresCluster(options, *bindir, directory, uid, gid, drop_root));
  if (drop_root && chown(directory.c_str(), uid, gid) != 0) {
    return absl::InternalError(absl::StrCat("chown ", directory, ": ", std::strerror(errno)));
  }
  {
    std::ofstream owner(directory + "/owner");
    owner << getpid() << "\n";
  }
  if (absl::Status status = cluster->InitDb(); !status.ok()) return status;
  if (absl::Status status = cluster->StartServer(/*retry_port=*/true); !status.ok()) {
    return status;
  }
  return cluster;
}

absl::StatusOr<PostgresCluster*> PostgresCluster::Shared() {
  static absl::StatusOr<std::unique_ptr<PostgresCluster>> shared = Create();
  if (!shared.ok()) return shared.status();
  return shared->get();
}

PostgresCluster::PostgresCluster(Options options, std::string bindir, std::string directory,
                                 uid_t uid, gid_t gid, bool drop_root)
    : options_(std::move(options)),
      bindir_(std::move(bindir)),
      directory_(std::move(directory)),
      uid_(uid),
      gid_(gid),
      drop_root_(drop_root) {}

PostgresCluster::~PostgresCluster() {
  if (running()) (void)Stop();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::string PostgresCluster::Uri(absl::string_view database) const {
  return absl::StrCat("postgresql://postgres@127.0.0.1:", port_, "/", database);
}

absl::StatusOr<std::string> PostgresCluster::CreateDatabase(absl::string_view name) {
  const std::string database =
      name.empty() ? absl::StrCat("db_", next_database_++) : std::string(name);
  if (!ValidDatabaseName(database)) {
    return absl::InvalidArgumentError(
        absl::StrCat("database name \"", database, "\": use lower-case letters, digits, '_'"));
  }
  absl::StatusOr<std::unique_ptr<common::postgres::Connection>> conn =
      common::postgres::Connection::Open(Uri());
  if (!conn.ok()) return conn.status();
  absl::Status status = (*conn)->Exec(absl::StrCat("CREATE DATABASE ", database)).status();
  // CREATE DATABASE reports a taken name as duplicate_database (42P04).
  if (absl::IsInternal(status) && absl::StrContains(status.message(), "42P04")) {
    return absl::AlreadyExistsError(status.message());
  }
  if (!status.ok()) return status;
  return Uri(database);
}

absl::StatusOr<std::string> PostgresCluster::CreateSchema(absl::string_view name) {
  const std::string schema =
      name.empty() ? absl::StrCat("schema_", next_schema_++) : std::string(name);
  if (!ValidDatabaseName(schema)) {
    return absl::InvalidArgumentError(
        absl::StrCat("schema name \"", schema, "\": use lower-case letters, digits, '_'"));
  }
  absl::StatusOr<std::unique_ptr<common::postgres::Connection>> conn =
      common::postgres::Connection::Open(Uri());
  if (!conn.ok()) return conn.status();
  absl::Status status = (*conn)->Exec(absl::StrCat("CREATE SCHEMA ", schema)).status();
  // A taken name is duplicate_schema (42P06).
  if (absl::IsInternal(status) && absl::StrContains(status.message(), "42P06")) {
    return absl::AlreadyExistsError(status.message());
  }
  if (!status.ok()) return status;
  // libpq decodes %3D: the server gets options "-csearch_path=<schema>".
  return absl::StrCat(Uri(), "?options=-csearch_path%3D", schema);
}

std::string PostgresCluster::LogTail(size_t bytes) const {
  return Tail(directory_ + "/server.log", bytes);
}

std::string PostgresCluster::DescribeSettings(const std::vector<std::string>& names) const {
  absl::StatusOr<std::unique_ptr<common::postgres::Connection>> conn =
      common::postgres::Connection::Open(Uri());
  std::string lines;
  for (const std::string& name : names) {
    absl::StatusOr<common::postgres::Result> value =
        conn.ok() ? (*conn)->Exec(absl::StrCat("SHOW ", name))
                  : absl::StatusOr<common::postgres::Result>(conn.status());
    absl::StrAppend(&lines, "PostgreSQL ", name, " = ",
                    value.ok() ? std::string(value->Bytes(0, 0)) : "?", "\n");
  }
  return lines;
}

absl::StatusOr<pid_t> PostgresCluster::Spawn(const std::string& binary,
                                             const std::vector<std::string>& args,
                                             const std::string& log) {
  std::vector<std::string> argv;
  if (drop_root_) {
    argv = {kSetpriv, absl::StrCat("--reuid=", uid_), absl::StrCat("--regid=", gid_),
            "--clear-groups", "--"};
  }
  argv.push_back(bindir_ + "/" + binary);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw_argv;
  for (std::string& arg : argv) raw_argv.push_back(arg.data());
  raw_argv.push_back(nullptr);
  // A minimal environment: nothing of the test's (TEST_TMPDIR, HOME=/root) leaks in.
  std::string env_path = "PATH=/usr/bin:/bin";
  std::string env_lc = "LC_ALL=C";
  std::string env_home = absl::StrCat("HOME=", directory_);
  char* envp[] = {env_path.data(), env_lc.data(), env_home.data(), nullptr};

  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return absl::InternalError(absl::StrCat("open ", log, ": ", strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, log_fd, STDERR_FILENO);
  pid_t pid = -1;
  const int error = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, raw_argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  close(log_fd);
  if (error != 0) {
    return absl::InternalError(absl::StrCat("spawn ", argv[0], ": ", std::strerror(error)));
  }
  return pid;
}

absl::Status PostgresCluster::Run(const std::string& binary, const std::vector<std::string>& args,
                                  const std::string& log) {
  absl::StatusOr<pid_t> pid = Spawn(binary, args, log);
  if (!pid.ok()) return pid.status();
  int status = 0;
  if (!WaitFor(*pid, options_.timeout, &status)) {
    kill(*pid, SIGKILL);
    waitpid(*pid, &status, 0);
    return absl::UnavailableError(absl::StrCat(binary, " did not finish within ",
                                               absl::FormatDuration(options_.timeout), ":\n",
                                               Tail(log, 2000)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::UnavailableError(
        absl::StrCat(binary, " failed (wait status ", status, "):\n", Tail(log, 2000)));
  }
  return absl::OkStatus();
}

absl::Status PostgresCluster::InitDb() {
  return Run("initdb",
             {"-D", directory_ + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
              "--locale=C", "--no-sync"},
             directory_ + "/initdb.log");
}

absl::Status PostgresCluster::StartServer(bool retry_port) {
  const int attempts = retry_port ? 5 : 1;
  absl::Status last;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (retry_port) {
      absl::StatusOr<int> port = FreePort();
      if (!port.ok()) return port.status();
      port_ = *port;
    }
    const std::string log = directory_ + "/server.log";
    const size_t log_start = Tail(log, static_cast<size_t>(-1)).size();
    absl::StatusOr<pid_t> pid = Spawn(
        "postgres",
        {"-D", directory_ + "/data", "-c", "listen_addresses=127.0.0.1", "-c",
         absl::StrCat("port=", port_), "-c", absl::StrCat("unix_socket_directories=", directory_)},
        log);
    if (!pid.ok()) return pid.status();
    pid_ = *pid;

    const std::string conninfo = absl::StrCat(
        "host=127.0.0.1 port=", port_, " dbname=postgres user=postgres", " connect_timeout=2");
    const absl::Time deadline = absl::Now() + options_.timeout;
    while (true) {
      if (PQping(conninfo.c_str()) == PQPING_OK) return absl::OkStatus();
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        const std::string output = Tail(log, static_cast<size_t>(-1)).substr(log_start);
        last = absl::UnavailableError(
            absl::StrCat("postgres exited while starting (wait status ", status, "):\n", output));
        break;
      }
      if (absl::Now() >= deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
        return absl::UnavailableError(
            absl::StrCat("postgres did not accept connections on 127.0.0.1:", port_, " within ",
                         absl::FormatDuration(options_.timeout), ":\n", LogTail()));
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    // Only a lost race for the port is worth another port.
    if (!absl::StrContains(last.message(), "could not bind") &&
        !absl::StrContains(last.message(), "could not create any TCP/IP sockets")) {
      return last;
    }
  }
  return last;
}

absl::Status PostgresCluster::Stop() {
  if (!running()) return absl::FailedPreconditionError("the PostgreSQL server is not running");
  const pid_t pid = pid_;
  pid_ = -1;
  const absl::Status stopped =
      Run("pg_ctl",
          {"stop", "-D", directory_ + "/data", "-m", "immediate", "-w", "-t",
           absl::StrCat(std::max<int64_t>(1, absl::ToInt64Seconds(options_.timeout)))},
          directory_ + "/pg_ctl.log");
  int status = 0;
  if (!stopped.ok() || !WaitFor(pid, options_.timeout, &status)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return stopped.ok() ? absl::InternalError("postgres outlived pg_ctl stop; killed") : stopped;
  }
  return absl::OkStatus();
}

absl::Status PostgresCluster::Start() {
  if (running()) return absl::FailedPreconditionError("the PostgreSQL server is already running");
  return StartServer(/*retry_port=*/false);
}

absl::StatusOr<std::string> FreshDatabase() {
  absl::StatusOr<PostgresCluster*> cluster = PostgresCluster::Shared();
  if (!cluster.ok()) return cluster.status();
  return (*cluster)->CreateDatabase();
}

absl::StatusOr<std::string> FreshSchema() {
  absl::StatusOr<PostgresCluster*> cluster = PostgresCluster::Shared();
  if (!cluster.ok()) return cluster.status();
  return (*cluster)->CreateSchema();
}

absl::StatusOr<OwnedDatabase> CreateClusterWithDatabase(absl::string_view name) {
  OwnedDatabase owned;
  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster = PostgresCluster::Create();
  if (!cluster.ok()) return cluster.status();
  owned.cluster = *std::move(cluster);
  absl::StatusOr<std::string> uri = owned.cluster->CreateDatabase(name);
  if (!uri.ok()) return uri.status();
  owned.uri = *std::move(uri);
  return owned;
}

std::unique_ptr<PostgresCluster> CreateClusterOrExit(absl::string_view program) {
  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster = PostgresCluster::Create();
  if (cluster.ok()) return *std::move(cluster);
  const std::string why(cluster.status().message());
  if (absl::IsNotFound(cluster.status())) {
    std::fprintf(stderr, "%s: no PostgreSQL: %s\n", std::string(program).c_str(), why.c_str());
    std::exit(2);
  }
  std::fprintf(stderr, "%s: PostgreSQL: %s\n", std::string(program).c_str(), why.c_str());
  std::exit(1);
}

}  // namespace sharedos::testing
