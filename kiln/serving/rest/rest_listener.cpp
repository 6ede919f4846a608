#include "kiln/serving/rest/rest_listener.h"

#include <memory>
#include <utility>

#include "kiln/net/tcp_listen.h"

namespace kiln::serving {
namespace {

class RestListener final : public Listener {
 public:
  RestListener(const ServingParts& parts, RestListenerOptions options)
      : host_(options.host),
        handler_(parts.table, with_held(options.rest, parts.held), &parts.metrics, &parts.gate),
        server_(handler_, with_log(std::move(options.http), parts.log)),
        port_(server_.bind(options.host, options.port)) {}

  std::string address() const override { return "http://" + net::host_port(host_, port_); }
  int port() const override { return port_; }
  void serve() override { server_.serve(); }
  void stop() override { server_.stop(); }

 private:
  static RestOptions with_held(RestOptions rest, const HeldBytes* held) {
    rest.held = held;
    return rest;
  }
  static HttpOptions with_log(HttpOptions http, std::function<void(const std::string&)> log) {
    if (!http.log) http.log = std::move(log);
    return http;
  }

  std::string host_;
  RestHandler handler_;  // before the server, which ends first and hands it requests
  HttpServer server_;
  int port_;
};

}  // namespace

ListenerFactory rest_listener(RestListenerOptions options) {
  return [options](ServingParts parts) -> std::unique_ptr<Listener> {
    return std::make_unique<RestListener>(parts, options);
  };
}

}  // namespace kiln::serving
