#include "tools/sharedosctl/login.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/oidc/config.h"
#include "common/oidc/discovery.h"
#include "common/oidc/http_fetcher.h"
#include "common/text/terminal_safe.h"

namespace sharedos::sharedosctl {
namespace {

namespace oauth = ::sharedos::common::oauth;

constexpr char kDeviceCodeGrant[] = "urn:ietf:params:oauth:grant-type:device_code";
constexpr absl::Duration kDefaultInterval = absl::Seconds(5);
constexpr absl::Duration kSlowDownStep = absl::Seconds(5);
constexpr size_t kMaxFieldBytes = 2048;

// A positive integer member in seconds; nullopt when absent or not a positive integer.
std::optional<absl::Duration> Seconds(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  if (it == object.end() || !it->is_number_integer() || it->get<int64_t>() <= 0) {
    return std::nullopt;
  }
  return absl::Seconds(std::min<int64_t>(it->get<int64_t>(), 365 * 24 * 3600));
}

// The directory `dir` as this user's and nobody else's, created (0700) when missing.
absl::Status PrivateDirectory(const std::string& dir) {
  struct stat info;
  if (lstat(dir.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot read ", dir, ": ", std::strerror(errno)));
    }
    const size_t slash = dir.find_last_of('/');
    if (slash != std::string::npos && slash > 0) {
      const std::string parent = dir.substr(0, slash);
      struct stat parent_info;
      if (lstat(parent.c_str(), &parent_info) != 0 && mkdir(parent.c_str(), 0700) != 0 &&
          errno != EEXIST) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot create ", parent, ": ", std::strerror(errno)));
      }
    }
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
    }
    if (lstat(dir.c_str(), &info) != 0) {
      return absl::FailedPreconditionError(absl::StrCat("cannot read ", dir));
    }
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, " is not a directory (a symbolic link is refused); remove it"));
  }
  if (info.st_uid != geteuid() || (info.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, " must be yours and open to nobody else (chmod 700 ", dir, "): it keeps a token"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DeviceAuthorization> ParseDeviceAuthorization(const nlohmann::json& answer) {
  DeviceAuthorization authorization;
  for (auto [name, field] :
       {std::pair<const char*, std::string*>{"device_code", &authorization.device_code},
        {"user_code", &authorization.user_code},
        {"verification_uri", &authorization.verification_uri}}) {
    *field = oauth::StringMember(answer, name);
    if (field->empty() || field->size() > kMaxFieldBytes) {
      return absl::UnavailableError(absl::StrCat("the device authorization answer has no ", name,
                                                 " (at most ", kMaxFieldBytes, " bytes)"));
    }
  }
  authorization.verification_uri_complete =
      oauth::StringMember(answer, "verification_uri_complete").substr(0, kMaxFieldBytes);
  std::optional<absl::Duration> expires_in = Seconds(answer, "expires_in");
  if (!expires_in.has_value()) {
    return absl::UnavailableError("the device authorization answer has no expires_in");
  }
  authorization.expires_in = std::min(*expires_in, kMaxDeviceCodeLifetime);
  authorization.interval = std::clamp(Seconds(answer, "interval").value_or(kDefaultInterval),
                                      absl::Seconds(1), kMaxPollInterval);
  return authorization;
}

absl::StatusOr<std::string> PollForToken(const DeviceAuthorization& authorization,
                                         absl::string_view client_id,
                                         const DevicePolling& polling) {
  const absl::Time deadline = polling.clock->Now() + authorization.expires_in;
  absl::Duration interval = authorization.interval;
  const std::map<std::string, std::string> fields = {{"grant_type", kDeviceCodeGrant},
                                                     {"device_code", authorization.device_code},
                                                     {"client_id", std::string(client_id)}};
  while (true) {
    polling.sleep(interval);
    if (polling.clock->Now() >= deadline) {
      return absl::DeadlineExceededError(
          "the code expired before it was approved; run sharedosctl login again");
    }
    absl::StatusOr<oauth::HttpAnswer> answer = polling.post(fields);
    if (!answer.ok()) return answer.status();
    std::string error;
    absl::StatusOr<nlohmann::json> parsed = oauth::ParseAnswer(*answer, &error);
    if (parsed.ok()) {
      std::string token = oauth::StringMember(*parsed, "access_token");
      if (token.empty()) return absl::UnavailableError("the token answer has no access_token");
      return token;
    }
    if (error == "authorization_pending") continue;
    if (error == "slow_down") {
      interval = std::min(interval + kSlowDownStep, kMaxPollInterval);
      continue;
    }
    if (error == "expired_token") {
      return absl::DeadlineExceededError(
          "the code expired before it was approved; run sharedosctl login again");
    }
    return parsed.status();
  }
}

absl::StatusOr<std::string> LoginTokenPath() {
  for (auto [variable, suffix] : {std::pair<const char*, const char*>{"SHAREDOS_CONFIG_DIR", ""},
                                  {"XDG_CONFIG_HOME", "/sharedos"},
                                  {"HOME", "/.config/sharedos"}}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && value[0] == '/') return absl::StrCat(value, suffix, "/token");
  }
  return absl::FailedPreconditionError(
      "no place for the login token: set HOME, XDG_CONFIG_HOME or SHAREDOS_CONFIG_DIR (an "
      "absolute path)");
}

absl::Status StoreLoginToken(const std::string& path, absl::string_view token) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos || slash == 0) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": not a path in a directory"));
  }
  const std::string dir = path.substr(0, slash);
  if (absl::Status private_dir = PrivateDirectory(dir); !private_dir.ok()) return private_dir;
  const std::string temporary = absl::StrCat(path, ".new");
  unlink(temporary.c_str());
  const int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot create ", temporary, ": ", std::strerror(errno)));
  }
  const std::string line = absl::StrCat(token, "\n");
  const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       fchmod(fd, 0600) == 0 && fsync(fd) == 0;
  close(fd);
  if (!written || rename(temporary.c_str(), path.c_str()) != 0) {
    unlink(temporary.c_str());
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> ExistingLoginTokenFile() {
  absl::StatusOr<std::string> path = LoginTokenPath();
  if (!path.ok()) return std::optional<std::string>();
  struct stat info;
  if (lstat(path->c_str(), &info) != 0) return std::optional<std::string>();
  if (!S_ISREG(info.st_mode) || info.st_uid != geteuid() || (info.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the login token ", *path, " must be a file of yours open to nobody else (chmod 600 ",
        *path, "), or give --token_file"));
  }
  return std::optional<std::string>(*path);
}

int RunLogin(const LoginOptions& options, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const absl::Status& status) {
    err << "sharedosctl: login: " << common::text::TerminalSafe(status.message()) << "\n";
    return 1;
  };
  absl::StatusOr<std::string> path = LoginTokenPath();
  if (!path.ok()) return fail(path.status());
  common::oidc::OidcConfig config;
  config.issuer = options.issuer;
  config.allow_loopback_http = options.allow_loopback_http;
  config.ca_file = options.ca_file;
  config.http_timeout = options.timeout;
  if (!common::oidc::IsAllowedProviderUrl(config, options.issuer)) {
    return fail(absl::InvalidArgumentError(
        "--issuer: an https:// URL (http:// only on loopback with --allow_loopback_http)"));
  }
  common::oidc::HttplibFetcher fetcher(options.timeout, options.ca_file);
  absl::StatusOr<common::oidc::ProviderMetadata> metadata =
      common::oidc::FetchDiscovery(config, fetcher);
  if (!metadata.ok()) return fail(metadata.status());
  if (metadata->device_authorization_endpoint.empty() || metadata->token_endpoint.empty()) {
    return fail(
        absl::UnavailableError("the provider offers no device authorization endpoint (RFC 8628)"));
  }
  std::map<std::string, std::string> ask = {{"client_id", options.client_id},
                                            {"scope", options.scope}};
  if (!options.resource.empty()) ask["resource"] = options.resource;
  absl::StatusOr<oauth::HttpAnswer> asked = oauth::PostForm(
      metadata->device_authorization_endpoint, ask, "", "", options.ca_file, options.timeout);
  if (!asked.ok()) return fail(asked.status());
  absl::StatusOr<nlohmann::json> answer = oauth::ParseAnswer(*asked);
  if (!answer.ok()) return fail(answer.status());
  absl::StatusOr<DeviceAuthorization> authorization = ParseDeviceAuthorization(*answer);
  if (!authorization.ok()) return fail(authorization.status());
  // The provider's strings reach the terminal: made safe.
  out << "To sign in, open " << common::text::TerminalSafe(authorization->verification_uri)
      << " and enter the code " << common::text::TerminalSafe(authorization->user_code) << "\n";
  if (!authorization->verification_uri_complete.empty()) {
    out << "(or open " << common::text::TerminalSafe(authorization->verification_uri_complete)
        << ")\n";
  }
  out << "Waiting for approval (the code expires in "
      << absl::ToInt64Seconds(authorization->expires_in) << " s)...\n";
  out.flush();
  DevicePolling polling;
  polling.post = [&](const std::map<std::string, std::string>& fields) {
    if (!options.resource.empty()) {
      std::map<std::string, std::string> with_resource = fields;
      with_resource["resource"] = options.resource;
      return oauth::PostForm(metadata->token_endpoint, with_resource, "", "", options.ca_file,
                             options.timeout);
    }
    return oauth::PostForm(metadata->token_endpoint, fields, "", "", options.ca_file,
                           options.timeout);
  };
  polling.sleep = [](absl::Duration wait) {
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(wait));
  };
  polling.clock = &common::RealClock();
  absl::StatusOr<std::string> token = PollForToken(*authorization, options.client_id, polling);
  if (!token.ok()) return fail(token.status());
  if (absl::Status stored = StoreLoginToken(*path, *token); !stored.ok()) return fail(stored);
  out << "Signed in. Token kept in " << *path
      << " (mode 0600); commands use it when no --token_file is given.\n";
  return 0;
}

}  // namespace sharedos::sharedosctl
