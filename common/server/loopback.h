#ifndef SHAREDOS_COMMON_SERVER_LOOPBACK_H_
#define SHAREDOS_COMMON_SERVER_LOOPBACK_H_

#include <string>

namespace sharedos::common::server {

// Whether `host` names the loopback interface (127.0.0.0/8, localhost, ::1): the only hosts
// a plaintext listener may bind and a plaintext channel may reach.
inline bool IsLoopbackHost(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]" ||
         host.rfind("127.", 0) == 0;
}

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_LOOPBACK_H_
