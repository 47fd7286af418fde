#include "common/client/channel.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/client/rpc_client_metrics.h"
#include "common/client/trace_interceptor.h"
#include "common/server/loopback.h"
#include "common/server/secret_file.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "grpcpp/support/channel_arguments.h"

namespace sharedos::common::client {
namespace {

// The files of `tls`, each readable; half a client pair or a pair without a CA refused.
absl::Status CheckFiles(const ChannelTls& tls) {
  const bool cert = !tls.client_cert_file.empty(), key = !tls.client_key_file.empty();
  if (cert != key) {
    return absl::InvalidArgumentError(cert ? "--tls_client_key: required with --tls_client_cert"
                                           : "--tls_client_cert: required with --tls_client_key");
  }
  if (cert && !tls.enabled()) {
    return absl::InvalidArgumentError("--tls_client_cert: requires --tls_ca");
  }
  if (!tls.server_name.empty() && !tls.enabled()) {
    return absl::InvalidArgumentError("--tls_server_name: requires --tls_ca");
  }
  const std::pair<const std::string*, const char*> files[] = {
      {&tls.ca_file, "--tls_ca"},
      {&tls.client_cert_file, "--tls_client_cert"},
      {&tls.client_key_file, "--tls_client_key"}};
  for (const auto& [path, flag] : files) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> contents =
        server::ReadSecretFile(*path, server::SecretPart::kWholeFile, flag);
    if (!contents.ok()) return contents.status();
    if (!absl::StrContains(*contents, "-----BEGIN ")) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": no PEM data in ", *path));
    }
  }
  return absl::OkStatus();
}

std::shared_ptr<grpc::ChannelCredentials> TlsCredentials(const ChannelTls& tls) {
  const int64_t seconds = absl::ToInt64Seconds(tls.reload_interval);
  const unsigned int refresh = seconds < 1 ? 1 : static_cast<unsigned int>(seconds);
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider;
  if (tls.client_cert_file.empty()) {
    provider =
        std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(tls.ca_file, refresh);
  } else {
    provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
        tls.client_key_file, tls.client_cert_file, tls.ca_file, refresh);
  }
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(std::move(provider));
  options.watch_root_certs();
  if (!tls.client_cert_file.empty()) options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  return grpc::experimental::TlsCredentials(options);
}

// Every SharedOS channel: the caller's trace sent on (trace_interceptor.h), and its calls' latency
// counted when the process installed metrics (rpc_client_metrics.h).
std::shared_ptr<grpc::Channel> CreateChannel(
    const std::string& target, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const grpc::ChannelArguments& arguments) {
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<TraceInterceptorFactory>());
  if (auto metrics = NewClientMetricsFactory(); metrics != nullptr) {
    factories.push_back(std::move(metrics));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, arguments,
                                                                 std::move(factories));
}

}  // namespace

bool IsLoopbackTarget(absl::string_view target) {
  if (absl::StartsWith(target, "unix:") || absl::StartsWith(target, "unix-abstract:")) return true;
  // A list of addresses ("ipv4:127.0.0.1:1,127.0.0.1:2"): loopback only if every one is.
  for (absl::string_view scheme : {"ipv4:", "ipv6:"}) {
    if (!absl::ConsumePrefix(&target, scheme)) continue;
    if (target.empty()) return false;
    for (absl::string_view address : absl::StrSplit(target, ',')) {
      if (address.empty() || absl::StrContains(address, "://") || !IsLoopbackTarget(address)) {
        return false;
      }
    }
    return true;
  }
  absl::ConsumePrefix(&target, "dns:///");
  absl::string_view host = target;
  if (absl::StartsWith(target, "[")) {
    const size_t close = target.find(']');
    if (close == absl::string_view::npos) return false;
    host = target.substr(1, close - 1);
  } else if (const size_t colon = target.rfind(':'); colon != absl::string_view::npos) {
    host = target.substr(0, colon);
  }
  return !host.empty() && server::IsLoopbackHost(std::string(host));
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> NewChannel(const std::string& target,
                                                          const ChannelTls& tls,
                                                          absl::string_view flag,
                                                          absl::Duration max_reconnect_backoff,
                                                          Replicas replicas) {
  if (target.empty()) return absl::InvalidArgumentError(absl::StrCat(flag, ": required"));
  if (absl::Status files = CheckFiles(tls); !files.ok()) return files;
  grpc::ChannelArguments arguments;
  // kSpread: every address the target names takes calls in turn (replicas behind one name or a
  // list); one that is down is skipped until it is back. kFirstUp: the first address that
  // answers takes every call until it goes down (the addresses in the target's order, never
  // shuffled).
  arguments.SetLoadBalancingPolicyName(replicas == Replicas::kFirstUp ? "pick_first"
                                                                      : "round_robin");
  if (max_reconnect_backoff > absl::ZeroDuration()) {
    const int millis = static_cast<int>(absl::ToInt64Milliseconds(max_reconnect_backoff));
    arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(millis, 1000));
    arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, std::min(millis, 1000));
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, millis);
  } else {
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
                     static_cast<int>(absl::ToInt64Milliseconds(kDefaultMaxReconnectBackoff)));
  }
  if (!tls.enabled()) {
    if (!IsLoopbackTarget(target)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": plaintext is allowed only on loopback; give --tls_ca to reach ", target));
    }
    return CreateChannel(target, grpc::InsecureChannelCredentials(), arguments);
  }
  if (!tls.server_name.empty()) arguments.SetSslTargetNameOverride(tls.server_name);
  return CreateChannel(target, TlsCredentials(tls), arguments);
}

}  // namespace sharedos::common::client
