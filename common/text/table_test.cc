#include "common/text/table.h"

#include "gtest/gtest.h"

namespace sharedos::common::text {
namespace {

TEST(TableTest, AlignsColumnsLeavingTheLastUnpadded) {
  Table table({"ID", "SUBJECT", "REVOKED"});
  table.AddRow({"grant-1", "agent:a", "no"});
  table.AddRow({"g2", "human:alice", "2026-08-11T10:00:00Z"});
  EXPECT_EQ(table.Render(),
            "ID       SUBJECT      REVOKED\n"
            "grant-1  agent:a      no\n"
            "g2       human:alice  2026-08-11T10:00:00Z\n");
  EXPECT_EQ(table.size(), 2u);
}

TEST(TableTest, HeaderOnlyWhenEmpty) { EXPECT_EQ(Table({"A", "B"}).Render(), "A  B\n"); }

TEST(TableTest, FillsMissingAndEmptyCellsWithADash) {
  Table table({"A", "B", "C"});
  table.AddRow({"x"});
  table.AddRow({"", "y", ""});
  EXPECT_EQ(table.Render(),
            "A  B  C\n"
            "x  -  -\n"
            "-  y  -\n");
}

TEST(TableTest, MeasuresUtf8ByCodePoint) {
  Table table({"NAME", "X"});
  table.AddRow({"é", "1"});
  EXPECT_EQ(table.Render(),
            "NAME  X\n"
            "é     1\n");
}

TEST(TableTest, ACellsControlCharactersAreEscapedAndStartNoRow) {
  Table table({"ID", "REASON"});
  table.AddRow({"esc-1", "ok\x1b]0;pwned\x07\nesc-2  approved"});
  EXPECT_EQ(table.Render(),
            "ID     REASON\n"
            "esc-1  ok\\x1b]0;pwned\\x07\\nesc-2  approved\n");
}

}  // namespace
}  // namespace sharedos::common::text
