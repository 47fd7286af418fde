#include "tests/conformance/loopback_network.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace sharedos::conformance {

absl::Status EnterLoopbackOnlyNetwork() {
  if (unshare(CLONE_NEWNET) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("unshare(CLONE_NEWNET): ", strerror(errno), " (run as root)"));
  }
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  ifreq request{};
  strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  request.ifr_flags |= IFF_UP | IFF_RUNNING;
  up = up && ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  close(fd);
  if (!up) return absl::InternalError(absl::StrCat("bringing lo up: ", strerror(errno)));
  // No route out: an outside address is unreachable at once.
  const int probe = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in outside{};
  outside.sin_family = AF_INET;
  outside.sin_port = htons(443);
  inet_pton(AF_INET, "192.0.2.1", &outside.sin_addr);  // TEST-NET-1: never a real host
  const int connected = connect(probe, reinterpret_cast<sockaddr*>(&outside), sizeof(outside));
  const int error = errno;
  close(probe);
  if (connected == 0 || error != ENETUNREACH) {
    return absl::InternalError(
        absl::StrCat("the namespace still routes outside (connect: ", strerror(error), ")"));
  }
  return absl::OkStatus();
}

}  // namespace sharedos::conformance
