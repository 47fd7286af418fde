// A gRPC server for tests of code that runs inside a call (authentication, the RPC adapter):
// every call, of any method, runs the test's handler with the call's context and finishes with
// the status it returns; trailing metadata the handler adds is how it answers. Listens on
// 127.0.0.1:0. testonly. Thread-safe as the handler is.

#ifndef SHAREDOS_COMMON_SERVER_PROBE_SERVER_H_
#define SHAREDOS_COMMON_SERVER_PROBE_SERVER_H_

#include <functional>
#include <memory>
#include <string>

#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/grpcpp.h"

namespace sharedos::common::server::testing {

class ProbeServer {
 public:
  using Handler = std::function<grpc::Status(grpc::GenericCallbackServerContext& context)>;

  explicit ProbeServer(Handler handler);
  // On `port` of 127.0.0.1 (0: any free one), e.g. to come back where a stopped one was.
  ProbeServer(Handler handler, int port);
  ~ProbeServer();

  // Calls the server with "authorization: <authorization>" (no metadata when empty); returns the
  // call's status, and in `trailer` the value of trailing metadata `key` ("" when absent).
  grpc::Status Call(const std::string& authorization, const std::string& key, std::string* trailer);
  // The same with the caller's own context (its metadata and deadline as they are).
  grpc::Status Call(grpc::ClientContext* context, const std::string& key, std::string* trailer);
  // "127.0.0.1:<port>": any method called there runs the handler.
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  class Service;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace sharedos::common::server::testing

#endif  // SHAREDOS_COMMON_SERVER_PROBE_SERVER_H_
