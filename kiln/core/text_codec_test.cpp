#include "kiln/core/text_codec.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(Base64, MatchesTheRfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded), plain);
  }
}

TEST(Base64, RoundTripsEveryByteValue) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(base64_encode(all).substr(0, 8), "AAECAwQF");
  EXPECT_EQ(base64_decode(base64_encode(all)), all);
  EXPECT_EQ(base64_decode("Zm9vYg"), "foob");  // padding is optional
}

TEST(Base64, RejectsMalformedText) {
  EXPECT_FALSE(base64_decode("Zm9v!"));
  EXPECT_FALSE(base64_decode("Z"));
  EXPECT_FALSE(base64_decode("Zm 9v"));
}

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("chicken"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x94"));  // é € 🐔
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));
}

TEST(Utf8, RejectsMalformedSequences) {
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\x80"));              // a lone continuation byte
  EXPECT_FALSE(is_valid_utf8("\xc3"));              // cut short
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a UTF-16 surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x28\xa1"));      // a bad continuation byte
}

// A NUL in a run's status once ended `kiln runs`' table there, and the runs after it with it.
TEST(TerminalText, ControlBytesAndBytesThatAreNotUtf8AreShownEscaped) {
  EXPECT_EQ(terminal_text(std::string("finished\0x", 10)), "finished\\x00x");
  EXPECT_EQ(terminal_text("a\nb\x1b[31m\x7f"), "a\\x0ab\\x1b[31m\\x7f");
  EXPECT_EQ(terminal_text("caf\xc3\xa9 \xff!"), "caf\xc3\xa9 \\xff!");
  EXPECT_EQ(terminal_text("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(terminal_text(""), "");
}

TEST(MessageForClient, ShortValidTextIsUnchanged) {
  EXPECT_EQ(message_for_client("Servable not found for request: Latest(x)"),
            "Servable not found for request: Latest(x)");
  EXPECT_EQ(message_for_client(std::string(kClientMessageLimit, 'a')),
            std::string(kClientMessageLimit, 'a'));
}

TEST(MessageForClient, BytesThatAreNotUtf8BecomeQuestionMarks) {
  EXPECT_EQ(message_for_client("bad \xff\xfe byte \xC3"), "bad ?? byte ?");
  EXPECT_EQ(message_for_client("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(MessageForClient, ALongMessageIsCutOutsideACharacter) {
  std::string message = std::string(kClientMessageLimit - 1, 'a') + "\xC3\xA9tail";
  EXPECT_EQ(message_for_client(message),
            std::string(kClientMessageLimit - 1, 'a') + "...TRUNCATED");
  std::string euro = std::string(kClientMessageLimit - 2, 'a') + "\xE2\x82\xAC";
  EXPECT_EQ(message_for_client(euro + "x"),
            euro.substr(0, kClientMessageLimit - 2) + "...TRUNCATED");
}

// The repair once searched the whole message again after each byte it replaced: a 60 KB message
// of bytes that are not UTF-8 took billions of steps. Now it is cut before it is repaired.
TEST(MessageForClient, AMegabyteOfInvalidBytesIsCutAndRepaired) {
  std::string answer = message_for_client(std::string(1 << 20, '\xff'));
  EXPECT_EQ(answer, std::string(kClientMessageLimit, '?') + "...TRUNCATED");
}

TEST(DigitsValue, ReadsOnlyAWholeStringOfAtMostEighteenDigits) {
  EXPECT_EQ(digits_value("0"), 0);
  EXPECT_EQ(digits_value("000000320"), 320);
  EXPECT_EQ(digits_value("999999999999999999"), 999999999999999999);
  for (const char* text : {"", "-1", "+1", " 1", "1 ", "1.0", "12a", "1234567890123456789"})
    EXPECT_EQ(digits_value(text), std::nullopt) << text;
}

}  // namespace
}  // namespace kiln
