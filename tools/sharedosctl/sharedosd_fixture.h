// The fixture of the sharedosctl integration tests: a real sharedosd on a free port with its own
// data directory, and Ctl, which runs the real sharedosctl against it to completion.

#ifndef SHAREDOS_TOOLS_SHAREDOSCTL_SHAREDOSD_FIXTURE_H_
#define SHAREDOS_TOOLS_SHAREDOSCTL_SHAREDOSD_FIXTURE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/testing/process.h"

namespace sharedos::sharedosctl::testing {

using Result = ::sharedos::testing::CommandResult;

class SharedosdFixture : public ::testing::Test {
 protected:
  // `data_name`: the data directory under $TEST_TMPDIR; `flags`: sharedosd's beyond --port and
  // --data_dir.
  SharedosdFixture(std::string data_name, std::vector<std::string> flags)
      : data_name_(std::move(data_name)), flags_(std::move(flags)) {}

  void SetUp() override {
    data_ = ::sharedos::testing::TempPath(data_name_);
    std::vector<std::string> args = {"--port=0", "--data_dir=" + data_};
    args.insert(args.end(), flags_.begin(), flags_.end());
    auto process = ::sharedos::testing::Process::Start("sharedosd/sharedosd", args);
    ASSERT_TRUE(process.ok()) << process.status();
    daemon_ = std::make_unique<::sharedos::testing::Process>(*std::move(process));
    auto address = daemon_->WaitForLine("sharedosd listening on ", absl::Seconds(30));
    ASSERT_TRUE(address.ok()) << address.status();
    address_ = *address;
  }

  void TearDown() override {
    // Every sharedosctl run has exited (and closed its channel) by now.
    if (daemon_) {
      EXPECT_EQ(daemon_->Terminate(), 0) << daemon_->output();
    }
  }

  // Runs sharedosctl to completion with this daemon's target and a token (default: the admin's)
  // before `args`.
  Result Ctl(std::vector<std::string> args, const std::string& token_file = "") {
    args.insert(args.begin(),
                {"--target=" + address_,
                 "--token_file=" + (token_file.empty() ? data_ + "/admin.token" : token_file)});
    return ::sharedos::testing::RunToCompletion("tools/sharedosctl/sharedosctl", args);
  }

  std::string data_;
  std::string address_;
  std::unique_ptr<::sharedos::testing::Process> daemon_;

 private:
  const std::string data_name_;
  const std::vector<std::string> flags_;
};

}  // namespace sharedos::sharedosctl::testing

#endif  // SHAREDOS_TOOLS_SHAREDOSCTL_SHAREDOSD_FIXTURE_H_
