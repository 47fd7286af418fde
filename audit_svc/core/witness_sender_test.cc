#include "audit_svc/core/witness_sender.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "audit_svc/core/checkpoint.h"
#include "common/http/bounded_http_server.h"
#include "common/http/http_client.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::audit::v1::SignedCheckpoint;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr absl::Duration kDeadline = absl::Seconds(20);

SignedCheckpoint Checkpoint(int64_t sequence) {
  SignedCheckpoint checkpoint;
  checkpoint.set_sequence(sequence);
  checkpoint.set_head_hash(std::string(64, 'a'));
  *checkpoint.mutable_at() = google::protobuf::util::TimeUtil::SecondsToTimestamp(1786438800);
  checkpoint.set_key_id("0123456789abcdef");
  checkpoint.set_signature(std::string(64, 's'));
  return checkpoint;
}

// A witness answering from a script (then 200), recording what it was sent and when; it can be
// held (every Post blocks until released). Thread-safe.
class ScriptedWitness : public common::http::HttpClient {
 public:
  struct Shared {
    absl::Mutex mu;
    std::vector<absl::StatusOr<int>> script ABSL_GUARDED_BY(mu);
    std::vector<std::string> bodies ABSL_GUARDED_BY(mu);
    std::vector<absl::Time> times ABSL_GUARDED_BY(mu);
    bool held ABSL_GUARDED_BY(mu) = false;
  };
  explicit ScriptedWitness(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

  absl::StatusOr<common::http::HttpAnswer> Get(absl::string_view, size_t) const override {
    return absl::UnimplementedError("GET");
  }
  absl::StatusOr<common::http::HttpAnswer> Post(absl::string_view url, const std::string& body,
                                                absl::string_view content_type,
                                                size_t max_bytes) const override {
    absl::MutexLock lock(&shared_->mu);
    EXPECT_EQ(content_type, "application/json");
    EXPECT_EQ(max_bytes, kMaxWitnessAnswerBytes);
    shared_->bodies.push_back(body);
    shared_->times.push_back(absl::Now());
    shared_->mu.Await(absl::Condition(
        +[](bool* held) { return !*held; }, &shared_->held));
    absl::StatusOr<int> next = 200;
    if (!shared_->script.empty()) {
      next = shared_->script.front();
      shared_->script.erase(shared_->script.begin());
    }
    if (!next.ok()) return next.status();
    return common::http::HttpAnswer{*next, "{\"error\":\"checkpoint.sequence: ...\"}"};
  }

 private:
  std::shared_ptr<Shared> shared_;
};

class WitnessSenderTest : public ::testing::Test {
 protected:
  std::unique_ptr<WitnessSender> NewSender(size_t max_pending = 64) {
    WitnessSender::Options options;
    options.url = "https://witness.example:8443/v1/checkpoints?token=never-logged";
    options.initial_backoff = absl::Milliseconds(20);
    options.max_backoff = absl::Milliseconds(80);
    options.max_pending = max_pending;
    auto sender = WitnessSender::Create(std::make_unique<ScriptedWitness>(shared_), options);
    EXPECT_TRUE(sender.ok()) << sender.status();
    return sender.ok() ? *std::move(sender) : nullptr;
  }

  // Waits (on the sender's own state, with a deadline) until `done` holds of its stats.
  bool WaitFor(WitnessSender& sender, std::function<bool(const WitnessSender::Stats&)> done) {
    const absl::Time deadline = absl::Now() + kDeadline;
    while (absl::Now() < deadline) {
      if (done(sender.stats())) return true;
      absl::MutexLock lock(&shared_->mu);
      // Wakes on the next post (or after a short while: stats change off the witness too).
      const size_t seen = shared_->bodies.size();
      auto more = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(shared_->mu) {
        return shared_->bodies.size() > seen;
      };
      shared_->mu.AwaitWithTimeout(absl::Condition(&more), absl::Milliseconds(10));
    }
    return done(sender.stats());
  }

  std::vector<std::string> Bodies() {
    absl::MutexLock lock(&shared_->mu);
    return shared_->bodies;
  }

  std::shared_ptr<ScriptedWitness::Shared> shared_ = std::make_shared<ScriptedWitness::Shared>();
};

TEST_F(WitnessSenderTest, PostsEachCheckpointInOrderAsItsJsonLine) {
  auto sender = NewSender();
  ASSERT_NE(sender, nullptr);
  EXPECT_EQ(sender->host(), "witness.example:8443");  // what is logged: never the path or query
  for (int64_t sequence : {3, 5, 8}) sender->Offer(Checkpoint(sequence));
  ASSERT_TRUE(WaitFor(*sender, [](const auto& s) { return s.delivered == 3; }));
  EXPECT_THAT(Bodies(), ElementsAre(CheckpointJson(Checkpoint(3)), CheckpointJson(Checkpoint(5)),
                                    CheckpointJson(Checkpoint(8))));
  EXPECT_EQ(sender->stats().delivered_sequence, 8);
  EXPECT_EQ(sender->stats().pending, 0);
}

TEST_F(WitnessSenderTest, AWitnessThatIsDownIsRetriedWithAGrowingBackoffUntilItAnswers) {
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->script = {absl::UnavailableError("unreachable: Connection"), 503,
                       absl::UnavailableError("unreachable: Read"), 200};
  }
  auto sender = NewSender();
  ASSERT_NE(sender, nullptr);
  sender->Offer(Checkpoint(4));
  ASSERT_TRUE(WaitFor(*sender, [](const auto& s) { return s.delivered == 1; }));
  const WitnessSender::Stats stats = sender->stats();
  EXPECT_EQ(stats.failed_attempts, 3);
  EXPECT_EQ(stats.refused, 0);
  std::vector<absl::Time> times;
  {
    absl::MutexLock lock(&shared_->mu);
    times = shared_->times;
    EXPECT_THAT(shared_->bodies,
                ElementsAre(CheckpointJson(Checkpoint(4)), CheckpointJson(Checkpoint(4)),
                            CheckpointJson(Checkpoint(4)), CheckpointJson(Checkpoint(4))));
  }
  ASSERT_EQ(times.size(), 4u);
  // 20 ms, then 40 ms, then 80 ms between attempts (each at least its backoff).
  EXPECT_GE(times[1] - times[0], absl::Milliseconds(20));
  EXPECT_GE(times[2] - times[1], absl::Milliseconds(40));
  EXPECT_GE(times[3] - times[2], absl::Milliseconds(80));
}

TEST_F(WitnessSenderTest, ARefusalIsFinalForThatCheckpointAndTheNextOneIsSent) {
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->script = {409, 200};
  }
  auto sender = NewSender();
  ASSERT_NE(sender, nullptr);
  sender->Offer(Checkpoint(2));
  sender->Offer(Checkpoint(6));
  ASSERT_TRUE(WaitFor(*sender, [](const auto& s) { return s.delivered == 1; }));
  EXPECT_EQ(sender->stats().refused, 1);
  EXPECT_EQ(sender->stats().failed_attempts, 0);
  EXPECT_THAT(Bodies(), ElementsAre(CheckpointJson(Checkpoint(2)), CheckpointJson(Checkpoint(6))));
}

TEST_F(WitnessSenderTest, AHungWitnessNeverBlocksOfferAndTheQueueKeepsTheNewest) {
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->held = true;
  }
  auto sender = NewSender(/*max_pending=*/8);
  ASSERT_NE(sender, nullptr);
  sender->Offer(Checkpoint(1));
  ASSERT_TRUE(WaitFor(*sender, [this](const auto&) { return !Bodies().empty(); }));
  const absl::Time start = absl::Now();
  for (int64_t sequence = 2; sequence <= 100; ++sequence) sender->Offer(Checkpoint(sequence));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));  // 99 offers while the witness hangs
  EXPECT_EQ(sender->stats().pending, 8);
  EXPECT_EQ(sender->stats().dropped, 92);
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->held = false;
  }
  ASSERT_TRUE(WaitFor(*sender, [](const auto& s) { return s.delivered == 9; }));
  const std::vector<std::string> bodies = Bodies();
  ASSERT_EQ(bodies.size(), 9u);
  EXPECT_EQ(bodies[1], CheckpointJson(Checkpoint(93)));
  EXPECT_EQ(bodies[8], CheckpointJson(Checkpoint(100)));
}

TEST_F(WitnessSenderTest, ABadUrlIsRefusedAtStart) {
  WitnessSender::Options options;
  options.url = "ftp://witness.example/";
  EXPECT_THAT(
      WitnessSender::Create(std::make_unique<ScriptedWitness>(shared_), options).status().message(),
      HasSubstr("--checkpoint_witness:"));
}

// Over real sockets: the one HTTP client posts the line to a real HTTP server, and a witness that
// accepts the connection but never answers costs one time-out, not a hang.
TEST(WitnessHttpTest, TheClientPostsTheLineAndATimeOutBoundsASilentWitness) {
  common::http::BoundedHttpServer::Options server_options;
  auto server = common::http::BoundedHttpServer::Bind(server_options);
  ASSERT_TRUE(server.ok()) << server.status();
  absl::Mutex mu;
  std::string received;
  (*server)->Route("POST", "/v1/checkpoints",
                   [&](const common::http::Request& request, common::http::Response& response) {
                     absl::MutexLock lock(&mu);
                     received = request.body;
                     EXPECT_EQ(request.get_header_value("Content-Type"), "application/json");
                     response.set_content("{\"accepted\":true}", "application/json");
                   });
  (*server)->Start();
  common::http::HttpClientOptions client_options;
  client_options.timeout = absl::Milliseconds(300);
  common::http::HttplibClient client(client_options);
  const std::string line = CheckpointJson(Checkpoint(7));
  auto answer = client.Post(absl::StrCat("http://127.0.0.1:", (*server)->port(), "/v1/checkpoints"),
                            line, "application/json", kMaxWitnessAnswerBytes);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->status, 200);
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(received, line);
  }

  // A listener that never accepts nor answers: the connection lands in its backlog.
  const int silent = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(silent, 4), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const absl::Time start = absl::Now();
  auto silent_answer =
      client.Post(absl::StrCat("http://127.0.0.1:", ntohs(address.sin_port), "/v1/checkpoints"),
                  line, "application/json", kMaxWitnessAnswerBytes);
  EXPECT_FALSE(silent_answer.ok());
  EXPECT_EQ(silent_answer.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  close(silent);
  (*server)->Stop();
}

}  // namespace
}  // namespace sharedos::audit::core
