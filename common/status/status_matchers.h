// gMock matchers for absl::Status and absl::StatusOr<T> (upstream names):
//
//   EXPECT_THAT(Parse(x), StatusIs(absl::StatusCode::kInvalidArgument,
//                                  testing::HasSubstr("month")));
//   EXPECT_THAT(db.Exec(sql), IsOk());
//   EXPECT_THAT(Lookup(id), IsOkAndHolds(testing::Eq(42)));
//
// StatusIs and IsOk accept both absl::Status and absl::StatusOr<T>;
// IsOkAndHolds accepts absl::StatusOr<T>. EXPECT_OK / ASSERT_OK are shorthands
// for EXPECT_THAT(x, IsOk()).

#ifndef SHAREDOS_COMMON_STATUS_STATUS_MATCHERS_H_
#define SHAREDOS_COMMON_STATUS_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/base/config.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace status_matchers_internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }

template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// Code and message matching shared by every instantiation of StatusIs.
class StatusIsMatcherCommonImpl {
 public:
  StatusIsMatcherCommonImpl(::testing::Matcher<absl::StatusCode> code_matcher,
                            ::testing::Matcher<const std::string&> message_matcher)
      : code_matcher_(std::move(code_matcher)), message_matcher_(std::move(message_matcher)) {}

  void DescribeTo(std::ostream* os) const {
    *os << "has a status code that ";
    code_matcher_.DescribeTo(os);
    *os << ", and has an error message that ";
    message_matcher_.DescribeTo(os);
  }

  void DescribeNegationTo(std::ostream* os) const {
    *os << "either has a status code that ";
    code_matcher_.DescribeNegationTo(os);
    *os << ", or has an error message that ";
    message_matcher_.DescribeNegationTo(os);
  }

  bool MatchAndExplain(const absl::Status& status, ::testing::MatchResultListener* listener) const {
    ::testing::StringMatchResultListener inner;
    if (!code_matcher_.MatchAndExplain(status.code(), &inner)) {
      *listener << "whose code doesn't match";
      if (!inner.str().empty()) *listener << " (" << inner.str() << ")";
      return false;
    }
    const std::string message(status.message());
    if (!message_matcher_.MatchAndExplain(message, &inner)) {
      *listener << "whose message doesn't match";
      if (!inner.str().empty()) *listener << " (" << inner.str() << ")";
      return false;
    }
    return true;
  }

 private:
  const ::testing::Matcher<absl::StatusCode> code_matcher_;
  const ::testing::Matcher<const std::string&> message_matcher_;
};

// StatusIs for one concrete argument type (Status or StatusOr<T>, by const
// reference).
template <typename StatusType>
class MonoStatusIsMatcherImpl : public ::testing::MatcherInterface<StatusType> {
 public:
  explicit MonoStatusIsMatcherImpl(StatusIsMatcherCommonImpl common_impl)
      : common_impl_(std::move(common_impl)) {}

  void DescribeTo(std::ostream* os) const override { common_impl_.DescribeTo(os); }
  void DescribeNegationTo(std::ostream* os) const override { common_impl_.DescribeNegationTo(os); }
  bool MatchAndExplain(StatusType actual, ::testing::MatchResultListener* listener) const override {
    return common_impl_.MatchAndExplain(GetStatus(actual), listener);
  }

 private:
  StatusIsMatcherCommonImpl common_impl_;
};

// Polymorphic StatusIs: converts to Matcher<T> for any Status/StatusOr argument
// type.
class StatusIsMatcher {
 public:
  template <typename CodeMatcher, typename MessageMatcher>
  StatusIsMatcher(CodeMatcher&& code_matcher, MessageMatcher&& message_matcher)
      : common_impl_(
            ::testing::MatcherCast<absl::StatusCode>(std::forward<CodeMatcher>(code_matcher)),
            ::testing::MatcherCast<const std::string&>(
                std::forward<MessageMatcher>(message_matcher))) {}

  template <typename StatusType>
  operator ::testing::Matcher<StatusType>() const {  // NOLINT(runtime/explicit)
    return ::testing::Matcher<StatusType>(
        new MonoStatusIsMatcherImpl<const StatusType&>(common_impl_));
  }

 private:
  StatusIsMatcherCommonImpl common_impl_;
};

// IsOk for any Status/StatusOr argument type.
class IsOkMatcher {
 public:
  template <typename StatusType>
  bool MatchAndExplain(const StatusType& actual,
                       ::testing::MatchResultListener* /*listener*/) const {
    return GetStatus(actual).ok();  // The printed value says why.
  }
  void DescribeTo(std::ostream* os) const { *os << "is OK"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not OK"; }
};

// IsOkAndHolds for one concrete StatusOr<T> argument type.
template <typename StatusOrType>
class IsOkAndHoldsMatcherImpl : public ::testing::MatcherInterface<StatusOrType> {
 public:
  using ValueType = typename std::remove_cv_t<std::remove_reference_t<StatusOrType>>::value_type;

  template <typename InnerMatcher>
  explicit IsOkAndHoldsMatcherImpl(InnerMatcher&& inner_matcher)
      : inner_matcher_(::testing::SafeMatcherCast<const ValueType&>(
            std::forward<InnerMatcher>(inner_matcher))) {}

  void DescribeTo(std::ostream* os) const override {
    *os << "is OK and has a value that ";
    inner_matcher_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const override {
    *os << "isn't OK or has a value that ";
    inner_matcher_.DescribeNegationTo(os);
  }
  bool MatchAndExplain(StatusOrType actual,
                       ::testing::MatchResultListener* listener) const override {
    if (!actual.ok()) {
      *listener << "which is not OK";
      return false;
    }
    ::testing::StringMatchResultListener inner;
    const bool matches = inner_matcher_.MatchAndExplain(*actual, &inner);
    *listener << (matches ? "whose value matches" : "whose value doesn't match");
    if (!inner.str().empty()) *listener << ", " << inner.str();
    return matches;
  }

 private:
  const ::testing::Matcher<const ValueType&> inner_matcher_;
};

// Polymorphic IsOkAndHolds: converts to Matcher<StatusOr<T>> for any T.
template <typename InnerMatcher>
class IsOkAndHoldsMatcher {
 public:
  explicit IsOkAndHoldsMatcher(InnerMatcher inner_matcher)
      : inner_matcher_(std::move(inner_matcher)) {}

  template <typename StatusOrType>
  operator ::testing::Matcher<StatusOrType>() const {  // NOLINT(runtime/explicit)
    return ::testing::Matcher<StatusOrType>(
        new IsOkAndHoldsMatcherImpl<const StatusOrType&>(inner_matcher_));
  }

 private:
  const InnerMatcher inner_matcher_;
};

}  // namespace status_matchers_internal

// Matches a Status or StatusOr<T> whose code matches `code_matcher` and whose
// message matches `message_matcher` (a std::string matcher or a plain string
// for equality).
template <typename CodeMatcher, typename MessageMatcher>
status_matchers_internal::StatusIsMatcher StatusIs(CodeMatcher&& code_matcher,
                                                   MessageMatcher&& message_matcher) {
  return status_matchers_internal::StatusIsMatcher(std::forward<CodeMatcher>(code_matcher),
                                                   std::forward<MessageMatcher>(message_matcher));
}

// Matches a Status or StatusOr<T> whose code matches `code_matcher`, any
// message.
template <typename CodeMatcher>
status_matchers_internal::StatusIsMatcher StatusIs(CodeMatcher&& code_matcher) {
  return StatusIs(std::forward<CodeMatcher>(code_matcher), ::testing::_);
}

// Matches an OK Status or StatusOr<T>.
inline ::testing::PolymorphicMatcher<status_matchers_internal::IsOkMatcher> IsOk() {
  return ::testing::MakePolymorphicMatcher(status_matchers_internal::IsOkMatcher());
}

// Matches an OK StatusOr<T> whose value matches `inner_matcher` (or equals it,
// when a plain value is given).
template <typename InnerMatcher>
status_matchers_internal::IsOkAndHoldsMatcher<std::decay_t<InnerMatcher>> IsOkAndHolds(
    InnerMatcher&& inner_matcher) {
  return status_matchers_internal::IsOkAndHoldsMatcher<std::decay_t<InnerMatcher>>(
      std::forward<InnerMatcher>(inner_matcher));
}

}  // namespace sharedos::common

// Abseil 20220623's StatusOr has no printer, so failing expectations would dump
// raw bytes. Later releases define their own PrintTo; this one steps aside for
// them.
#if defined(ABSL_LTS_RELEASE_VERSION) && ABSL_LTS_RELEASE_VERSION <= 20220623
namespace absl {
ABSL_NAMESPACE_BEGIN
template <typename T>
void PrintTo(const StatusOr<T>& status_or, std::ostream* os) {
  if (status_or.ok()) {
    *os << "OK: " << ::testing::PrintToString(*status_or);
  } else {
    *os << status_or.status();
  }
}
ABSL_NAMESPACE_END
}  // namespace absl
#endif

#define EXPECT_OK(expression) EXPECT_THAT(expression, ::sharedos::common::IsOk())
#define ASSERT_OK(expression) ASSERT_THAT(expression, ::sharedos::common::IsOk())

#endif  // SHAREDOS_COMMON_STATUS_STATUS_MATCHERS_H_
