// End-to-end: a Fashion-MNIST model exported and asked with encoded images. `kiln predict` over
// PNG files and `kiln serve` over {"b64": ...} PNGs answer what the same pixels as an IDX file
// give, because both decode and scale them as the training data did; an image of another size
// is refused naming both sizes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <sstream>

#include "kiln/core/json.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/io/idx.h"
#include "kiln/io/image_codec.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace serve_images_e2e_test {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

// Grey images whose pixels differ from one image to the next.
io::Image picture(int seed, int64_t height = 28, int64_t width = 28) {
  io::Image image{height, width, 1, {}};
  for (int64_t i = 0; i < height * width; ++i)
    image.pixels.push_back(static_cast<uint8_t>((i * (seed + 3) + seed * 41) % 256));
  return image;
}

void expect_same_predictions(const Json& a, const Json& b) {
  EXPECT_EQ(a["classes"], b["classes"]);
  ASSERT_TRUE(a["probabilities"].is_array()) << a.dump();
  ASSERT_EQ(a["probabilities"].size(), b["probabilities"].size());
  for (size_t k = 0; k < a["probabilities"].size(); ++k)
    EXPECT_NEAR(a["probabilities"][k].get<double>(), b["probabilities"][k].get<double>(), 1e-5);
}

TEST(ServeImages, PngImagesAreDecodedAsTheTrainingDataWasOfflineAndServed) {
  testing::TempDir dir;
  auto run = testing::run_command(
      kiln(std::string("train ") + KILN_SOURCE_DIR + "/configs/examples/fashion_mnist/mlp.yaml" +
           " --set train.max='3 steps' --set data.train.limit=64 --set data.val_fraction=0" +
           " --set data.test=null --set train.monitor=train/loss --runs-root " + dir.file("runs")));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto exported = testing::run_command(kiln("export " + testing::run_dir_of(run.out) +
                                            " --checkpoint last --to " + dir.file("models") +
                                            " --name fashion"));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(read_text_file(dir.file("models/fashion/1/model.yaml")), HasSubstr("layout: chw"));

  // The same three images as PNG files and as one IDX file.
  io::IdxArray idx;
  idx.dims = {3, 28, 28};
  std::vector<std::string> encoded;
  for (int i = 0; i < 3; ++i) {
    io::Image image = picture(i);
    idx.data.insert(idx.data.end(), image.pixels.begin(), image.pixels.end());
    encoded.push_back(io::encode_png(image));
    dir.write("pictures/" + std::to_string(i) + ".png", encoded.back());
  }
  dir.write("pictures/notes.txt", "not an image: passed over");
  std::string model = dir.file("models/fashion");
  auto from_idx = testing::run_command(
      kiln("predict " + model + " --input " + dir.write("images.idx", io::encode_idx(idx))));
  auto from_png =
      testing::run_command(kiln("predict " + model + " --input " + dir.file("pictures")));
  ASSERT_EQ(from_idx.exit_code, 0) << from_idx.err;
  ASSERT_EQ(from_png.exit_code, 0) << from_png.err;
  std::vector<Json> offline = testing::json_lines(from_idx.out),
                    files = testing::json_lines(from_png.out);
  ASSERT_EQ(offline.size(), 3u);
  ASSERT_EQ(files.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(files[i]["file"], dir.file("pictures/" + std::to_string(i) + ".png"));
    expect_same_predictions(files[i], offline[i]);
  }

  testing::ChildProcess server(kiln("serve " + model + " --port 0"));
  int port = testing::served_port(server);
  ASSERT_NE(port, 0) << "kiln serve ended before it listened";
  httplib::Client client("127.0.0.1", port);
  Json body = {{"instances", Json::array()}};
  for (const std::string& png : encoded) body["instances"].push_back({{"b64", base64_encode(png)}});
  httplib::Result answer =
      client.Post("/v1/models/fashion:predict", body.dump(), "application/json");
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, 200) << answer->body;
  Json served = Json::parse(answer->body)["predictions"];
  ASSERT_EQ(served.size(), 3u);
  for (size_t i = 0; i < 3; ++i) expect_same_predictions(served[i], offline[i]);

  Json wrong = {{"instances", {{{"b64", base64_encode(io::encode_png(picture(0, 14, 56)))}}}}};
  httplib::Result refused =
      client.Post("/v1/models/fashion:predict", wrong.dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_THAT(refused->body, HasSubstr("is a 14x56 image; the model takes 28x28"));
  server.signal(SIGTERM);
  EXPECT_EQ(server.wait(), 0);
}

}  // namespace serve_images_e2e_test
}  // namespace kiln
