// The negative controls: the grader must be able to fail, and it must fail exactly where a
// guarantee is broken. Each test runs the kernel column once as built (the baseline) and once
// with one guarantee broken on purpose, and compares the two gradings row by row:
//   - an authorizer that allows every decision: every row whose attack the kernel refuses must
//     turn to `fail`; the rows the envelope refuses without the decision keep their grade;
//   - a broker whose tool listing fails, so every turn on the broker-attached envelope ends at
//     admission: no row whose turns were meant to run may still pass (no vacuous pass).
#include <sys/stat.h>

#include <map>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conformance/run_suite.h"
#include "tests/conformance/suite.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

// Row number → "<status> (<detail>)" of the kernel column.
std::map<int, std::string> Grades(const Declarations& declarations,
                                  const std::vector<Cell>& cells) {
  std::map<int, std::string> grades;
  for (size_t i = 0; i < cells.size(); ++i) {
    grades[declarations.cases["rows"][i]["row"].get<int>()] = cells[i].status;
  }
  return grades;
}

class NegativeControlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = LoadDeclarations();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    declarations_ = new Declarations(*std::move(loaded));
    baseline_ = new std::map<int, std::string>(Grades(*declarations_, Run("baseline", {})));
  }
  static void TearDownTestSuite() {
    delete baseline_;
    delete declarations_;
  }

  static std::vector<Cell> Run(const std::string& name, SuiteOptions options) {
    options.scratch = testing::TempPath("negative-control-" + name);
    EXPECT_EQ(mkdir(options.scratch.c_str(), 0700), 0);
    options.columns = {"kernel"};
    return RunSuite(*declarations_, options).at("kernel");
  }

  static Declarations* declarations_;
  static std::map<int, std::string>* baseline_;
};

Declarations* NegativeControlTest::declarations_ = nullptr;
std::map<int, std::string>* NegativeControlTest::baseline_ = nullptr;

TEST_F(NegativeControlTest, AnAllowEverythingAuthorizerFailsTheKernelRows) {
  SuiteOptions options;
  options.allow_everything = true;
  std::map<int, std::string> broken = Grades(*declarations_, Run("allow-everything", options));
  // Kernel refusals (no_matching_grant, delegation_chain_invalid, grant_exhausted,
  // host_policy_denied) now let the attack through.
  for (int row : {1, 3, 4, 5, 6, 7, 8, 9, 11, 19, 21, 24, 30, 31, 39, 42}) {
    EXPECT_EQ(broken[row], "fail") << "row " << row << " (baseline " << (*baseline_)[row] << ")";
  }
  // Row 33 needs the denial it escalates: with none, its approval cannot be exercised.
  EXPECT_EQ((*baseline_)[33], "pass");
  EXPECT_EQ(broken[33], "not exercised");
  // Refusals made without the decision keep their grade: the envelope's catalogue and budgets
  // (2, 16, 17, 22), its own owner check, which refuses another owner's resource
  // invalid_request whatever the decision said (10, defence in depth), a message whose sender
  // is not the turn's actor, refused before any decision (40), and a reply on another trace
  // than its request's, refused by the kernel's reply check after the decision (41).
  for (int row : {2, 10, 16, 17, 22, 40, 41}) {
    EXPECT_EQ(broken[row], (*baseline_)[row]) << "row " << row;
  }
  // A route lease is not authority, nor does authority replace it (ADR 0025): a revoked lease
  // refuses the dispatch whatever the decision said (29).
  EXPECT_EQ((*baseline_)[29], "pass");
  EXPECT_EQ(broken[29], "pass");
}

TEST_F(NegativeControlTest, TurnsEndingAtAdmissionNeverPassVacuously) {
  SuiteOptions options;
  options.broker_listing_fails = true;
  std::map<int, std::string> broken = Grades(*declarations_, Run("listing-fails", options));
  // 13: its turn is declared to end at admission (authority_unavailable, before the listing);
  // 22: the envelope without the broker; 32, 37: not run on this column; and a row that does
  // not apply to this column (47: an escalation raised over MCP) stays not applicable.
  const std::set<int> unaffected = {13, 22, 32, 37};
  for (const auto& [row, grade] : broken) {
    if (unaffected.count(row) || (*baseline_)[row] == "not applicable") {
      EXPECT_EQ(grade, (*baseline_)[row]) << "row " << row;
    } else {
      EXPECT_THAT(grade, ::testing::AnyOf("fail", "not exercised")) << "row " << row;
    }
  }
}

}  // namespace
}  // namespace sharedos::conformance
