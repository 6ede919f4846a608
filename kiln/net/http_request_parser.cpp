#include "kiln/net/http_request_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace kiln::net {
namespace {

constexpr size_t kMaxChunkLine = 1024;  // a chunk's size and its extensions

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), is_token_char);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The line of `bytes` that starts at `from` without its CR LF (or bare LF), and where the next
// begins; npos when its end has not come.
size_t line_end(std::string_view bytes, size_t from, std::string_view& line) {
  size_t newline = bytes.find('\n', from);
  if (newline == std::string_view::npos) return std::string_view::npos;
  line = bytes.substr(from, newline - from);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return newline + 1;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `%XX` escapes decoded; false for a broken one.
bool percent_decode(std::string_view text, std::string& out) {
  out.clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return false;
    int high = hex_value(text[i + 1]), low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return false;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return true;
}

// The first control character of a field value (RFC 9110 5.5: a NUL, CR or LF in a value is to
// be refused; no other control but HTAB has a place there either), or npos.
size_t control_character_at(std::string_view value) {
  for (size_t i = 0; i < value.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return i;
  }
  return std::string_view::npos;
}

// A Host value as RFC 9112 3.2 takes it: uri-host [":" port], where uri-host is a reg-name, an
// IPv4 address or a bracketed IP literal; empty when the target has no authority.
bool is_host_value(std::string_view value) {
  return std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("-._~!$&'()*+,;=:[]%").find(c) != std::string_view::npos;
  });
}

// A chunk's size line (RFC 9112 7.1): 1*HEXDIG, then extensions `BWS ; BWS name [BWS = BWS
// value]` whose names are tokens. Returns the hex digits, or an empty view when malformed.
std::string_view chunk_size_digits(std::string_view line) {
  size_t end = 0;
  while (end < line.size() && hex_value(line[end]) >= 0) ++end;
  std::string_view digits = line.substr(0, end), rest = trim(line.substr(end));
  while (!rest.empty()) {
    if (rest.front() != ';') return {};
    rest = trim(rest.substr(1));
    size_t name_end = 0;
    while (name_end < rest.size() && is_token_char(rest[name_end])) ++name_end;
    if (name_end == 0) return {};
    rest = trim(rest.substr(name_end));
    if (rest.empty() || rest.front() != '=') continue;
    rest = trim(rest.substr(1));
    size_t value_end = 0;
    if (!rest.empty() && rest.front() == '"') {  // a quoted string, with \-escapes
      for (value_end = 1; value_end < rest.size() && rest[value_end] != '"'; ++value_end)
        if (rest[value_end] == '\\') ++value_end;
      if (value_end >= rest.size()) return {};
      ++value_end;
    } else {
      while (value_end < rest.size() && is_token_char(rest[value_end])) ++value_end;
      if (value_end == 0) return {};
    }
    rest = trim(rest.substr(value_end));
  }
  return digits;
}

// Whether a comma-separated header value lists `token` (case-insensitive).
bool lists(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    if (lower(trim(value.substr(0, comma))) == token) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

}  // namespace

const std::string* HttpRequest::header(std::string_view lower_case_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_case_name) return &value;
  return nullptr;
}

HttpRequestParser::Status HttpRequestParser::fail(int status, std::string why) {
  stage_ = Stage::kDone;
  error_status_ = status;
  error_ = std::move(why);
  return Status::kFailed;
}

HttpRequestParser::Status HttpRequestParser::parse(std::string_view bytes) {
  if (error_status_ != 0) return Status::kFailed;
  seen_ = bytes.size();
  if (stage_ == Stage::kHead) {
    Status head = parse_head(bytes);
    if (head != Status::kComplete) return head;
  }
  if (stage_ == Stage::kBody) {
    if (bytes.size() > position_) awaits_continue_ = false;
    if (bytes.size() - position_ < body_length_) return Status::kIncomplete;
    request_.body.assign(bytes.substr(position_, body_length_));
    position_ += body_length_;
    stage_ = Stage::kDone;
  }
  if (stage_ != Stage::kDone) {
    Status chunks = parse_chunks(bytes);
    if (chunks != Status::kComplete) return chunks;
  }
  consumed_ = position_;
  return Status::kComplete;
}

HttpRequestParser::Status HttpRequestParser::parse_head(std::string_view bytes) {
  if (!head_started_) {  // empty lines before a request line are to be ignored (RFC 9112 2.2)
    while (position_ < bytes.size() && (bytes[position_] == '\r' || bytes[position_] == '\n'))
      ++position_;
    head_start_ = position_;
    if (head_start_ > limits_.max_header_bytes)
      return fail(400, "the request begins with too many empty lines");
    if (position_ == bytes.size()) return Status::kIncomplete;
    head_started_ = true;
  }
  std::string_view line;
  for (size_t next; (next = line_end(bytes, position_, line)) != std::string_view::npos;) {
    if (next - head_start_ > limits_.max_header_bytes) break;
    bool blank = line.empty() && position_ > head_start_;
    position_ = next;
    if (blank) return read_header_fields(bytes.substr(head_start_, position_ - head_start_));
  }
  if (bytes.size() - head_start_ > limits_.max_header_bytes)
    return fail(431, fmt::format("the request line and header fields are over {} bytes",
                                 limits_.max_header_bytes));
  return Status::kIncomplete;
}

HttpRequestParser::Status HttpRequestParser::read_header_fields(std::string_view head) {
  std::string_view line;
  size_t next = line_end(head, 0, line);
  // The request line: METHOD SP TARGET SP HTTP/1.x
  size_t first_space = line.find(' '), second_space = line.rfind(' ');
  if (first_space == std::string_view::npos || first_space == second_space)
    return fail(400, "the request line is not `METHOD TARGET HTTP/1.1`");
  request_.method = std::string(line.substr(0, first_space));
  std::string_view target = line.substr(first_space + 1, second_space - first_space - 1);
  std::string_view version = line.substr(second_space + 1);
  if (!is_token(request_.method) || target.empty() || target.find(' ') != std::string_view::npos)
    return fail(400, "the request line is not `METHOD TARGET HTTP/1.1`");
  // A request target is visible ASCII (RFC 9112 3.2; RFC 3986): a NUL or other control byte
  // would otherwise reach the model name as it is.
  for (char c : target)
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
      return fail(400, fmt::format("the request target holds the byte 0x{:02x}, which a target "
                                   "cannot (escape it as %XX)",
                                   static_cast<uint8_t>(c)));
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) ||
      !std::isdigit(static_cast<unsigned char>(version[7])))
    return fail(400, "the request line is not `METHOD TARGET HTTP/1.1`");
  if (version[5] != '1')
    return fail(505, fmt::format("{} is not served: this server speaks HTTP/1.1", version));
  request_.minor_version = version[7] - '0';
  // An absolute target (`http://host/path`, as sent to proxies) names its path after the host.
  if (target.front() != '/' && target != "*") {
    size_t scheme = target.find("://");
    size_t path = scheme == std::string_view::npos ? scheme : target.find('/', scheme + 3);
    if (scheme == std::string_view::npos) return fail(400, "the request target is not a path");
    target = path == std::string_view::npos ? std::string_view("/") : target.substr(path);
  }
  size_t question = target.find('?');
  if (question != std::string_view::npos) request_.query = std::string(target.substr(question + 1));
  if (!percent_decode(target.substr(0, question), request_.path))
    return fail(400, "the request target has a broken %-escape");
  if (request_.path.find('\0') != std::string::npos)
    return fail(400, "the request target's path holds %00 (a NUL byte), which no path has");

  for (size_t at = next; (next = line_end(head, at, line)) != std::string_view::npos; at = next) {
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (line.front() == ' ' || line.front() == '\t')
      return fail(400, "a header field is folded over two lines, which HTTP/1.1 no longer allows");
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      return fail(400, fmt::format("the header line \"{}\" is not `Name: value`",
                                   line.substr(0, std::min<size_t>(line.size(), 80))));
    std::string_view value = trim(line.substr(colon + 1));
    size_t control = control_character_at(value);
    if (control != std::string_view::npos)
      return fail(400, fmt::format("the header field {} holds the control character 0x{:02x}",
                                   line.substr(0, colon), static_cast<uint8_t>(value[control])));
    request_.headers.emplace_back(lower(line.substr(0, colon)), std::string(value));
  }
  return check_host();
}

HttpRequestParser::Status HttpRequestParser::check_host() {
  int hosts = 0;
  for (const auto& [name, value] : request_.headers) {
    if (name != "host") continue;
    if (++hosts > 1) return fail(400, "the request has two Host header fields");
    if (!is_host_value(value))
      return fail(400, fmt::format("the Host header field \"{}\" is not host[:port]",
                                   value.substr(0, std::min<size_t>(value.size(), 80))));
  }
  // RFC 9112 3.2: an HTTP/1.1 request without Host is answered 400.
  if (hosts == 0 && request_.minor_version >= 1)
    return fail(400, "the request has no Host header field, which HTTP/1.1 requires");
  return choose_body();
}

HttpRequestParser::Status HttpRequestParser::choose_body() {
  const std::string* connection = request_.header("connection");
  request_.keep_alive = request_.minor_version >= 1
                            ? !(connection && lists(*connection, "close"))
                            : connection && lists(*connection, "keep-alive");
  // Repeated field lines are one comma-joined list (RFC 9110 5.3): `chunked` then `gzip` on two
  // lines is `chunked, gzip`, not `chunked`.
  std::optional<std::string> encoding;
  for (const auto& [name, value] : request_.headers)
    if (name == "transfer-encoding") encoding = encoding ? *encoding + ", " + value : value;
  bool has_length = false;
  for (const auto& [name, value] : request_.headers) {
    if (name != "content-length") continue;
    bool digits = !value.empty() && value.size() <= 18 &&
                  std::all_of(value.begin(), value.end(),
                              [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!digits) return fail(400, fmt::format("Content-Length \"{}\" is not a number", value));
    uint64_t length = std::stoull(value);
    if (has_length && length != body_length_)
      return fail(400, "the request gives two different Content-Lengths");
    has_length = true;
    body_length_ = length;
  }
  if (encoding) {
    // Both framings at once is how requests are smuggled past proxies (RFC 9112 6.3).
    if (has_length) return fail(400, "the request has both Transfer-Encoding and Content-Length");
    if (lower(*encoding) != "chunked")
      return fail(501, fmt::format("Transfer-Encoding \"{}\" is not supported; send the body "
                                   "with a Content-Length or chunked",
                                   *encoding));
    chunked_ = true;
    // An HTTP/1.0 message with a Transfer-Encoding was likely forwarded by something that did not
    // understand it: its framing is suspect, so the connection closes after it (RFC 9112 6.1).
    if (request_.minor_version == 0) request_.keep_alive = false;
  }
  const std::string* content_encoding = request_.header("content-encoding");
  if (content_encoding && !content_encoding->empty() && lower(*content_encoding) != "identity")
    return fail(415, fmt::format("Content-Encoding \"{}\" is not decoded here; send the body "
                                 "uncompressed",
                                 *content_encoding));
  if (body_length_ > limits_.max_body_bytes)
    return fail(413, fmt::format("the request body is over {} bytes (--max-body-bytes)",
                                 limits_.max_body_bytes));
  const std::string* expect = request_.header("expect");
  awaits_continue_ = expect && lower(*expect) == "100-continue" && (chunked_ || body_length_ > 0);
  stage_ = chunked_ ? Stage::kChunkSize : has_length ? Stage::kBody : Stage::kDone;
  return Status::kComplete;
}

HttpRequestParser::Status HttpRequestParser::parse_chunks(std::string_view bytes) {
  if (bytes.size() > position_) awaits_continue_ = false;
  std::string_view line;
  while (stage_ != Stage::kDone) {
    size_t next = stage_ == Stage::kChunkData ? 0 : line_end(bytes, position_, line);
    if (stage_ != Stage::kChunkData && next == std::string_view::npos) {
      size_t pending = bytes.size() - position_;
      if (stage_ == Stage::kChunkSize && pending > kMaxChunkLine)
        return fail(400, "a chunk size line of the request body is too long");
      if (stage_ == Stage::kTrailers &&
          position_ + pending - trailers_start_ > limits_.max_header_bytes)
        return fail(431, "the request's trailer fields are too long");
      return Status::kIncomplete;
    }
    switch (stage_) {
      case Stage::kChunkSize: {
        std::string_view digits = chunk_size_digits(line);
        if (digits.empty() || digits.size() > 15)
          return fail(400, fmt::format("a chunk of the request body does not begin with its size "
                                       "in hex: \"{}\"",
                                       line.substr(0, std::min<size_t>(line.size(), 40))));
        body_length_ = 0;
        for (char c : digits) body_length_ = body_length_ * 16 + uint64_t(hex_value(c));
        if (request_.body.size() + body_length_ > limits_.max_body_bytes)
          return fail(413, fmt::format("the request body is over {} bytes (--max-body-bytes)",
                                       limits_.max_body_bytes));
        position_ = next;
        trailers_start_ = position_;
        stage_ = body_length_ == 0 ? Stage::kTrailers : Stage::kChunkData;
        break;
      }
      case Stage::kChunkData:
        if (bytes.size() - position_ < body_length_) return Status::kIncomplete;
        request_.body.append(bytes.substr(position_, body_length_));
        position_ += body_length_;
        stage_ = Stage::kChunkEnd;
        break;
      case Stage::kChunkEnd:
        if (!line.empty()) return fail(400, "a chunk of the request body is longer than its size");
        position_ = next;
        stage_ = Stage::kChunkSize;
        break;
      default:  // kTrailers: fields after the last chunk, which nothing here reads
        position_ = next;
        if (line.empty()) stage_ = Stage::kDone;
        break;
    }
  }
  return Status::kComplete;
}

std::string HttpRequestParser::stall_reason(int seconds) const {
  return short_body(
      fmt::format("the client sent nothing for {} s or closed the connection", seconds));
}

std::string HttpRequestParser::cut_short_reason() const {
  return short_body("the client closed the connection");
}

std::string HttpRequestParser::short_body(const std::string& cause) const {
  if (stage_ == Stage::kBody)
    return fmt::format(
        "the request body ended after {} of the {} bytes its Content-Length "
        "gives: {}",
        seen_ - position_, body_length_, cause);
  if (stage_ == Stage::kChunkSize || stage_ == Stage::kChunkData || stage_ == Stage::kChunkEnd ||
      stage_ == Stage::kTrailers) {
    // A chunk still arriving counts what came of it (it joins the body once whole).
    size_t arriving =
        stage_ == Stage::kChunkData ? std::min<size_t>(seen_ - position_, body_length_) : 0;
    return fmt::format("the chunked request body stopped after {} bytes: {}",
                       request_.body.size() + arriving, cause);
  }
  return "";
}

std::string http_response(int status, std::string_view content_type, std::string_view body,
                          bool keep_alive) {
  std::string response = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n", status,
      reason_phrase(status), content_type, body.size(), keep_alive ? "" : "Connection: close\r\n");
  response.append(body);
  return response;
}

}  // namespace kiln::net
