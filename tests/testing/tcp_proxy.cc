#include "tests/testing/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sharedos::testing {

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(const std::string& target) {
  const size_t colon = target.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(target.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(absl::StrCat("target: not host:port: ", target));
  }
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 64) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (listener >= 0) close(listener);
    return absl::InternalError(absl::StrCat("proxy: cannot listen: ", std::strerror(errno)));
  }
  return std::unique_ptr<TcpProxy>(new TcpProxy(listener,
                                                absl::StrCat("127.0.0.1:", ntohs(address.sin_port)),
                                                target.substr(0, colon), port));
}

TcpProxy::TcpProxy(int listener, std::string address, std::string target_host, int target_port)
    : listener_(listener),
      address_(std::move(address)),
      target_host_(std::move(target_host)),
      target_port_(target_port) {
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  shutdown(listener_, SHUT_RDWR);
  acceptor_.join();
  close(listener_);
  DropConnections();
  std::vector<std::thread> pumps;
  {
    absl::MutexLock lock(&mu_);
    pumps.swap(pumps_);
  }
  for (std::thread& pump : pumps) pump.join();
  absl::MutexLock lock(&mu_);
  for (int socket : sockets_) close(socket);
}

void TcpProxy::Set(Mode mode, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  mode_ = mode;
  delay_ = delay;
}

void TcpProxy::DropConnections() {
  absl::MutexLock lock(&mu_);
  for (int socket : sockets_) shutdown(socket, SHUT_RDWR);
}

int TcpProxy::Connect() const {
  const int socket_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(target_port_));
  inet_pton(AF_INET, target_host_ == "localhost" ? "127.0.0.1" : target_host_.c_str(),
            &address.sin_addr);
  if (socket_fd >= 0 &&
      connect(socket_fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    return socket_fd;
  }
  if (socket_fd >= 0) close(socket_fd);
  return -1;
}

void TcpProxy::AcceptLoop() {
  while (!stopping_) {
    const int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (stopping_) return;
      continue;
    }
    const int upstream = Connect();
    if (upstream < 0) {
      close(client);
      continue;
    }
    absl::MutexLock lock(&mu_);
    sockets_.push_back(client);
    sockets_.push_back(upstream);
    pumps_.emplace_back([this, client, upstream] { Pump(client, upstream); });
    pumps_.emplace_back([this, client, upstream] { Pump(upstream, client); });
  }
}

// Copies `from` to `to` until either side closes, in the mode of the moment for each chunk.
void TcpProxy::Pump(int from, int to) {
  char buffer[16 * 1024];
  while (!stopping_) {
    pollfd ready{from, POLLIN, 0};
    const int polled = poll(&ready, 1, 100);
    if (polled == 0) continue;
    if (polled < 0) return;
    const ssize_t got = read(from, buffer, sizeof(buffer));
    if (got <= 0) break;
    Mode mode;
    absl::Duration delay;
    {
      absl::MutexLock lock(&mu_);
      mode = mode_;
      delay = delay_;
    }
    if (mode == Mode::kBlackhole) continue;
    if (mode == Mode::kDelay) absl::SleepFor(delay);
    for (ssize_t sent = 0; sent < got;) {
      const ssize_t wrote = send(to, buffer + sent, got - sent, MSG_NOSIGNAL);
      if (wrote <= 0) return;
      sent += wrote;
    }
  }
  shutdown(to, SHUT_WR);
}

}  // namespace sharedos::testing
