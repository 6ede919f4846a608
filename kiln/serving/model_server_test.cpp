// The server as `kiln serve` runs it, over fake servables: models loaded from their folders and
// served on a real socket, refused at start when a folder serves nothing, drained at stop.

#include "kiln/serving/model_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/serving/rest/rest_listener.h"
#include "tests/support/fake_servable.h"
#include "tests/support/temp_dir.h"

namespace kiln::serving {
namespace model_server_test {

using ::testing::Contains;
using ::testing::HasSubstr;

struct Served {
  kiln::testing::TempDir dir;
  std::vector<std::string> log;

  // Serving `name` over REST on a free port, or with no listener at all.
  ModelServerOptions options(const std::string& name, bool rest = true) {
    ModelServerOptions options;
    ServedModel model;
    model.name = name;
    model.base_path = dir.file(name);
    options.models = {model};
    if (rest) {
      RestListenerOptions on_any_port;
      on_any_port.port = 0;
      options.listeners.push_back(rest_listener(on_any_port));
    }
    options.poll_seconds = 3600;  // stop() wakes the watcher; no poll comes in between
    options.log = [this](const std::string& line) { log.push_back(line); };
    return options;
  }

  static ModelServer::LoadVersion half_plus_two() {
    return [](const std::string&, const std::string&, ServingMetrics&) {
      return std::make_shared<kiln::testing::HalfPlusTwo>();
    };
  }
};

TEST(ModelServer, ServesEachModelsVersionsOnItsPortAndDrainsAtStop) {
  Served served;
  std::filesystem::create_directories(served.dir.file("half/1"));
  ModelServer server(served.options("half"), Served::half_plus_two());
  EXPECT_EQ(server.models(), (std::map<std::string, size_t>{{"half", 1}}));
  EXPECT_EQ(server.listener_addresses(),
            std::vector<std::string>{"http://127.0.0.1:" + std::to_string(server.port())});
  server.start();
  httplib::Client client("127.0.0.1", server.port());
  auto status = client.Get("/v1/models/half");
  ASSERT_TRUE(status);
  EXPECT_THAT(status->body, HasSubstr("AVAILABLE"));
  auto answer =
      client.Post("/v1/models/half:predict", R"({"instances": [[1.0]]})", "application/json");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_THAT(answer->body, HasSubstr("2.5"));
  EXPECT_EQ(server.stop(std::chrono::seconds(1)), 0);
  EXPECT_THAT(served.log, Contains("stopping: draining 0 request(s) in flight"));
  EXPECT_FALSE(httplib::Client("127.0.0.1", server.port()).Get("/v1/models/half"));
}

TEST(ModelServer, AFolderThatServesNothingOrALabelOnAVersionNotLoadedIsRefusedAtStart) {
  Served served;
  try {
    ModelServer server(served.options("typo"), Served::half_plus_two());
    FAIL() << "started without the model's folder";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), served.dir.file("typo"));
    EXPECT_THAT(e.what(), HasSubstr("model typo: no such folder"));
  }
  std::filesystem::create_directories(served.dir.file("empty"));
  EXPECT_THROW(ModelServer(served.options("empty"), Served::half_plus_two()), DataError);
  std::filesystem::create_directories(served.dir.file("half/1"));
  ModelServerOptions labelled = served.options("half");
  labelled.models[0].labels["stable"] = 7;
  try {
    ModelServer server(labelled, Served::half_plus_two());
    FAIL() << "started with a label on no loaded version";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("label \"stable\" names version 7, which is not loaded"));
  }
}

}  // namespace model_server_test
}  // namespace kiln::serving

namespace kiln::serving {
namespace model_server_test {

// A listener that records what the server asks of it and what its gate says then. The server
// names no protocol: this one is its only way in.
class RecordingListener : public Listener {
 public:
  RecordingListener(ServingParts parts, std::vector<std::string>& events)
      : parts_(parts), events_(events) {}
  std::string address() const override { return "fake://1"; }
  int port() const override { return 1; }
  void serve() override {
    std::unique_lock<std::mutex> lock(mutex_);
    serving_ = true;
    woken_.notify_all();
    woken_.wait(lock, [this] { return stopped_; });
  }
  void stop() override {
    std::unique_lock<std::mutex> lock(mutex_);
    woken_.wait(lock, [this] { return serving_; });
    // Stopped after the drain: the gate refuses what would come now.
    events_.push_back(parts_.gate.enter() ? "stop: gate open" : "stop: gate closed");
    stopped_ = true;
    woken_.notify_all();
  }

 private:
  ServingParts parts_;
  std::vector<std::string>& events_;
  std::mutex mutex_;
  std::condition_variable woken_;
  bool serving_ = false, stopped_ = false;
};

TEST(ModelServer, ListenersShareTheTableAndAreStoppedAfterTheDrain) {
  Served served;
  std::filesystem::create_directories(served.dir.file("half/1"));
  std::vector<std::string> events;
  ModelServerOptions options = served.options("half", false);
  options.listeners.push_back([&events](ServingParts parts) -> std::unique_ptr<Listener> {
    events.push_back(parts.table.serves("half") ? "made: half served" : "made: nothing served");
    return std::make_unique<RecordingListener>(parts, events);
  });
  ModelServer server(options, Served::half_plus_two());
  EXPECT_EQ(server.listener_addresses(), std::vector<std::string>{"fake://1"});
  EXPECT_EQ(server.port(), 1);
  server.start();
  EXPECT_EQ(server.stop(std::chrono::seconds(1)), 0);
  EXPECT_EQ(events, (std::vector<std::string>{"made: half served", "stop: gate closed"}));
}

}  // namespace model_server_test
}  // namespace kiln::serving
