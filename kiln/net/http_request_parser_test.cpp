// HTTP/1.1 requests as they arrive: whole, byte by byte, pipelined, chunked; and every way a
// request can be malformed, each with the status and reason it is answered with.

#include "kiln/net/http_request_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::net {
namespace {

using ::testing::HasSubstr;
using Status = HttpRequestParser::Status;

HttpLimits small_limits() {
  HttpLimits limits;
  limits.max_header_bytes = 256;
  limits.max_body_bytes = 100;
  return limits;
}

// The parser after it has read `text` whole.
HttpRequestParser parsed(const std::string& text, Status expected = Status::kComplete) {
  HttpRequestParser parser(small_limits());
  EXPECT_EQ(parser.parse(text), expected) << parser.error();
  return parser;
}

TEST(HttpRequestParser, ReadsTheRequestLineHeadersAndBody) {
  std::string text =
      "POST /v1/models/a%20b:predict?x=1 HTTP/1.1\r\nHost: kiln\r\nContent-Type:  "
      "application/json \r\nContent-Length: 4\r\n\r\n[1 ]";
  HttpRequestParser parser = parsed(text);
  HttpRequest& request = parser.request();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.path, "/v1/models/a b:predict");
  EXPECT_EQ(request.query, "x=1");
  ASSERT_NE(request.header("content-type"), nullptr);
  EXPECT_EQ(*request.header("content-type"), "application/json");
  EXPECT_EQ(request.header("accept"), nullptr);
  EXPECT_EQ(request.body, "[1 ]");
  EXPECT_TRUE(request.keep_alive);
  EXPECT_EQ(parser.consumed(), text.size());
}

TEST(HttpRequestParser, BytesArrivingOneAtATimeGiveTheSameRequest) {
  std::string text =
      "POST /p HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: "
      "chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n"
      "0\r\nTrailer: x\r\n\r\n";
  HttpRequestParser parser(small_limits());
  for (size_t end = 1; end < text.size(); ++end)
    ASSERT_EQ(parser.parse(std::string_view(text).substr(0, end)), Status::kIncomplete) << end;
  ASSERT_EQ(parser.parse(text), Status::kComplete);
  EXPECT_EQ(parser.request().body, "abcde");
  EXPECT_EQ(parser.consumed(), text.size());
}

TEST(HttpRequestParser, APipelinedRequestIsLeftForTheNextParse) {
  std::string first = "GET /a HTTP/1.1\r\nHost: k\r\n\r\n",
              second = "GET /b HTTP/1.1\r\nHost: k\r\n\r\n";
  std::string bytes = first + second;
  HttpRequestParser parser(small_limits());
  ASSERT_EQ(parser.parse(bytes), Status::kComplete);
  EXPECT_EQ(parser.request().path, "/a");
  EXPECT_EQ(parser.consumed(), first.size());
  bytes.erase(0, parser.consumed());
  parser.reset();
  ASSERT_EQ(parser.parse(bytes), Status::kComplete);
  EXPECT_EQ(parser.request().path, "/b");
}

TEST(HttpRequestParser, KeepAliveFollowsTheVersionAndConnectionHeader) {
  EXPECT_FALSE(
      parsed("GET / HTTP/1.1\r\nHost: k\r\nConnection: Close\r\n\r\n").request().keep_alive);
  EXPECT_FALSE(parsed("GET / HTTP/1.0\r\n\r\n").request().keep_alive);
  EXPECT_TRUE(parsed("GET / HTTP/1.0\r\nConnection: x, Keep-Alive\r\n\r\n").request().keep_alive);
  EXPECT_EQ(parsed("GET / HTTP/1.0\r\n\r\n").request().minor_version, 0);
  // An HTTP/1.0 message with a Transfer-Encoding is read, then its connection closes, whatever it
  // asks: its framing is suspect (RFC 9112 6.1).
  HttpRequestParser suspect = parsed(
      "POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\r\n{}\r\n0\r\n\r\n");
  EXPECT_EQ(suspect.request().body, "{}");
  EXPECT_FALSE(suspect.request().keep_alive);
}

TEST(HttpRequestParser, AnAbsoluteTargetNamesItsPath) {
  EXPECT_EQ(parsed("GET http://host:8501/v1/models/m HTTP/1.1\r\nHost: k\r\n\r\n").request().path,
            "/v1/models/m");
}

TEST(HttpRequestParser, ExpectContinueIsAwaitedUntilTheBodyBegins) {
  HttpRequestParser parser(small_limits());
  std::string head =
      "POST /p HTTP/1.1\r\nHost: k\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  ASSERT_EQ(parser.parse(head), Status::kIncomplete);
  EXPECT_TRUE(parser.headers_done());
  EXPECT_TRUE(parser.awaits_continue());
  ASSERT_EQ(parser.parse(head + "{"), Status::kIncomplete);
  EXPECT_FALSE(parser.awaits_continue());
  EXPECT_EQ(parser.parse(head + "{}"), Status::kComplete);
}

TEST(HttpRequestParser, AStalledBodyIsDescribedAndAStalledHeadIsNot) {
  HttpRequestParser parser(small_limits());
  parser.parse("POST /p HTTP/1.1\r\nHost: k\r\nContent-Length: 10\r\n\r\nabc");
  EXPECT_EQ(parser.stall_reason(3),
            "the request body ended after 3 of the 10 bytes its Content-Length gives: the client "
            "sent nothing for 3 s or closed the connection");
  HttpRequestParser chunked(small_limits());
  chunked.parse("POST /p HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n");
  EXPECT_THAT(chunked.stall_reason(1), HasSubstr("the chunked request body stopped after 2 bytes"));
  HttpRequestParser in_a_chunk(small_limits());
  in_a_chunk.parse(
      "POST /p HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"
      "9\r\nxyz");
  EXPECT_THAT(in_a_chunk.stall_reason(1),
              HasSubstr("the chunked request body stopped after 5 bytes"))
      << "the bytes of a chunk still arriving count";
  HttpRequestParser head(small_limits());
  head.parse("POST /p HT");
  EXPECT_EQ(head.stall_reason(1), "");
}

struct Malformed {
  std::string text;
  int status;
  std::string reason;
};

TEST(HttpRequestParser, MalformedRequestsAreRefusedWithTheirStatusAndReason) {
  std::string long_header = "GET / HTTP/1.1\r\nHost: k\r\nX: " + std::string(300, 'a') + "\r\n\r\n";
  std::vector<Malformed> cases = {
      {"NOT HTTP AT ALL\r\n\r\n", 400, "is not `METHOD TARGET HTTP/1.1`"},
      {"GET /\r\n\r\n", 400, "is not `METHOD TARGET HTTP/1.1`"},
      {"G(T / HTTP/1.1\r\nHost: k\r\n\r\n", 400, "is not `METHOD TARGET HTTP/1.1`"},
      {"GET / HTTP/2.0\r\n\r\n", 505, "HTTP/2.0 is not served"},
      {"GET relative HTTP/1.1\r\nHost: k\r\n\r\n", 400, "the request target is not a path"},
      {"GET /a%2 HTTP/1.1\r\nHost: k\r\n\r\n", 400, "broken %-escape"},
      {"GET / HTTP/1.1\r\nHost: k\r\nNo colon here\r\n\r\n", 400, "is not `Name: value`"},
      {"GET / HTTP/1.1\r\nHost: k\r\nA: b\r\n  folded\r\n\r\n", 400, "folded over two lines"},
      {"POST / HTTP/1.1\r\nHost: k\r\nContent-Length: 1x\r\n\r\n", 400, "\"1x\" is not a number"},
      {"POST / HTTP/1.1\r\nHost: k\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400,
       "two different Content-Lengths"},
      {"POST / HTTP/1.1\r\nHost: k\r\nContent-Length: 101\r\n\r\n", 413, "over 100 bytes"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", 400,
       "both Transfer-Encoding and Content-Length"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
       "\"gzip\" is not supported"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400,
       "size in hex"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n", 413,
       "over 100 bytes"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", 400,
       "longer than its size"},
      {long_header, 431, "over 256 bytes"},
      // RFC 9110 5.5 and RFC 9112 3.2, 7.1; Content-Encoding kiln does not decode.
      {std::string("GET / HTTP/1.1\r\nHost: k\r\nX: a\0b\r\n\r\n", 35), 400,
       "the header field X holds the control character 0x00"},
      {"GET / HTTP/1.1\r\nHost: k\r\nX: a\rb\r\n\r\n", 400, "control character 0x0d"},
      {"GET / HTTP/1.1\r\n\r\n", 400, "no Host header field, which HTTP/1.1 requires"},
      {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "two Host header fields"},
      {"GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", 400, "two Host header fields"},
      {"GET / HTTP/1.1\r\nHost: a b/c\r\n\r\n", 400, "\"a b/c\" is not host[:port]"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\n", 400,
       "size in hex: \" 5\""},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n", 400,
       "size in hex"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n5;\r\n", 400,
       "size in hex"},
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"x\r\n", 400,
       "size in hex"},
      {"POST / HTTP/1.1\r\nHost: k\r\nContent-Encoding: gzip\r\nContent-Length: 1\r\n\r\nx", 415,
       "Content-Encoding \"gzip\" is not decoded here"},
      // A NUL in the target reached the model name (404 for a served model).
      {std::string("GET /v1/models/a\0b HTTP/1.1\r\nHost: k\r\n\r\n", 40), 400,
       "the request target holds the byte 0x00"},
      {"GET /v1/models/\x7f HTTP/1.1\r\nHost: k\r\n\r\n", 400, "byte 0x7f"},
      {"GET /v1/models/a%00b HTTP/1.1\r\nHost: k\r\n\r\n", 400, "%00 (a NUL byte)"},
      // Two field lines are one list: chunked then gzip is not chunked (a smuggling shape).
      {"POST / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
       "gzip\r\n\r\n",
       501, "Transfer-Encoding \"chunked, gzip\" is not supported"},
  };
  for (const Malformed& bad : cases) {
    HttpRequestParser parser = parsed(bad.text, Status::kFailed);
    EXPECT_EQ(parser.error_status(), bad.status) << bad.text;
    EXPECT_THAT(parser.error(), HasSubstr(bad.reason)) << bad.text;
    EXPECT_EQ(parser.parse(bad.text + "more"), Status::kFailed);  // it stays failed
  }
}

TEST(HttpRequestParser, WhatRfc9112AllowsStillParses) {
  // HTTP/1.0 needs no Host; an IP literal with a port, identity coding and chunk extensions
  // with quoted values and spaces before the semicolon are all well-formed.
  EXPECT_EQ(parsed("GET / HTTP/1.0\r\n\r\n").request().minor_version, 0);
  parsed("GET / HTTP/1.1\r\nHost: [::1]:8501\r\n\r\n");
  parsed("GET / HTTP/1.1\r\nHost:\r\n\r\n");
  HttpRequestParser chunked = parsed(
      "POST / HTTP/1.1\r\nHost: k\r\nContent-Encoding: identity\r\nTransfer-Encoding: "
      "chunked\r\n\r\n3 ; a=\"x;\\\"y\" ;b\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.request().body, "abc");
  parsed("GET / HTTP/1.1\r\nHost: k\r\nUser-Agent: a\tb\r\n\r\n");
}

TEST(HttpRequestParser, AHeadThatNeverEndsIsRefusedOnceOverTheLimit) {
  HttpRequestParser parser(small_limits());
  EXPECT_EQ(parser.parse("GET / HTTP/1.1\r\nHost: k\r\nX: " + std::string(200, 'a')),
            Status::kIncomplete);
  EXPECT_EQ(parser.parse("GET / HTTP/1.1\r\nHost: k\r\nX: " + std::string(300, 'a')),
            Status::kFailed);
  EXPECT_EQ(parser.error_status(), 431);
}

TEST(HttpResponse, FramesTheBodyWithItsLengthAndSaysWhenItCloses) {
  EXPECT_EQ(http_response(200, "application/json", "{}", true),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(http_response(413, "text/plain", "", false),
            "HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n"
            "Connection: close\r\n\r\n");
}

}  // namespace
}  // namespace kiln::net
