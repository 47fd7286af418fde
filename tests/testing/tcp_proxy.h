// A TCP proxy for fault tests: listens on 127.0.0.1:0 and forwards each connection to a target,
// in one of three modes switched at any time — pass (bytes as they come), delay (each chunk held
// for a while before it is forwarded, both ways) and blackhole (connections stay open, bytes are
// read and dropped, nothing is answered: a dependency that hangs). Thread-safe; one thread per
// direction of each connection, all joined on destruction. testonly.

#ifndef SHAREDOS_TESTS_TESTING_TCP_PROXY_H_
#define SHAREDOS_TESTS_TESTING_TCP_PROXY_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sharedos::testing {

class TcpProxy {
 public:
  enum class Mode { kPass, kDelay, kBlackhole };

  // `target` is "host:port" (IPv4). Errors: INTERNAL (cannot listen).
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(const std::string& target);
  ~TcpProxy();

  // "127.0.0.1:<port>".
  const std::string& address() const { return address_; }
  // The mode for every byte from now on; `delay` only for kDelay.
  void Set(Mode mode, absl::Duration delay = absl::ZeroDuration());
  // Closes every open connection (a dependency that drops its peers).
  void DropConnections();

 private:
  TcpProxy(int listener, std::string address, std::string target_host, int target_port);
  void AcceptLoop();
  void Pump(int from, int to);
  int Connect() const;

  const int listener_;
  const std::string address_, target_host_;
  const int target_port_;
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  Mode mode_ ABSL_GUARDED_BY(mu_) = Mode::kPass;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_);
  std::vector<int> sockets_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> pumps_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_TCP_PROXY_H_
