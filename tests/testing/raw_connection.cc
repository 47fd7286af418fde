#include "tests/testing/raw_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "absl/time/clock.h"

namespace sharedos::testing {

RawConnection::RawConnection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::Send(const std::string& text) {
  return send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
}

std::string RawConnection::Receive(absl::Duration wait) {
  std::string in;
  const absl::Time give_up = absl::Now() + wait;
  while (absl::Now() < give_up) {
    pollfd p = {fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buffer[8192];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      closed_ = true;
      break;
    }
    in.append(buffer, static_cast<size_t>(n));
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    const size_t length_at = in.find("Content-Length: ");
    if (length_at == std::string::npos || length_at > end) continue;
    const size_t length = std::strtoul(in.c_str() + length_at + 16, nullptr, 10);
    if (in.size() >= end + 4 + length) break;
  }
  return in;
}

bool RawConnection::ClosedWithin(absl::Duration wait) {
  Receive(wait);
  return closed_;
}

}  // namespace sharedos::testing
