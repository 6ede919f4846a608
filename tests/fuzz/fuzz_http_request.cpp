// HTTP/1.1 requests as `kiln serve`'s event loop reads them (net/http_request_parser.h): any
// bytes give a request, a refusal with a 4xx or 5xx status and a reason, or a wait for more, never
// a crash or a read past the bytes. The first byte picks where the rest is cut in two: the parser
// given the first part and then the whole must end as it does given the whole at once (the same
// request, the same bytes consumed, the same refusal), as a connection delivers its bytes in
// pieces of any size.

#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/net/http_request_parser.h"

namespace {

using kiln::net::HttpLimits;
using kiln::net::HttpRequestParser;

HttpLimits limits() {
  HttpLimits small;
  small.max_header_bytes = 512;
  small.max_body_bytes = 2048;
  return small;
}

void check_same(HttpRequestParser& a, HttpRequestParser& b, HttpRequestParser::Status status) {
  if (status == HttpRequestParser::Status::kFailed) {
    if (a.error_status() != b.error_status() || a.error() != b.error()) __builtin_trap();
    if (a.error_status() < 400 || a.error_status() > 599 || a.error().empty()) __builtin_trap();
    return;
  }
  if (status != HttpRequestParser::Status::kComplete) return;
  const auto& x = a.request();
  const auto& y = b.request();
  if (a.consumed() != b.consumed() || x.method != y.method || x.path != y.path ||
      x.query != y.query || x.body != y.body || x.headers != y.headers ||
      x.keep_alive != y.keep_alive)
    __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t cut = bytes.empty() ? 0 : data[0] % (bytes.size() + 1);
  HttpRequestParser whole(limits()), pieces(limits());
  HttpRequestParser::Status at_once = whole.parse(bytes);
  HttpRequestParser::Status first = pieces.parse(bytes.substr(0, cut));
  HttpRequestParser::Status in_pieces =
      first == HttpRequestParser::Status::kIncomplete ? pieces.parse(bytes) : first;
  // A request complete or refused within the first part is so in the whole too, as it was read
  // no further.
  if (at_once != in_pieces) __builtin_trap();
  check_same(whole, pieces, at_once);
  if (at_once == HttpRequestParser::Status::kComplete && whole.consumed() > bytes.size())
    __builtin_trap();
  (void)whole.stall_reason(1);
  return 0;
}
