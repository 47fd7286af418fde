// Every channel a SharedOS binary opens to another service (authorizer → grantstore_svc,
// envelope → authorizer_svc and host providers, every audit writer, sharedosctl) comes from
// NewChannel: TLS verified against a configured CA, or plaintext to a loopback target only.
// Every such channel propagates the calling thread's W3C trace context (trace_interceptor.h) and,
// when the process installed metrics, times its calls (rpc_client_metrics.h).
// The flags that fill ChannelTls are in common/server/channel_flags.h (sharedosctl has its own).

#ifndef SHAREDOS_COMMON_CLIENT_CHANNEL_H_
#define SHAREDOS_COMMON_CLIENT_CHANNEL_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"

namespace sharedos::common::client {

// How a channel verifies the server and (under mTLS) identifies itself.
struct ChannelTls {
  // PEM CA bundle the server's certificate must chain to (--tls_ca); set: TLS.
  std::string ca_file;
  // The certificate and key presented to a listener that requires one (--tls_client_cert,
  // --tls_client_key): both or neither, only with ca_file.
  std::string client_cert_file;
  std::string client_key_file;
  // The name the server's certificate must carry instead of the target's host
  // (--tls_server_name); empty: the target's host.
  std::string server_name;
  // How often the files are checked for a change (rotation without restart).
  absl::Duration reload_interval = absl::Seconds(10);

  bool enabled() const { return !ca_file.empty(); }
};

// Whether `target` ("host:port", "[::1]:port", "dns:///host:port", "ipv4:…", "unix:…") is on
// this machine's loopback interface; a list ("ipv4:127.0.0.1:1,127.0.0.1:2") only when every
// address in it is.
bool IsLoopbackTarget(absl::string_view target);

// How a channel to a target that names several servers picks the one for each call
// (ADR 0012).
enum class Replicas {
  // Every server that is up takes calls in turn (gRPC's round_robin): replicas share the load.
  kSpread,
  // Every call goes to the first server of the target, in its order, that is up (gRPC's
  // pick_first); when it goes down, the next one takes over, and the channel stays there. For the
  // audit log's writers: all of them list the audit replicas in the same order, so one replica's
  // group committer takes every append and the chain's one head row is locked once per group,
  // not once per replica's smaller group (docs/performance.md, session 46).
  kFirstUp,
};

// A channel to `target`. A target that names several servers — a list ("ipv4:10.0.0.1:50053,
// 10.0.0.2:50053") or a DNS name with several addresses (a headless Kubernetes Service, a
// network alias shared by replicas) — reaches every server that is up, as `replicas` says
// (spread by default), so replicas of a service are reached through one flag. `flag` names the
// target's flag in errors ("--audit_target"). Errors: INVALID_ARGUMENT "<flag>: required" (empty
// target);
// "<flag>: plaintext is allowed only on loopback; give --tls_ca to reach <target>";
// "--tls_client_cert: ..." (half a pair, a pair without --tls_ca); FAILED_PRECONDITION "--tls_ca:
// cannot read <path>" and the like (files are read once here so that a bad one is a refused
// start-up, then watched). A server that was down is tried again at most
// kDefaultMaxReconnectBackoff apart (gRPC's own bound is 120 s: a service would answer
// authority_unavailable for up to two minutes after the grant store it calls restarted).
// `max_reconnect_backoff` above zero sets that bound and the first retry's delay and the connect
// timeout to at most 1 s: for peers that must be found again at once (envelope replicas).
inline constexpr absl::Duration kDefaultMaxReconnectBackoff = absl::Seconds(5);
absl::StatusOr<std::shared_ptr<grpc::Channel>> NewChannel(
    const std::string& target, const ChannelTls& tls, absl::string_view flag,
    absl::Duration max_reconnect_backoff = absl::ZeroDuration(),
    Replicas replicas = Replicas::kSpread);

}  // namespace sharedos::common::client

#endif  // SHAREDOS_COMMON_CLIENT_CHANNEL_H_
