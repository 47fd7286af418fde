#include "common/logging/trace_context.h"

#include <string>

#include "common/logging/log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::logging {
namespace {

constexpr char kValid[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContextTest, ParsesAVersion00TraceparentAndWritesItBackUnchanged) {
  const std::optional<TraceContext> parsed = ParseTraceparent(kValid);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(parsed->parent_id, "00f067aa0ba902b7");
  EXPECT_EQ(parsed->flags, 1);
  EXPECT_EQ(parsed->ToTraceparent(), kValid);
}

TEST(TraceContextTest, RefusesEverythingButTheExactVersion00Shape) {
  const std::string valid = kValid;
  EXPECT_FALSE(ParseTraceparent("").has_value());
  EXPECT_FALSE(ParseTraceparent(valid + "-extra").has_value());        // too long
  EXPECT_FALSE(ParseTraceparent(valid.substr(0, 54)).has_value());     // too short
  EXPECT_FALSE(ParseTraceparent("ff" + valid.substr(2)).has_value());  // version ff
  EXPECT_FALSE(ParseTraceparent("01" + valid.substr(2)).has_value());  // unknown version
  EXPECT_FALSE(ParseTraceparent("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")
                   .has_value());  // uppercase
  EXPECT_FALSE(ParseTraceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
                   .has_value());  // zero trace id
  EXPECT_FALSE(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01")
                   .has_value());  // zero parent id
  EXPECT_FALSE(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01")
                   .has_value());  // wrong separator
  EXPECT_FALSE(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01")
                   .has_value());  // not hex
  EXPECT_FALSE(ParseTraceparent(std::string(1 << 20, 'a')).has_value());
}

TEST(TraceContextTest, MintedAndChildContextsAreValidAndChildrenKeepTheTrace) {
  const TraceContext minted = MintTrace();
  ASSERT_TRUE(ParseTraceparent(minted.ToTraceparent()).has_value());
  EXPECT_NE(MintTrace().trace_id, minted.trace_id);
  const TraceContext child = ChildOf(minted);
  EXPECT_EQ(child.trace_id, minted.trace_id);
  EXPECT_NE(child.parent_id, minted.parent_id);
  EXPECT_TRUE(ParseTraceparent(child.ToTraceparent()).has_value());
}

TEST(TraceContextTest, ScopesNestAndRestoreAndLogLinesNameTheCurrentTrace) {
  EXPECT_EQ(CurrentTrace(), nullptr);
  EXPECT_FALSE(
      nlohmann::json::parse(FormatLine(Level::kInfo, "e", "", {})).contains("w3c_trace_id"));
  {
    ScopedTrace outer(ParseTraceparent(kValid));
    ASSERT_NE(CurrentTrace(), nullptr);
    EXPECT_EQ(
        nlohmann::json::parse(FormatLine(Level::kInfo, "e", "turn-trace", {}))["w3c_trace_id"],
        "4bf92f3577b34da6a3ce929d0e0e4736");
    {
      ScopedTrace none(std::nullopt);
      EXPECT_EQ(CurrentTrace(), nullptr);
    }
    ASSERT_NE(CurrentTrace(), nullptr);
    EXPECT_EQ(CurrentTrace()->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  }
  EXPECT_EQ(CurrentTrace(), nullptr);
}

}  // namespace
}  // namespace sharedos::common::logging
