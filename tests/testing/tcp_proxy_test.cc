#include "tests/testing/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace sharedos::testing {
namespace {

// An echo server on 127.0.0.1:0 for one connection at a time.
class Echo {
 public:
  Echo() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address));
    listen(listener_, 8);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int client = accept(listener_, nullptr, nullptr);
        if (client < 0) return;
        char buffer[256];
        ssize_t got;
        while ((got = read(client, buffer, sizeof(buffer))) > 0) write(client, buffer, got);
        close(client);
      }
    });
  }
  ~Echo() {
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    thread_.join();
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int listener_;
  int port_;
  std::thread thread_;
};

int Dial(const std::string& address) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(std::stoi(address.substr(address.rfind(':') + 1)));
  inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)), 0);
  return fd;
}

// Sends `text` and reads what comes back within `wait` ("" when nothing does).
std::string RoundTrip(int fd, const std::string& text, absl::Duration wait) {
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  std::string back;
  const absl::Time until = absl::Now() + wait;
  while (back.size() < text.size() && absl::Now() < until) {
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, 20) <= 0) continue;
    char buffer[256];
    const ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got <= 0) break;
    back.append(buffer, got);
  }
  return back;
}

TEST(TcpProxyTest, PassesDelaysAndBlackholes) {
  Echo echo;
  auto proxy = TcpProxy::Start(echo.address());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const int fd = Dial((*proxy)->address());
  EXPECT_EQ(RoundTrip(fd, "hello", absl::Seconds(2)), "hello");

  (*proxy)->Set(TcpProxy::Mode::kDelay, absl::Milliseconds(200));
  const absl::Time start = absl::Now();
  EXPECT_EQ(RoundTrip(fd, "slow", absl::Seconds(2)), "slow");
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(400));  // 200 ms each way

  (*proxy)->Set(TcpProxy::Mode::kBlackhole);
  EXPECT_EQ(RoundTrip(fd, "lost", absl::Milliseconds(300)), "");

  (*proxy)->Set(TcpProxy::Mode::kPass);
  EXPECT_EQ(RoundTrip(fd, "again", absl::Seconds(2)), "again");
  (*proxy)->DropConnections();
  char byte;
  EXPECT_LE(read(fd, &byte, 1), 0);  // the proxy closed it
  close(fd);
}

}  // namespace
}  // namespace sharedos::testing
