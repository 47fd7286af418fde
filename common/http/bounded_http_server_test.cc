// The bounded HTTP server over real sockets: routes, the header check before the body, the
// limits on headers and bodies, the caps on connections, and a slow client that loses its
// connection while others are served.
#include "common/http/bounded_http_server.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/raw_connection.h"

namespace sharedos::common::http {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using RawClient = ::sharedos::testing::RawConnection;

std::string Post(const std::string& path, const std::string& body,
                 const std::string& extra_headers = "") {
  return absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n",
                      extra_headers, "Content-Length: ", body.size(), "\r\n\r\n", body);
}

class BoundedHttpServerTest : public ::testing::Test {
 protected:
  void Serve(BoundedHttpServer::Options options) {
    options.port = 0;
    auto bound = BoundedHttpServer::Bind(options);
    ASSERT_TRUE(bound.ok()) << bound.status();
    server_ = *std::move(bound);
    server_->Route("POST", "/echo", [](const Request& request, Response& response) {
      response.set_content(absl::StrCat(request.get_param_value("p"), ":", request.body),
                           "text/plain");
    });
    server_->Route(
        "POST", "/guarded",
        [this](const Request& request, Response& response) {
          ++guarded_bodies_;
          response.set_content("in", "text/plain");
        },
        [](const Request& request, Response& response) {
          if (request.get_header_value("Authorization") == "Bearer good") return true;
          response.status = 401;
          response.set_content("no token", "text/plain");
          return false;
        });
    server_->Start();
  }

  std::unique_ptr<BoundedHttpServer> server_;
  std::atomic<int> guarded_bodies_{0};
};

TEST_F(BoundedHttpServerTest, RoutesAnswerAndKeepTheConnectionAlive) {
  Serve({});
  RawClient client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Post("/echo?p=a%20b", "hello")));
  std::string answer = client.Receive();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(answer, HasSubstr("a b:hello"));
  ASSERT_TRUE(client.Send(Post("/echo", "again")));
  EXPECT_THAT(client.Receive(), HasSubstr(":again"));
  ASSERT_TRUE(client.Send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_THAT(client.Receive(), StartsWith("HTTP/1.1 405"));
}

TEST_F(BoundedHttpServerTest, TheHeaderCheckRefusesBeforeAnyOfTheBodyIsRead) {
  Serve({});
  RawClient client(server_->port());
  // A declared 1 MB body, none of it sent: the refusal comes from the headers alone.
  ASSERT_TRUE(client.Send("POST /guarded HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"));
  const std::string answer = client.Receive(absl::Seconds(3));
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 401"));
  EXPECT_TRUE(client.ClosedWithin(absl::Seconds(3)));
  EXPECT_EQ(guarded_bodies_.load(), 0);
  RawClient good(server_->port());
  ASSERT_TRUE(good.Send(Post("/guarded", "x", "Authorization: Bearer good\r\n")));
  EXPECT_THAT(good.Receive(), StartsWith("HTTP/1.1 200"));
}

TEST_F(BoundedHttpServerTest, HeadersAndBodiesAreBounded) {
  BoundedHttpServer::Options options;
  options.max_header_bytes = 1024;
  options.max_body_bytes = 100;
  Serve(options);
  RawClient big_header(server_->port());
  ASSERT_TRUE(
      big_header.Send(Post("/echo", "x", absl::StrCat("X-Big: ", std::string(4000, 'a'), "\r\n"))));
  EXPECT_THAT(big_header.Receive(), StartsWith("HTTP/1.1 431"));
  RawClient big_body(server_->port());
  ASSERT_TRUE(big_body.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n"));
  EXPECT_THAT(big_body.Receive(), StartsWith("HTTP/1.1 413"));
  RawClient chunked(server_->port());
  ASSERT_TRUE(
      chunked.Send(absl::StrCat("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                                "chunked\r\n\r\n80\r\n",
                                std::string(128, 'c'), "\r\n0\r\n\r\n")));
  EXPECT_THAT(chunked.Receive(), StartsWith("HTTP/1.1 413"));
}

// Issue 34 (observation 4): slow clients cost no thread and lose their connection at the read
// timeout, while other clients are served meanwhile.
TEST_F(BoundedHttpServerTest, SlowClientsAreCutOffWhileOthersAreServed) {
  BoundedHttpServer::Options options;
  options.read_timeout = absl::Seconds(1);
  options.handler_threads = 1;
  Serve(options);
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(std::make_unique<RawClient>(server_->port()));
    ASSERT_TRUE(slow.back()->Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Le"));
  }
  const absl::Time start = absl::Now();
  RawClient fast(server_->port());
  ASSERT_TRUE(fast.Send(Post("/echo", "quick")));
  EXPECT_THAT(fast.Receive(), HasSubstr(":quick"));
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(900));
  // One more byte now and then does not keep a connection: the deadline covers the request.
  for (int i = 0; i < 3; ++i) {
    absl::SleepFor(absl::Milliseconds(300));
    slow[0]->Send("n");
  }
  for (auto& client : slow) EXPECT_TRUE(client->ClosedWithin(absl::Seconds(3)));
  // The socket closes at the deadline; the read's completion (counted) follows.
  for (int attempt = 0; attempt < 50 && server_->stats().timed_out < 20; ++attempt) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_GE(server_->stats().timed_out, 20u);
}

TEST_F(BoundedHttpServerTest, ConnectionsAreCappedPerAddressAndInTotal) {
  BoundedHttpServer::Options options;
  options.max_connections_per_address = 3;
  Serve(options);
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<RawClient>(server_->port()));
    ASSERT_TRUE(held.back()->Send(Post("/echo", "x")));
    EXPECT_THAT(held.back()->Receive(), StartsWith("HTTP/1.1 200"));
  }
  RawClient fourth(server_->port());
  EXPECT_TRUE(fourth.ClosedWithin(absl::Seconds(3)));
  EXPECT_EQ(server_->stats().refused_per_address, 1u);
  held.clear();
  // Slots come back as connections close.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (server_->stats().open == 0) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  RawClient again(server_->port());
  ASSERT_TRUE(again.Send(Post("/echo", "y")));
  EXPECT_THAT(again.Receive(), HasSubstr(":y"));
}

}  // namespace
}  // namespace sharedos::common::http
