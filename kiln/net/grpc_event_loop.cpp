#include "kiln/net/grpc_event_loop.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kiln/net/grpc_idle.h"
#include "kiln/net/inbox.h"
#include "kiln/net/loop_parts.h"
#include "kiln/net/tcp_listen.h"

namespace kiln::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kOutChunk = 256 << 10;  // produced before the socket is written
constexpr auto kFinalFlushTime = std::chrono::seconds(5);
constexpr auto kTimeoutScanPeriod = std::chrono::milliseconds(250);

struct GrpcAnswer {
  GrpcOutgoing outgoing;
  std::shared_ptr<const void> hold;
};

struct Connection {
  Connection(GrpcLimits limits, GrpcConnection::OnCall on_call)
      : http2(limits, std::move(on_call)) {}
  int fd = -1;
  uint64_t id = 0;
  GrpcConnection http2;
  std::string out;  // to send, from `sent` on
  size_t sent = 0;
  uint32_t events = 0;                              // what epoll watches on it
  GrpcConnectionTimes times;                        // what its timeouts count from (grpc_idle.h)
  uint64_t call_frames = 0, requests_received = 0;  // http2's counts at the last look
  std::map<int32_t, Clock::time_point> deadlines;   // of its calls with the model, by stream

  // Notes the call frames and whole requests that came in `now`.
  void note_calls(Clock::time_point now) {
    if (http2.call_frames() != call_frames) times.last_call = now;
    bool whole = http2.requests_received() != requests_received;
    call_frames = http2.call_frames();
    requests_received = http2.requests_received();
    if (http2.arriving() == 0)
      times.arriving_since.reset();
    else if (!times.arriving_since || whole)
      times.arriving_since = now;
  }
  GrpcConnectionLoad load() const {
    return {http2.unanswered(), http2.arriving(), sent < out.size() || http2.wants_to_send()};
  }
};

}  // namespace

struct GrpcEventLoop::State {
  State(int listen_fd, GrpcHandler handler, GrpcLoopOptions options)
      : listen_fd(listen_fd),
        handler(std::move(handler)),
        options(options),
        count(options.shared_count ? options.shared_count : std::make_shared<ConnectionCount>()) {}

  int listen_fd;
  GrpcHandler handler;
  GrpcLoopOptions options;
  std::shared_ptr<ConnectionCount> count;
  std::unique_ptr<Epoll> epoll;  // while it runs
  std::shared_ptr<Inbox<GrpcAnswer>> answers = std::make_shared<Inbox<GrpcAnswer>>();
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections;
  uint64_t next_id = kFirstConnectionTag;
  bool listening = false;
  bool shut = false;  // GOAWAY sent to every connection
  size_t max_connections = 0;
  // After requests still arriving and answers not yet sent held 4 MiB or more.
  GiveBackAfterPeak give_back;

  std::atomic<bool> shut_down_asked{false};
  LoopPhase phase;

  void run();
  void watch(Connection& connection, uint32_t events);
  void listen(bool on);
  void accept_all();
  void on_event(uint64_t id, uint32_t events);
  bool read_from(Connection& connection);
  void dispatch(uint64_t id, GrpcIncoming& call);
  bool flush(Connection& connection);
  bool blocked_or_failed(Connection& connection, SendEnd end);
  void close_connection(Connection& connection);
  void deliver_answers();
  void shut_connections();
  bool all_sent() const;
  void scan_timeouts(Clock::time_point now);
  bool expire_calls(Connection& connection, Clock::time_point now);
};

GrpcEventLoop::GrpcEventLoop(int listen_fd, GrpcHandler handler, GrpcLoopOptions options)
    : state_(std::make_unique<State>(listen_fd, std::move(handler), options)) {}

GrpcEventLoop::~GrpcEventLoop() { stop(); }

void GrpcEventLoop::serve() {
  State& state = *state_;
  state.phase.serve([&state] { state.run(); });
}

void GrpcEventLoop::shut_down() {
  state_->shut_down_asked = true;
  state_->answers->wake();
}

void GrpcEventLoop::stop() {
  State& state = *state_;
  state.shut_down_asked = true;
  state.phase.stop([&state] { state.answers->wake(); });
}

void GrpcEventLoop::State::run() {
  answers->set_loop_thread(std::this_thread::get_id());
  max_connections = connection_limit(options.max_connections);
  epoll = std::make_unique<Epoll>();
  listen(true);
  epoll->watch(answers->wake_fd(), kWakeTag, EPOLLIN, EPOLL_CTL_ADD);
  LoopTurns turns(kTimeoutScanPeriod);
  Clock::time_point give_up{};
  while (true) {
    if (shut_down_asked && !shut) shut_connections();
    if (phase.stopping()) {  // the calls are answered by now (the server drained them): send, then
                             // end
      if (give_up == Clock::time_point{}) give_up = Clock::now() + kFinalFlushTime;
      if (all_sent() || Clock::now() >= give_up) break;
    }
    turns.take(*epoll, phase.stopping() ? 50 : turns.wait_ms(!connections.empty()), *this);
  }
  for (auto& [id, connection] : connections) close(connection->fd);
  count->open -= connections.size();
  connections.clear();
  epoll.reset();
}

void GrpcEventLoop::State::watch(Connection& connection, uint32_t events) {
  if (connection.events == events) return;
  connection.events = events;
  epoll->watch(connection.fd, connection.id, events, EPOLL_CTL_MOD);
}

// Whether this loop takes connections; loops sharing the socket are woken one at a time.
void GrpcEventLoop::State::listen(bool on) {
  if (on == listening || (on && shut)) return;
  listening = on;
  if (on)
    epoll->watch(listen_fd, kListenerTag, EPOLLIN | EPOLLEXCLUSIVE, EPOLL_CTL_ADD);
  else
    epoll->watch(listen_fd, kListenerTag, 0, EPOLL_CTL_DEL);
}

void GrpcEventLoop::State::accept_all() {
  while (listening) {
    int fd = accept_connection(listen_fd);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) listen(false);
      return;
    }
    if (++count->open > max_connections) {  // over the cap of all loops: refused at once
      --count->open;
      close(fd);
      continue;
    }
    uint64_t id = next_id++;
    auto connection = std::make_unique<Connection>(
        options.limits, [this, id](GrpcIncoming& call) { dispatch(id, call); });
    connection->fd = fd;
    connection->id = id;
    connection->events = EPOLLIN | EPOLLRDHUP;
    connection->times.last_activity = connection->times.last_call = Clock::now();
    epoll->watch(fd, id, connection->events, EPOLL_CTL_ADD);
    Connection& added = *connection;
    connections.emplace(id, std::move(connection));
    flush(added);  // the server's SETTINGS go first
  }
}

void GrpcEventLoop::State::on_event(uint64_t id, uint32_t events) {
  auto found = connections.find(id);
  if (found == connections.end()) return;
  Connection& connection = *found->second;
  if (events & EPOLLERR) return close_connection(connection);
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
    if (!read_from(connection)) return;
  }
  flush(connection);
}

// Reads what has come into the connection's HTTP/2; false when the connection is closed.
bool GrpcEventLoop::State::read_from(Connection& connection) {
  ReadEnd end = read_available(connection.fd, [&connection](const char* data, size_t size) {
    connection.times.last_activity = Clock::now();
    bool taken = connection.http2.receive(data, size);
    connection.note_calls(connection.times.last_activity);
    return taken;  // not taken: its GOAWAY goes, then it closes
  });
  if (end == ReadEnd::kForNow) return true;
  close_connection(connection);  // the client has gone: its calls' answers are dropped
  return false;
}

void GrpcEventLoop::State::dispatch(uint64_t id, GrpcIncoming& call) {
  std::shared_ptr<Inbox<GrpcAnswer>> to = answers;
  int32_t stream = call.stream;
  auto connection = connections.find(id);
  if (call.deadline && connection != connections.end())
    connection->second->deadlines[stream] = *call.deadline;
  GrpcReply reply = [to, id, stream](GrpcOutgoing outgoing, std::shared_ptr<const void> hold) {
    outgoing.stream = stream;
    to->push(id, GrpcAnswer{std::move(outgoing), std::move(hold)});
  };
  try {
    handler(call, reply);
  } catch (const std::exception& e) {  // a handler's bug, answered rather than ending the server
    reply(GrpcOutgoing{stream, int(GrpcCode::kInternal), e.what(), ""}, nullptr);
  }
}

// After a send that did not take all: waits for the socket, or closes the connection (false).
bool GrpcEventLoop::State::blocked_or_failed(Connection& connection, SendEnd end) {
  if (end == SendEnd::kWouldBlock)
    watch(connection, EPOLLIN | EPOLLRDHUP | EPOLLOUT);
  else
    close_connection(connection);
  return end == SendEnd::kWouldBlock;
}

// Sends what the connection has ready; false when it is closed.
bool GrpcEventLoop::State::flush(Connection& connection) {
  while (true) {
    if (connection.sent == connection.out.size()) {
      connection.out.clear();
      connection.sent = 0;
      connection.http2.produce(connection.out, kOutChunk);
      if (connection.out.empty()) break;
    }
    // The client takes what it is sent: last_taken is when it last did.
    SendEnd end =
        send_pending(connection.fd, connection.out, connection.sent, connection.times.last_taken);
    if (end != SendEnd::kAllSent) return blocked_or_failed(connection, end);
  }
  if (connection.http2.finished()) {
    close_connection(connection);
    return false;
  }
  watch(connection, EPOLLIN | EPOLLRDHUP);
  return true;
}

void GrpcEventLoop::State::close_connection(Connection& connection) {
  close(connection.fd);  // also takes it off epoll's list
  --count->open;
  connections.erase(connection.id);
  listen(true);
}

void GrpcEventLoop::State::deliver_answers() {
  std::unordered_set<uint64_t> answered;
  for (int takes = 1; takes <= kInboxTakesPerTurn; ++takes) {
    auto taken = answers->take();
    if (taken.empty()) break;
    if (takes == kInboxTakesPerTurn) answers->wake();  // the rest next turn, after other events
    for (auto& [id, answer] : taken) {
      auto found = connections.find(id);
      if (found != connections.end()) {  // else its client has gone
        // An answer past its call's deadline is dropped too, however soon after it comes.
        auto deadline = found->second->deadlines.find(answer.outgoing.stream);
        if (deadline != found->second->deadlines.end()) {
          if (deadline->second <= Clock::now()) found->second->http2.expire(deadline->first);
          found->second->deadlines.erase(deadline);
        }
        found->second->http2.answer(std::move(answer.outgoing));
        GrpcConnectionTimes& times = found->second->times;
        times.last_activity = times.last_call = Clock::now();  // idle from here
        answered.insert(id);
      }
      answer.hold.reset();
    }
  }
  for (uint64_t id : answered) {  // each connection written once for all its answers
    auto found = connections.find(id);
    if (found != connections.end()) flush(*found->second);
  }
}

void GrpcEventLoop::State::shut_connections() {
  shut = true;
  listen(false);
  std::vector<Connection*> all;
  for (auto& [id, connection] : connections) all.push_back(connection.get());
  for (Connection* connection : all) {
    connection->http2.shut_down();
    flush(*connection);
  }
}

// Drops each connection that waited on its client too long (grpc_idle.h): a client that connects
// and sends nothing, one that stops in the middle of a call, one that does not read what it is
// sent, one that only pings, one whose request trickles in. Its GOAWAY says why, and each call
// still arriving is answered DEADLINE_EXCEEDED.
void GrpcEventLoop::State::scan_timeouts(Clock::time_point now) {
  GrpcTimeouts timeouts{std::chrono::seconds(options.read_timeout_seconds),
                        std::chrono::seconds(options.request_timeout_seconds)};
  std::vector<std::pair<Connection*, std::string>> late;
  std::vector<uint64_t> expired;  // flushed once the scan is done: a flush may close
  size_t held = 0;                // bytes of requests still arriving and of answers not yet sent
  for (auto& [id, connection] : connections) {
    held += connection->http2.held_bytes() + connection->http2.unsent_bytes();
    if (expire_calls(*connection, now)) expired.push_back(id);
    if (auto why = grpc_idle_reason(connection->times, connection->load(), now, timeouts))
      late.emplace_back(connection.get(), std::move(*why));
  }
  give_back.note(held);
  for (auto& [connection, why] : late) {
    connection->http2.time_out(why);
    if (flush(*connection)) close_connection(*connection);  // what fits the socket now has gone
  }
  for (uint64_t id : expired) {
    auto found = connections.find(id);
    if (found != connections.end()) flush(*found->second);
  }
}

// The calls past their client's deadline (`grpc-timeout`, counted from their headers) are
// answered DEADLINE_EXCEEDED, at most kTimeoutScanPeriod late, whether their request is still
// arriving or the model has it; the model's answer, when it comes, is dropped. Whether any was.
bool GrpcEventLoop::State::expire_calls(Connection& connection, Clock::time_point now) {
  bool expired = connection.http2.expire_arriving(now);
  for (auto call = connection.deadlines.begin(); call != connection.deadlines.end();) {
    if (call->second > now) {
      ++call;
      continue;
    }
    connection.http2.expire(call->first);
    call = connection.deadlines.erase(call);
    expired = true;
  }
  return expired;
}

bool GrpcEventLoop::State::all_sent() const {
  for (const auto& [id, connection] : connections)
    if (connection->sent < connection->out.size() || connection->http2.unanswered() > 0)
      return false;
  return true;
}

}  // namespace kiln::net
