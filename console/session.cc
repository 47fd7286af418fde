#include "console/session.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/crypto/base64url.h"
#include "common/crypto/random.h"

namespace sharedos::console {

absl::StatusOr<std::string> NewToken() {
  absl::StatusOr<std::string> bytes = common::SecureRandomBytes(32);
  if (!bytes.ok()) return bytes.status();
  return common::Base64UrlEncode(*bytes);
}

bool TokensEqual(absl::string_view expected, absl::string_view presented) {
  if (expected.empty() || presented.empty() || expected.size() != presented.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    differ |= static_cast<unsigned char>(expected[i] ^ presented[i]);
  }
  return differ == 0;
}

absl::StatusOr<Session> SessionStore::Create(std::string secret,
                                             common::server::Principal principal,
                                             std::string id_token) {
  Session session;
  absl::StatusOr<std::string> id = NewToken();
  if (!id.ok()) return id.status();
  absl::StatusOr<std::string> csrf = NewToken();
  if (!csrf.ok()) return csrf.status();
  session.id = *std::move(id);
  session.csrf = *std::move(csrf);
  session.secret = std::move(secret);
  session.principal = std::move(principal);
  session.id_token = std::move(id_token);
  const absl::Time now = clock_.Now();
  session.expires_at = now + ttl_;
  absl::MutexLock lock(&mu_);
  DropExpired(now);
  // The principal's own sessions, oldest first: beyond its share, the oldest goes.
  std::vector<std::map<std::string, Session, std::less<>>::iterator> own;
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.principal.name == session.principal.name) own.push_back(it);
  }
  std::sort(own.begin(), own.end(), [](const auto& a, const auto& b) {
    return a->second.expires_at < b->second.expires_at;
  });
  for (size_t i = 0; max_per_principal_ > 0 && own.size() - i >= max_per_principal_; ++i) {
    sessions_.erase(own[i]);
  }
  if (sessions_.size() >= max_sessions_) {
    return absl::ResourceExhaustedError(
        "console: too many signed-in sessions (quota --console_max_sessions); sign out "
        "elsewhere or wait for one to expire");
  }
  sessions_.emplace(session.id, session);
  return session;
}

std::optional<Session> SessionStore::Find(absl::string_view id) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  if (clock_.Now() >= it->second.expires_at) {
    sessions_.erase(it);
    return std::nullopt;
  }
  return it->second;
}

void SessionStore::Remove(absl::string_view id) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(id);
  if (it != sessions_.end()) sessions_.erase(it);
}

size_t SessionStore::size() const {
  absl::MutexLock lock(&mu_);
  return sessions_.size();
}

void SessionStore::DropExpired(absl::Time now) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = now >= it->second.expires_at ? sessions_.erase(it) : std::next(it);
  }
}

}  // namespace sharedos::console
