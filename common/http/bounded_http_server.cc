#include "common/http/bounded_http_server.h"

#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <deque>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace sharedos::common::http {
namespace {

namespace asio = ::boost::asio;
namespace beast = ::boost::beast;
namespace bhttp = ::boost::beast::http;
using tcp = ::boost::asio::ip::tcp;

std::chrono::milliseconds Millis(absl::Duration duration) {
  return std::chrono::milliseconds(absl::ToInt64Milliseconds(duration));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decoding with '+' as space; a malformed escape is kept as it is.
std::string QueryDecode(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
               HexValue(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace

bool Request::has_header(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return true;
  }
  return false;
}

std::string Request::get_header_value(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

std::string Request::get_param_value(absl::string_view name) const {
  auto it = params.find(std::string(name));
  return it == params.end() ? "" : it->second;
}

void Response::set_header(absl::string_view name, absl::string_view value) {
  headers.emplace_back(std::string(name), std::string(value));
}

void Response::set_content(std::string content, absl::string_view content_type) {
  body = std::move(content);
  for (auto it = headers.begin(); it != headers.end();) {
    it = absl::EqualsIgnoreCase(it->first, "Content-Type") ? headers.erase(it) : std::next(it);
  }
  set_header("Content-Type", content_type);
}

// ---------------------------------------------------------------------------------------------
// The shared state: the event thread, the handler pool, the counts.

struct BoundedHttpServer::Impl {
  explicit Impl(const Options& options) : options(options) {}

  // Takes a connection slot for `address`; false (counted) when a cap is reached.
  bool Admit(const std::string& address) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    if (stats.open >= options.max_connections) {
      ++stats.refused_total;
      return false;
    }
    size_t& from_address = per_address[address];
    if (from_address >= options.max_connections_per_address) {
      ++stats.refused_per_address;
      return false;
    }
    ++from_address;
    ++stats.open;
    ++stats.accepted;
    return true;
  }
  void Release(const std::string& address) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    --stats.open;
    auto it = per_address.find(address);
    if (it != per_address.end() && --it->second == 0) per_address.erase(it);
  }
  void Count(uint64_t Stats::*counter) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    ++(stats.*counter);
  }

  // Queues `work` for a handler thread; false (counted) when the queue is full.
  bool Submit(std::function<void()> work) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    if (stopping || queue.size() >= options.max_queued_requests) {
      ++stats.overloaded;
      return false;
    }
    queue.push_back(std::move(work));
    return true;
  }
  bool HasWorkOrStops() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return stopping || !queue.empty();
  }
  void Work() ABSL_LOCKS_EXCLUDED(mu) {
    while (true) {
      std::function<void()> work;
      {
        absl::MutexLock lock(&mu);
        mu.Await(absl::Condition(this, &Impl::HasWorkOrStops));
        // Stopping: queued requests are dropped with their connections.
        if (stopping) return;
        work = std::move(queue.front());
        queue.pop_front();
      }
      work();
    }
  }

  const Options& options;
  // Declared before the io_context: connections still held by its handlers are destroyed with
  // it, and release their slots here.
  std::unique_ptr<asio::ssl::context> ssl;
  mutable absl::Mutex mu;
  Stats stats ABSL_GUARDED_BY(mu);
  std::map<std::string, size_t> per_address ABSL_GUARDED_BY(mu);
  std::deque<std::function<void()>> queue ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;
  std::vector<std::thread> workers;
  std::thread events;
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
};

// ---------------------------------------------------------------------------------------------
// One connection, on the event thread: [handshake →] header → check → [100 Continue →] body →
// handler (a pool thread) → answer → next request or close.

template <typename Stream>
class BoundedHttpServer::Connection
    : public std::enable_shared_from_this<BoundedHttpServer::Connection<Stream>> {
 public:
  Connection(BoundedHttpServer& server, Stream stream, std::string address)
      : server_(server), stream_(std::move(stream)), address_(std::move(address)) {}
  ~Connection() { server_.impl_->Release(address_); }

  void Begin() {
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
      ReadHeader();
    } else {
      Tcp().expires_after(Millis(server_.options_.read_timeout));
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->Fail(ec);
                                self->ReadHeader();
                              });
    }
  }

 private:
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }
  const Options& options() const { return server_.options_; }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(options().max_header_bytes));
    parser_->body_limit(options().max_body_bytes);
    // One deadline for the whole request, headers and body.
    Tcp().expires_after(Millis(options().read_timeout));
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec == bhttp::error::header_limit) return Refuse(431, "Request header fields too large");
    // A declared Content-Length past body_limit fails with the headers.
    if (ec == bhttp::error::body_limit) return Refuse(413, "Payload too large");
    if (ec) return Fail(ec);
    const auto& message = parser_->get();
    request_ = Request();
    request_.method = std::string(message.method_string());
    request_.target = std::string(message.target());
    request_.remote_address = address_;
    for (const auto& field : message) {
      request_.headers.emplace_back(absl::AsciiStrToLower(std::string(field.name_string())),
                                    std::string(field.value()));
    }
    absl::string_view target = request_.target;
    const size_t query = target.find('?');
    request_.path = std::string(target.substr(0, query));
    if (query != absl::string_view::npos) {
      for (absl::string_view pair : absl::StrSplit(target.substr(query + 1), '&')) {
        if (pair.empty()) continue;
        const size_t equals = pair.find('=');
        std::string name = QueryDecode(pair.substr(0, equals));
        std::string value =
            equals == absl::string_view::npos ? "" : QueryDecode(pair.substr(equals + 1));
        request_.params.emplace(std::move(name), std::move(value));
      }
    }
    if (parser_->content_length().has_value() &&
        *parser_->content_length() > options().max_body_bytes) {
      return Refuse(413, "Payload too large");
    }
    route_ = server_.routes_.find({request_.method, request_.path});
    if (route_ == server_.routes_.end()) {
      if (server_.fallback_) return ReadBody();
      std::string allowed;
      for (const auto& [key, unused] : server_.routes_) {
        if (key.second == request_.path)
          absl::StrAppend(&allowed, allowed.empty() ? "" : ", ", key.first);
      }
      Response response;
      response.status = allowed.empty() ? 404 : 405;
      if (!allowed.empty()) response.set_header("Allow", allowed);
      response.set_content(allowed.empty() ? "Not found" : "Method not allowed", "text/plain");
      return Answer(std::move(response), /*close=*/true);
    }
    if (const HeaderCheck& check = route_->second.second; check) {
      Response refused;
      if (!check(request_, refused)) return Answer(std::move(refused), /*close=*/true);
    }
    if (absl::EqualsIgnoreCase(request_.get_header_value("expect"), "100-continue") &&
        !parser_->is_done()) {
      static constexpr absl::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      return asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                               [self = this->shared_from_this()](beast::error_code ec, size_t) {
                                 if (ec) return self->Fail(ec);
                                 self->ReadBody();
                               });
    }
    ReadBody();
  }

  void ReadBody() {
    if (parser_->is_done()) return Dispatch();
    bhttp::async_read(stream_, buffer_, *parser_,
                      [self = this->shared_from_this()](beast::error_code ec, size_t) {
                        if (ec == bhttp::error::body_limit) {
                          return self->Refuse(413, "Payload too large");
                        }
                        if (ec) return self->Fail(ec);
                        self->Dispatch();
                      });
  }

  void Dispatch() {
    request_.body = parser_->release().body();
    keep_alive_ = parser_->keep_alive() && ++served_ < options().max_requests_per_connection;
    // No deadline while the handler runs; the write has its own.
    Tcp().expires_never();
    const Handler* handler =
        route_ != server_.routes_.end() ? &route_->second.first : &server_.fallback_;
    auto self = this->shared_from_this();
    const bool queued = server_.impl_->Submit([self, handler] {
      Response response;
      try {
        (*handler)(self->request_, response);
      } catch (...) {
        response = Response();
        response.status = 500;
        response.set_content(self->server_.error_body_, self->server_.error_content_type_);
      }
      asio::post(self->server_.impl_->io, [self, response = std::move(response)]() mutable {
        self->Answer(std::move(response), !self->keep_alive_);
      });
    });
    if (!queued) {
      Response busy;
      busy.status = 503;
      busy.set_header("Retry-After", "1");
      busy.set_content("Service unavailable: every handler is busy", "text/plain");
      Answer(std::move(busy), /*close=*/true);
    }
  }

  // Answers `status` and closes: the request is not read further.
  void Refuse(int status, absl::string_view text) {
    Response response;
    response.status = status;
    response.set_content(std::string(text), "text/plain");
    Answer(std::move(response), /*close=*/true);
  }

  void Answer(Response response, bool close) {
    answer_.emplace(static_cast<bhttp::status>(response.status), 11);
    for (const auto& [name, value] : response.headers) answer_->insert(name, value);
    answer_->body() = std::move(response.body);
    answer_->keep_alive(!close);
    answer_->prepare_payload();
    Tcp().expires_after(Millis(options().write_timeout));
    bhttp::async_write(stream_, *answer_,
                       [self = this->shared_from_this(), close](beast::error_code ec, size_t) {
                         if (ec) return self->Fail(ec);
                         if (close) return self->Close();
                         self->ReadHeader();
                       });
  }

  void Fail(beast::error_code ec) {
    if (ec == beast::error::timeout) server_.impl_->Count(&Stats::timed_out);
    Close();
  }

  void Close() {
    beast::error_code ignored;
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Tcp().close();
  }

  BoundedHttpServer& server_;
  Stream stream_;
  const std::string address_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::optional<bhttp::response<bhttp::string_body>> answer_;
  Request request_;
  RouteMap::const_iterator route_;
  bool keep_alive_ = false;
  int served_ = 0;
};

// ---------------------------------------------------------------------------------------------

BoundedHttpServer::BoundedHttpServer(Options options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(options_)) {}

BoundedHttpServer::~BoundedHttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<BoundedHttpServer>> BoundedHttpServer::Bind(Options options) {
  std::unique_ptr<BoundedHttpServer> server(new BoundedHttpServer(std::move(options)));
  Impl& impl = *server->impl_;
  const Options& o = server->options_;
  if (o.tls != nullptr) {
    impl.ssl = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    impl.ssl->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                          asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                          asio::ssl::context::no_tlsv1_1);
    if (!o.tls->Install(*impl.ssl->native_handle())) {
      return absl::InvalidArgumentError("--tls_cert: refused by OpenSSL");
    }
  }
  beast::error_code ec;
  tcp::resolver resolver(impl.io);
  const std::string host = o.host.empty() ? "127.0.0.1" : o.host;
  auto endpoints = resolver.resolve(host, std::to_string(o.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", o.port));
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  impl.acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor.bind(endpoint, ec);
  if (!ec) impl.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", o.port));
  server->port_ = impl.acceptor.local_endpoint().port();
  return server;
}

void BoundedHttpServer::Route(absl::string_view method, absl::string_view path, Handler handler,
                              HeaderCheck check) {
  routes_[{std::string(method), std::string(path)}] = {std::move(handler), std::move(check)};
}

namespace {

// Accepts connections until the acceptor closes; each within the caps, else closed at once.
template <typename Accept>
void AcceptLoop(tcp::acceptor& acceptor, Accept accept) {
  acceptor.async_accept([&acceptor, accept](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) accept(std::move(socket));
    AcceptLoop(acceptor, accept);
  });
}

}  // namespace

void BoundedHttpServer::Start() {
  if (started_.exchange(true)) return;
  Impl& impl = *impl_;
  for (int i = 0; i < std::max(1, options_.handler_threads); ++i) {
    impl.workers.emplace_back([&impl] { impl.Work(); });
  }
  AcceptLoop(impl.acceptor, [this](tcp::socket socket) {
    Impl& impl = *impl_;
    beast::error_code ec;
    const tcp::endpoint peer = socket.remote_endpoint(ec);
    if (ec) return;
    std::string address = peer.address().to_string();
    if (!impl.Admit(address)) {
      socket.close(ec);
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);
    if (impl.ssl != nullptr) {
      using Tls = beast::ssl_stream<beast::tcp_stream>;
      std::make_shared<Connection<Tls>>(*this, Tls(beast::tcp_stream(std::move(socket)), *impl.ssl),
                                        std::move(address))
          ->Begin();
    } else {
      std::make_shared<Connection<beast::tcp_stream>>(*this, beast::tcp_stream(std::move(socket)),
                                                      std::move(address))
          ->Begin();
    }
  });
  impl.events = std::thread([&impl] { impl.io.run(); });
}

void BoundedHttpServer::Stop() {
  if (stopped_.exchange(true)) return;
  Impl& impl = *impl_;
  asio::post(impl.io, [&impl] {
    beast::error_code ignored;
    impl.acceptor.close(ignored);
  });
  {
    absl::MutexLock lock(&impl.mu);
    impl.stopping = true;
  }
  // Running handlers finish; queued ones are dropped with their connections.
  for (std::thread& worker : impl.workers) worker.join();
  impl.io.stop();
  if (impl.events.joinable()) impl.events.join();
}

BoundedHttpServer::Stats BoundedHttpServer::stats() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->stats;
}

}  // namespace sharedos::common::http
