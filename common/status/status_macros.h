// Early-return helpers for absl::Status / absl::StatusOr<T>.
//
// Abseil 20220623 (Debian) ships no status_macros.h; these keep the upstream
// names and semantics so that a later Abseil can replace this header without
// touching callers.

#ifndef SHAREDOS_COMMON_STATUS_STATUS_MACROS_H_
#define SHAREDOS_COMMON_STATUS_STATUS_MACROS_H_

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr`, which must yield an absl::Status, and returns it from the
// enclosing function if it is not OK. Usable in functions returning
// absl::Status or absl::StatusOr<T>.
//
//   RETURN_IF_ERROR(db.Exec("DELETE FROM t"));
#define RETURN_IF_ERROR(expr)                                      \
  do {                                                             \
    /* Braced init: a non-Status `expr` does not compile. */       \
    ::absl::Status sharedos_status_macros_status{(expr)};          \
    if (ABSL_PREDICT_FALSE(!sharedos_status_macros_status.ok())) { \
      return sharedos_status_macros_status;                        \
    }                                                              \
  } while (false)

// Evaluates `rexpr`, which must yield an absl::StatusOr<T>. On error, returns
// its status from the enclosing function; otherwise moves the value into `lhs`,
// which may be an existing lvalue or a declaration:
//
//   ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT 1"));
//   ASSIGN_OR_RETURN(value, ParseValue(text));
//
// Expands to several statements: do not use it as the unbraced body of an
// `if`/`else`. `lhs` must not contain an unparenthesised comma (write
// `std::pair<int, int>` through a type alias).
#define ASSIGN_OR_RETURN(lhs, rexpr)             \
  SHAREDOS_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL_( \
      SHAREDOS_STATUS_MACROS_CONCAT_(sharedos_status_or_value_, __LINE__), lhs, rexpr)

// Internal helpers; not part of the API.
#define SHAREDOS_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define SHAREDOS_STATUS_MACROS_CONCAT_(x, y) SHAREDOS_STATUS_MACROS_CONCAT_INNER_(x, y)
#define SHAREDOS_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                                  \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                                 \
    return std::move(statusor).status();                                    \
  }                                                                         \
  lhs = std::move(statusor).value()

#endif  // SHAREDOS_COMMON_STATUS_STATUS_MACROS_H_
