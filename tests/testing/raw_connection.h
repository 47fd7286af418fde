// A raw TCP connection to a loopback port, for tests that must behave as no HTTP library would:
// send half a request and stall, hold connections open, send oversized headers.
#ifndef SHAREDOS_TESTS_TESTING_RAW_CONNECTION_H_
#define SHAREDOS_TESTS_TESTING_RAW_CONNECTION_H_

#include <string>

#include "absl/time/time.h"

namespace sharedos::testing {

// Thread-compatible: one thread uses a connection at a time.
class RawConnection {
 public:
  // Connects to 127.0.0.1:`port`; connected() says whether it did.
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // Whether all of `text` was sent.
  bool Send(const std::string& text);
  // What arrives within `wait`: until the peer closes, or an answer whose headers end and whose
  // body is complete by its Content-Length.
  std::string Receive(absl::Duration wait = absl::Seconds(5));
  // Whether the peer has closed the connection (seen by a Receive).
  bool closed() const { return closed_; }
  // Whether the peer closes the connection within `wait`.
  bool ClosedWithin(absl::Duration wait);

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_RAW_CONNECTION_H_
