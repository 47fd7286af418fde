// The one shape of an RPC in every SharedOS gRPC adapter (house style 2): authenticate the
// caller, admit it by the method's row of the access table (access_policy.h), call the core,
// answer the core's response or its status (converted once, by common::ToGrpcStatus). Each
// adapter holds an RpcAdapter and writes each RPC body as one call of it. Thread-safe (the
// Authenticator is immutable).

#ifndef SHAREDOS_COMMON_SERVER_RPC_ADAPTER_H_
#define SHAREDOS_COMMON_SERVER_RPC_ADAPTER_H_

#include <initializer_list>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/server/access_policy.h"
#include "common/server/auth.h"
#include "common/server/grpc_auth.h"
#include "common/server/rpc_trace.h"
#include "common/status/grpc_status.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace sharedos::common::server {

// A core's answer as an RPC's: its response moved into `response`, or its status.
template <typename Response>
grpc::Status Answer(absl::StatusOr<Response> result, Response* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

class RpcAdapter {
 public:
  // Borrows `authenticator`, which must outlive the adapter.
  explicit RpcAdapter(const Authenticator& authenticator) : authenticator_(authenticator) {}

  // Authenticates the call and admits it by the access table's row of `method` ("<package>.
  // <Service>/<Method>"), then answers `call(principal)` — an absl::StatusOr<Response> — into
  // `response`. Errors: UNAUTHENTICATED (a missing or unknown credential), PERMISSION_DENIED (a
  // role, or a service, the row does not admit; `call` does not run either); whatever `call`
  // returns. The call's W3C trace context (rpc_trace.h) is the thread's while it runs: its log
  // lines name it and the calls it makes over SharedOS channels carry it.
  template <typename Response, typename Call>
  grpc::Status Unary(const grpc::ServerContextBase& context, absl::string_view method,
                     Response* response, Call&& call) const {
    const IncomingTrace trace = ReadIncomingTrace(context);
    const logging::ScopedTrace scope(trace.context);
    grpc::Status status = Authorized(context, method, response, std::forward<Call>(call));
    LogTracedCall(trace, status);
    return status;
  }

  // The caller of a streaming method, authenticated and admitted by `method`'s row (errors as
  // Unary's).
  absl::StatusOr<Principal> Caller(const grpc::ServerContextBase& context,
                                   absl::string_view method) const {
    absl::StatusOr<Principal> caller = AuthenticateCaller(authenticator_, context);
    if (!caller.ok()) return caller;
    if (absl::Status admitted = Admit(method, *caller); !admitted.ok()) return admitted;
    return caller;
  }

 private:
  template <typename Response, typename Call>
  grpc::Status Authorized(const grpc::ServerContextBase& context, absl::string_view method,
                          Response* response, Call&& call) const {
    absl::StatusOr<Principal> caller = Caller(context, method);
    if (!caller.ok()) return ToGrpcStatus(caller.status());
    return Answer(std::forward<Call>(call)(*caller), response);
  }

  const Authenticator& authenticator_;
};

// The base of every gRPC adapter: the generated service `Grpc` it implements (Grpc::Service),
// the `Core` it adapts and the RpcAdapter its RPCs go through (SHAREDOS_UNARY_RPC below). An
// adapter inherits the constructor (`using CoreAdapter::CoreAdapter;`). Thread-safe when the core
// is.
template <typename Grpc, typename Core>
class CoreAdapter : public Grpc::Service {
 public:
  // Borrows both; each must outlive the adapter.
  CoreAdapter(Core& core, const Authenticator& authenticator) : core_(core), rpc_(authenticator) {}

 protected:
  // "<package>.<Service>/<method>" of this adapter's service: its row in the access table.
  static std::string MethodName(absl::string_view method) {
    return absl::StrCat(Grpc::service_full_name(), "/", method);
  }

  Core& core_;
  const RpcAdapter rpc_;
};

}  // namespace sharedos::common::server

// Defines, inside a gRPC adapter class, the override of unary RPC `Method` of its generated
// service, answered by the expression after it, which may use `request` (the request message, a
// pointer) and `caller` (the authenticated Principal). Who may call it is the access table's row
// for the method (access_policy.h); what the row's rule says of the data the core judges (a
// credential, an escalation, a turn, each record of a page). The class is a CoreAdapter, and
// `v1` names the service's proto package, whose messages follow the <Method>Request /
// <Method>Response convention of every SharedOS service. One line per RPC.
#define SHAREDOS_UNARY_RPC(Method, ...)                                                    \
  grpc::Status Method(grpc::ServerContext* context, const v1::Method##Request* request,    \
                      v1::Method##Response* response) override {                           \
    static const std::string kMethod = MethodName(#Method);                                \
    return rpc_.Unary(                                                                     \
        *context, kMethod, response,                                                       \
        [&](const ::sharedos::common::server::Principal& caller) { return __VA_ARGS__; }); \
  }

// As SHAREDOS_UNARY_RPC, for a method whose target (a common::server::Target: the namespace, owner
// or authority the request names) is known from the request: the row's rule is checked against it
// (PERMISSION_DENIED naming what lies outside the caller's scope) before the core runs.
#define SHAREDOS_SCOPED_RPC(Method, target, ...)                                        \
  grpc::Status Method(grpc::ServerContext* context, const v1::Method##Request* request, \
                      v1::Method##Response* response) override {                        \
    static const std::string kMethod = MethodName(#Method);                             \
    return rpc_.Unary(                                                                  \
        *context, kMethod, response,                                                    \
        [&](const ::sharedos::common::server::Principal& caller)                        \
            -> absl::StatusOr<v1::Method##Response> {                                   \
          if (absl::Status in_scope =                                                   \
                  ::sharedos::common::server::CheckTarget(kMethod, caller, target);     \
              !in_scope.ok()) {                                                         \
            return in_scope;                                                            \
          }                                                                             \
          return __VA_ARGS__;                                                           \
        });                                                                             \
  }

#endif  // SHAREDOS_COMMON_SERVER_RPC_ADAPTER_H_
