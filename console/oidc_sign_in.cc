#include "console/oidc_sign_in.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/base64url.h"
#include "common/crypto/sha256.h"
#include "common/text/url.h"
#include "console/session.h"

namespace sharedos::console {
namespace {

// The URL with `query` appended (after '&' when it already has a query).
std::string WithQuery(absl::string_view url, absl::string_view query) {
  return absl::StrCat(url, url.find('?') == absl::string_view::npos ? "?" : "&", query);
}

}  // namespace

absl::StatusOr<PendingSignIn> PendingSignIns::Begin() {
  PendingSignIn pending;
  for (std::string* token :
       {&pending.state, &pending.nonce, &pending.code_verifier, &pending.binding}) {
    absl::StatusOr<std::string> fresh = NewToken();
    if (!fresh.ok()) return fresh.status();
    *token = *std::move(fresh);
  }
  const absl::Time now = clock_.Now();
  pending.expires_at = now + ttl_;
  absl::MutexLock lock(&mu_);
  for (auto it = pending_.begin(); it != pending_.end();) {
    it = now >= it->second.expires_at ? pending_.erase(it) : std::next(it);
  }
  if (pending_.size() >= max_pending_) {
    return absl::ResourceExhaustedError(
        "console: too many sign-ins in progress (quota --console_oidc_max_pending); try again "
        "in a few minutes");
  }
  pending_.emplace(pending.state, pending);
  return pending;
}

absl::StatusOr<PendingSignIn> PendingSignIns::Take(absl::string_view state,
                                                   absl::string_view binding) {
  absl::MutexLock lock(&mu_);
  auto it = state.empty() ? pending_.end() : pending_.find(state);
  if (it == pending_.end()) {
    return absl::InvalidArgumentError(
        "state: not a sign-in in progress (unknown, already used or expired); sign in again");
  }
  PendingSignIn pending = std::move(it->second);
  pending_.erase(it);
  if (clock_.Now() >= pending.expires_at) {
    return absl::InvalidArgumentError(
        "state: not a sign-in in progress (unknown, already used or expired); sign in again");
  }
  if (!TokensEqual(pending.binding, binding)) {
    return absl::PermissionDeniedError(
        "state: this sign-in was begun in another browser; sign in again");
  }
  return pending;
}

size_t PendingSignIns::size() const {
  absl::MutexLock lock(&mu_);
  return pending_.size();
}

std::string PkceChallenge(absl::string_view code_verifier) {
  return common::Base64UrlEncode(common::Sha256(code_verifier));
}

std::string AuthorizationUrl(const AuthorizationRequest& request, const PendingSignIn& pending) {
  std::string query = absl::StrCat(
      "response_type=code&client_id=", common::text::UrlEncode(request.client_id),
      "&redirect_uri=", common::text::UrlEncode(request.redirect_uri),
      "&scope=", common::text::UrlEncode(request.scope),
      "&state=", common::text::UrlEncode(pending.state),
      "&nonce=", common::text::UrlEncode(pending.nonce),
      "&code_challenge=", common::text::UrlEncode(PkceChallenge(pending.code_verifier)),
      "&code_challenge_method=S256");
  if (!request.resource.empty())
    absl::StrAppend(&query, "&resource=", common::text::UrlEncode(request.resource));
  return WithQuery(request.authorization_endpoint, query);
}

std::string EndSessionUrl(absl::string_view end_session_endpoint, absl::string_view client_id,
                          absl::string_view id_token_hint,
                          absl::string_view post_logout_redirect_uri) {
  std::string query = absl::StrCat("client_id=", common::text::UrlEncode(client_id));
  if (!id_token_hint.empty())
    absl::StrAppend(&query, "&id_token_hint=", common::text::UrlEncode(id_token_hint));
  if (!post_logout_redirect_uri.empty()) {
    absl::StrAppend(
        &query, "&post_logout_redirect_uri=", common::text::UrlEncode(post_logout_redirect_uri));
  }
  return WithQuery(end_session_endpoint, query);
}

}  // namespace sharedos::console
