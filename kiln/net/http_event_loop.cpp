#include "kiln/net/http_event_loop.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/log_throttle.h"
#include "kiln/core/text_codec.h"
#include "kiln/net/inbox.h"
#include "kiln/net/loop_parts.h"
#include "kiln/net/tcp_listen.h"

namespace kiln::net {
namespace {

using Clock = std::chrono::steady_clock;
using AnswerQueue = Inbox<HttpAnswer>;

constexpr auto kTimeoutScanPeriod = std::chrono::milliseconds(250);

// After an answer that closes the connection, what the client still sends is read and dropped
// for this long before the close: closing with unread bytes would reset the connection, and the
// client could lose the answer (a 413 sent while it is still sending its body).
constexpr auto kLingerTime = std::chrono::seconds(2);

// The loop's own answers (a request it cannot read, one too slow or too large) in the form the
// REST API gives every failure, {"error": MESSAGE}; the handler writes all others.
std::string transport_error_body(const std::string& message) {
  // Messages quote request bytes, which need not be UTF-8: replaced, never a throw.
  return Json{{"error", message_for_client(message)}}.dump() + "\n";
}

// What a connection may hold past --max-pending-bytes: a whole small request (at most
// --max-connections times this past the cap, 32 MiB by default).
constexpr size_t kSmallRequestBytes = 8 << 10;

struct Connection {
  explicit Connection(HttpLimits limits) : parser(limits) {}
  ~Connection() { abandon.set(); }
  int fd = -1;
  uint64_t id = 0;
  std::string in;         // received, not yet taken by a request
  size_t in_counted = 0;  // what pending_bytes counts of it: its capacity when last counted
  HttpRequestParser parser;
  std::string out;  // to send, from `sent` on
  size_t sent = 0;
  bool with_handler = false;  // a request of this connection waits for its answer
  AbandonMark abandon;        // that request's, set when the connection goes before its answer
  bool keep_alive = true;     // of that request
  bool close_after_write = false;
  bool continued = false;    // 100 Continue sent for the request being read
  bool lingering = false;    // answered and half-closed: dropping what still comes
  bool sender_done = false;  // the client will send nothing more
  Clock::time_point last_activity;
  std::optional<Clock::time_point> request_began;  // a request is arriving, since then
  uint32_t events = 0;                             // what epoll watches on it
};

// What `in` will have allocated once `more` bytes are appended: libstdc++ at least doubles a
// string that grows.
size_t capacity_after(const std::string& in, size_t more) {
  size_t needed = in.size() + more;
  return needed <= in.capacity() ? in.capacity() : std::max(needed, 2 * in.capacity());
}

}  // namespace

struct HttpEventLoop::State {
  State(HttpHandler handler, HttpLoopOptions options)
      : handler(std::move(handler)), options(options) {}

  HttpHandler handler;
  HttpLoopOptions options;
  // Ten a minute: a client cutting requests short as fast as it can must not fill the log.
  LogThrottle cut_short_lines{10, std::chrono::minutes(1)};
  int listen_fd = -1;
  std::unique_ptr<Epoll> epoll;                                            // while it runs
  std::shared_ptr<AnswerQueue> answers = std::make_shared<AnswerQueue>();  // outlives the loop
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections;
  uint64_t next_id = kFirstConnectionTag;
  bool listener_paused = false;
  size_t max_connections = 0;  // options' limit kept under the descriptors, set as serving starts
  // Every connection's `in` together, as allocated (max_pending_bytes): a buffer grows by
  // doubling, and counting its bytes alone let 40 stalled 15 MB bodies hold 1.7 times the cap.
  size_t pending_bytes = 0;
  GiveBackAfterPeak give_back;

  LoopPhase phase;

  void run();
  void watch(Connection& connection, uint32_t events);
  void accept_all();
  void on_event(uint64_t id, uint32_t events);
  bool read_from(Connection& connection);
  bool process(Connection& connection);
  void dispatch(Connection& connection, HttpRequest& request);
  bool answer(Connection& connection, int status, std::string_view content_type,
              std::string_view body, bool keep_alive);
  bool flush(Connection& connection);
  bool blocked_or_failed(Connection& connection, SendEnd end);
  void close_connection(Connection& connection);
  void drop_in(Connection& connection, size_t count);
  void recount(Connection& connection);
  bool refuse_pending(Connection& connection);
  void deliver_answers();
  void scan_timeouts(Clock::time_point now);
};

HttpEventLoop::HttpEventLoop(HttpHandler handler, HttpLoopOptions options)
    : state_(std::make_unique<State>(std::move(handler), options)) {}

HttpEventLoop::~HttpEventLoop() {
  stop();
  if (state_->listen_fd >= 0) close(state_->listen_fd);
}

int HttpEventLoop::bind(const std::string& host, int port) {
  int fd = listen_tcp(host, port);
  if (fd < 0)
    throw UsageError(
        fmt::format("cannot listen on {}:{} (in use, or not an address of this "
                    "machine); choose another with --port or --host",
                    host, port));
  if (state_->listen_fd >= 0) close(state_->listen_fd);
  state_->listen_fd = fd;
  return bound_port(fd);
}

void HttpEventLoop::serve() {
  State& state = *state_;
  state.phase.serve([&state] { state.run(); });
}

void HttpEventLoop::stop() {
  State& state = *state_;
  state.phase.stop([&state] { state.answers->wake(); });
}

void HttpEventLoop::State::run() {
  if (listen_fd < 0) throw Error("kiln serve: serve() before bind()");
  answers->set_loop_thread(std::this_thread::get_id());
  max_connections =
      connection_limit(options.max_connections);  // once: not a system call per burst of accepts
  epoll = std::make_unique<Epoll>();
  epoll->watch(listen_fd, kListenerTag, EPOLLIN, EPOLL_CTL_ADD);
  epoll->watch(answers->wake_fd(), kWakeTag, EPOLLIN, EPOLL_CTL_ADD);
  LoopTurns turns(kTimeoutScanPeriod);
  while (!phase.stopping()) turns.take(*epoll, turns.wait_ms(!connections.empty()), *this);
  deliver_answers();  // what is ready still goes out, as far as the sockets take it at once
  for (auto& [id, connection] : connections) close(connection->fd);
  connections.clear();
  epoll.reset();
  // Closed now, not when the loop is destroyed: a client connecting to a stopped server is
  // refused at once instead of waiting in the backlog for its timeout.
  close(listen_fd);
  listen_fd = -1;
}

void HttpEventLoop::State::watch(Connection& connection, uint32_t events) {
  // An answer on its way out keeps its wait for room whatever else stops: a client that shut its
  // sending side had its answer cut at the read timeout, its wait for room dropped with its reads
  // (the board's 21 MB config.yaml came back as 8.3 MB).
  if (connection.sent < connection.out.size()) events |= EPOLLOUT;
  // Such a client's end of stream is always ready to read: watched, the loop would spin on it.
  if (connection.sender_done && !connection.lingering) events &= ~uint32_t(EPOLLIN | EPOLLRDHUP);
  if (connection.events == events) return;
  connection.events = events;
  epoll->watch(connection.fd, connection.id, events, EPOLL_CTL_MOD);
}

void HttpEventLoop::State::accept_all() {
  size_t limit = max_connections;
  while (true) {
    if (connections.size() >= limit) {  // the rest wait in the listen queue until one closes
      epoll->watch(listen_fd, kListenerTag, 0, EPOLL_CTL_MOD);
      listener_paused = true;
      return;
    }
    int fd = accept_connection(listen_fd);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        epoll->watch(listen_fd, kListenerTag, 0, EPOLL_CTL_MOD);  // until a connection closes
        listener_paused = true;
      }
      return;
    }
    auto connection = std::make_unique<Connection>(options.limits);
    connection->fd = fd;
    connection->id = next_id++;
    connection->events = EPOLLIN | EPOLLRDHUP;
    connection->last_activity = Clock::now();
    epoll->watch(fd, connection->id, connection->events, EPOLL_CTL_ADD);
    connections.emplace(connection->id, std::move(connection));
  }
}

void HttpEventLoop::State::on_event(uint64_t id, uint32_t events) {
  auto found = connections.find(id);
  if (found == connections.end()) return;
  Connection& connection = *found->second;
  if (events & EPOLLERR) return close_connection(connection);
  if ((events & EPOLLOUT) && !flush(connection)) return;
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
    if (!read_from(connection) || !process(connection)) return;
    // A client that has finished sending (`printf ... | nc -N`) still gets the answer to a
    // request it sent whole; nothing else is left to do for it.
    if (connection.sender_done && !connection.with_handler && connection.out.empty()) {
      // Nobody is left to answer; the server's log keeps the request that never came whole.
      std::string reason = connection.parser.cut_short_reason();
      if (!reason.empty() && options.log)
        if (auto line = cut_short_lines.admit("a request was cut short: " + reason))
          options.log(*line);
      close_connection(connection);
    }
  }
}

// Reads what has come; false when the connection is closed.
bool HttpEventLoop::State::read_from(Connection& connection) {
  bool refused = false;
  ReadEnd end = read_available(connection.fd, [&](const char* data, size_t size) {
    if (connection.lingering) return true;  // dropped, and no reason to linger longer
    connection.last_activity = Clock::now();
    // A connection holding little (a health check, a small request) is let past the cap:
    // /healthz was answered 413 while other clients held the cap's worth of bodies.
    bool small = connection.in.size() + size <= kSmallRequestBytes;
    bool over =
        !small && pending_bytes - connection.in_counted + capacity_after(connection.in, size) >
                      options.max_pending_bytes;
    refused = over && !connection.with_handler;
    if (refused) return false;
    connection.in.append(data, size);
    recount(connection);
    // What it sent behind a request being answered waits, unread, for that answer.
    if (over) watch(connection, 0);
    return !over;
  });
  if (refused) return refuse_pending(connection);
  if (end == ReadEnd::kFailed || (end == ReadEnd::kEndOfStream && connection.lingering)) {
    close_connection(connection);  // the connection failed, or the close is complete
    return false;
  }
  // The client has shut its sending side: what it sent is answered, then the connection closes.
  if (end == ReadEnd::kEndOfStream) {
    connection.sender_done = true;
    watch(connection, 0);
  }
  // While a request is with the handler, what a client sends after it waits here; beyond a whole
  // request's worth, the socket is not read until the answer is out.
  size_t most = options.limits.max_header_bytes + options.limits.max_body_bytes;
  if (connection.with_handler && connection.in.size() > most) watch(connection, 0);
  return true;
}

// Takes the requests that have come whole, one at a time; false when the connection is closed.
bool HttpEventLoop::State::process(Connection& connection) {
  while (!connection.with_handler && !connection.lingering && connection.sent == 0 &&
         connection.out.empty() && !connection.in.empty()) {
    HttpRequestParser& parser = connection.parser;
    HttpRequestParser::Status status = parser.parse(connection.in);
    if (status == HttpRequestParser::Status::kFailed)
      return answer(connection, parser.error_status(), "application/json",
                    transport_error_body(parser.error()), false);
    if (status == HttpRequestParser::Status::kIncomplete) {
      if (!connection.request_began) connection.request_began = Clock::now();
      if (!parser.awaits_continue() || connection.continued) return true;
      connection.continued = true;
      connection.out.append(kHttpContinue);
      return flush(connection);
    }
    HttpRequest request = std::move(parser.request());
    drop_in(connection, parser.consumed());
    parser.reset();
    connection.request_began.reset();
    connection.continued = false;
    dispatch(connection, request);
  }
  return true;
}

void HttpEventLoop::State::dispatch(Connection& connection, HttpRequest& request) {
  connection.with_handler = true;
  connection.keep_alive = request.keep_alive;
  connection.abandon = AbandonMark();
  request.abandoned = connection.abandon.view();
  std::shared_ptr<AnswerQueue> to = answers;
  uint64_t id = connection.id;
  HttpRespond respond = [to, id](HttpAnswer answer) { to->push(id, std::move(answer)); };
  try {
    handler(request, respond);
  } catch (const std::exception& e) {  // a handler's bug, answered rather than ending the server
    respond({500, "application/json", transport_error_body(e.what()), nullptr});
  }
}

bool HttpEventLoop::State::answer(Connection& connection, int status, std::string_view content_type,
                                  std::string_view body, bool keep_alive) {
  connection.out.append(http_response(status, content_type, body, keep_alive));
  connection.close_after_write = !keep_alive;
  return flush(connection);
}

// After a send that did not take all: waits for the socket, or closes the connection (false).
bool HttpEventLoop::State::blocked_or_failed(Connection& connection, SendEnd end) {
  if (end == SendEnd::kWouldBlock)
    watch(connection, EPOLLIN | EPOLLRDHUP | EPOLLOUT);
  else
    close_connection(connection);
  return end == SendEnd::kWouldBlock;
}

// Sends what is waiting; false when the connection is closed.
bool HttpEventLoop::State::flush(Connection& connection) {
  SendEnd end =
      send_pending(connection.fd, connection.out, connection.sent, connection.last_activity);
  if (end != SendEnd::kAllSent) return blocked_or_failed(connection, end);
  connection.out.clear();
  connection.sent = 0;
  if (connection.close_after_write && !connection.lingering) {
    shutdown(connection.fd, SHUT_WR);
    connection.lingering = true;
    connection.last_activity = Clock::now();
    drop_in(connection, connection.in.size());
  }
  watch(connection, EPOLLIN | EPOLLRDHUP);
  return true;
}

void HttpEventLoop::State::drop_in(Connection& connection, size_t count) {
  connection.in.erase(0, count);
  if (connection.in.empty() && connection.in.capacity() > kSmallRequestBytes)
    std::string().swap(connection.in);  // a big body's buffer goes with it
  recount(connection);
}

void HttpEventLoop::State::recount(Connection& connection) {
  pending_bytes = pending_bytes - connection.in_counted + connection.in.capacity();
  connection.in_counted = connection.in.capacity();
}

// The bytes all connections hold have reached the limit: this connection's request is refused
// (one whose request is with the handler is rather not read until that one is answered).
bool HttpEventLoop::State::refuse_pending(Connection& connection) {
  drop_in(connection, connection.in.size());
  connection.parser.reset();
  return answer(
      connection, 413, "application/json",
      transport_error_body(fmt::format("the server holds as many request bytes still arriving as "
                                       "all its clients together may ({}, --max-pending-bytes); "
                                       "try again",
                                       options.max_pending_bytes)),
      false);
}

void HttpEventLoop::State::close_connection(Connection& connection) {
  pending_bytes -= connection.in_counted;
  close(connection.fd);  // also takes it off epoll's list
  connections.erase(connection.id);
  if (listener_paused) {
    epoll->watch(listen_fd, kListenerTag, EPOLLIN, EPOLL_CTL_MOD);
    listener_paused = false;
  }
}

void HttpEventLoop::State::deliver_answers() {
  for (int takes = 1; takes <= kInboxTakesPerTurn; ++takes) {
    auto taken = answers->take();
    if (taken.empty()) break;
    if (takes == kInboxTakesPerTurn) answers->wake();  // the rest next turn, after other events
    for (auto& [id, answer] : taken) {
      auto found = connections.find(id);
      if (found == connections.end()) {  // its client has gone
        answer.hold.reset();
        continue;
      }
      Connection& connection = *found->second;
      connection.with_handler = false;
      // A client that has stopped sending may have sent more requests behind this one: the
      // close goes with the answer to its last.
      bool last_of_sender = connection.sender_done && connection.in.empty();
      bool keep_alive = connection.keep_alive && !phase.stopping() && !last_of_sender;
      bool open =
          this->answer(connection, answer.status, answer.content_type, answer.body, keep_alive);
      answer.hold.reset();
      if (open) process(connection);  // a request the client sent behind this one
    }
  }
}

void HttpEventLoop::State::scan_timeouts(Clock::time_point now) {
  give_back.note(pending_bytes);
  auto timeout = std::chrono::seconds(options.read_timeout_seconds);
  auto request_timeout = std::chrono::seconds(options.request_timeout_seconds);
  std::vector<Connection*> late, slow;
  for (auto& [id, connection] : connections) {
    bool waited =
        now - connection->last_activity >= (connection->lingering ? kLingerTime : timeout);
    bool trickled = !connection->lingering && connection->request_began &&
                    now - *connection->request_began >= request_timeout;
    if (connection->with_handler) continue;
    if (waited)
      late.push_back(connection.get());
    else if (trickled)
      slow.push_back(connection.get());
  }
  for (Connection* connection : slow)
    answer(*connection, 408, "application/json",
           transport_error_body(
               fmt::format("the request did not arrive whole within the server's request "
                           "timeout ({} s from its first byte)",
                           options.request_timeout_seconds)),
           false);
  for (Connection* connection : late) {
    std::string reason = connection->lingering || connection->sent < connection->out.size()
                             ? ""
                             : connection->parser.stall_reason(options.read_timeout_seconds);
    if (reason.empty())
      close_connection(*connection);  // also one that never sent a request, or stopped reading
    else
      answer(*connection, 400, "application/json", transport_error_body(reason), false);
  }
}

}  // namespace kiln::net
