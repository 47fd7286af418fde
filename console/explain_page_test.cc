#include "console/explain_page.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::console {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExplainPageTest, TheFormAloneWithoutAnExplanation) {
  const std::string body = ExplainBody("", nullptr);
  EXPECT_THAT(body, HasSubstr("action=\"/explain\""));
  EXPECT_THAT(body, Not(HasSubstr("<dl")));
}

TEST(ExplainPageTest, FactsAndStepsAreEscapedForTheTerminalAndForHtml) {
  grantstore::client::Explanation explanation;
  explanation.title = "record 9: tool.invoked denied";
  explanation.facts = {{"reason", "no_matching_grant — No grant covers it."},
                       {"reason given", "<script>alert(1)</script>\x1b]0;x\x07\nforged"}};
  explanation.next_steps = {"Issue a grant <here>."};
  const std::string body = ExplainBody("9\"><b>", &explanation);
  EXPECT_THAT(body, HasSubstr("<dt>reason</dt><dd>no_matching_grant — No grant covers it.</dd>"));
  EXPECT_THAT(body, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;\\x1b]0;x\\x07\\nforged"));
  EXPECT_THAT(body, Not(HasSubstr("<script>")));
  EXPECT_THAT(body, Not(HasSubstr("\x1b")));
  EXPECT_THAT(body, HasSubstr("<li>Issue a grant &lt;here&gt;.</li>"));
  EXPECT_THAT(body, HasSubstr("value=\"9&quot;&gt;&lt;b&gt;\""));
}

}  // namespace
}  // namespace sharedos::console
