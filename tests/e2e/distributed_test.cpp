// End-to-end: data-parallel training on c10d (Gloo over loopback TCP) with the real binary.
// `kiln launch --nproc 2` trains one run with each worker's lines prefixed by its rank; 2 ranks of
// batch B reach the weights of 1 process of batch 2B (deterministic; no batch norm, or one
// synchronized across the ranks) and validate to the same values over a validation set that
// does not split evenly; a worker killed with
// SIGKILL stops the job with a message naming it, and `--max-restarts 1` finishes the job from
// the last checkpoint with the weights of an uninterrupted run; a launcher killed with SIGKILL,
// or sent SIGTERM twice, leaves its workers to checkpoint and stop; two processes given a TF_CONFIG
// cluster train together, and so do two ranks started by torchrun's own agent (scripts/torchrun)
// and two ranks on two hosts made of network namespaces.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>

#include "kiln/core/folder_lock.h"
#include "kiln/core/json.h"
#include "kiln/io/safetensors.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using testing::latest_checkpoint;
using ::testing::Not;
using testing::read_file;
using testing::validation_rows;

// Rank 1's log line of `step`: "[rank 1] DATE TIME [ELAPSED elapsed, ETA LEFT] step N ...".
bool is_step_of_rank_one(const std::string& line, int64_t step) {
  return line.rfind("[rank 1] ", 0) == 0 &&
         line.find("] step " + std::to_string(step) + " ") != std::string::npos;
}

// 16 steps of 32 examples per epoch, 3 epochs; validation over 255 examples (127 and 128 on two
// ranks) every epoch; a checkpoint every epoch. No dropout and no batch norm: what each rank
// computes is then a function of its examples alone.
constexpr const char* kConfig = R"(version: 1
name: ddp_check
seed: 5
data:
  train: {type: synthetic, task: curve, function: sin, size: 512, noise: 0.1, seed: 1}
  val: {type: synthetic, task: curve, function: sin, size: 255, noise: 0.1, seed: 2}
  batch_size: 32
model: {type: mlp, num_classes: 1, hidden: [32, 32], activation: tanh}
loss: mse
metrics: [mae]
optimizer: {type: adamw, lr: 1.0e-2}
train: {max: 3 epochs, validate_every: 1 epoch, log_every: 4 steps, deterministic: true}
callbacks:
  - {type: checkpoint, every: 1 epoch, keep_last: 3}
runtime: {threads: 1}
)";

std::string kiln_binary() { return KILN_BINARY; }

class Distributed : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = dir_.path() + "/ddp.yaml";
    std::ofstream(config_) << kConfig;
  }

  std::string launch(const std::string& runs, const std::string& flags = "") {
    return kiln_binary() + " launch --nproc 2 " + flags + " -- train " + config_ + " --runs-root " +
           dir_.path() + "/" + runs;
  }

  testing::TempDir dir_;
  std::string config_;
};

// The run folder a launched job's rank 0 named.
std::string launched_run(const std::string& output) {
  std::smatch found;
  if (!std::regex_search(output, found, std::regex(R"(\[rank 0\] run: (\S+))"))) return "";
  return found[1];
}

// The largest difference between the tensors of two checkpoints' model.safetensors.
double weight_difference(const std::string& checkpoint_a, const std::string& checkpoint_b) {
  io::SafeTensorsFile a = io::read_safetensors(checkpoint_a + "/model.safetensors");
  io::SafeTensorsFile b = io::read_safetensors(checkpoint_b + "/model.safetensors");
  EXPECT_EQ(a.tensors.size(), b.tensors.size());
  double largest = 0;
  for (const io::SafeTensor& tensor : a.tensors) {
    const io::SafeTensor* other = b.find(tensor.name);
    EXPECT_TRUE(other && other->size == tensor.size) << tensor.name;
    if (!other || other->size != tensor.size) return INFINITY;
    if (tensor.dtype != "F32") {  // a batch norm's count of batches: equal or not
      if (std::memcmp(tensor.data, other->data, tensor.size) != 0) return INFINITY;
      continue;
    }
    const float* x = reinterpret_cast<const float*>(tensor.data);
    const float* y = reinterpret_cast<const float*>(other->data);
    for (size_t i = 0; i < tensor.size / sizeof(float); ++i)
      largest = std::max(largest, double(std::abs(x[i] - y[i])));
  }
  return largest;
}

// metrics.csv's validation values as numbers, row by row (its step and value).
std::vector<std::vector<double>> validation_values(const std::string& run) {
  std::vector<std::vector<double>> rows;
  std::istringstream lines(validation_rows(run));
  for (std::string line; std::getline(lines, line);) {
    std::vector<double> row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) {
      try {
        row.push_back(std::stod(cell));
      } catch (const std::exception&) {
      }
    }
    rows.push_back(row);
  }
  return rows;
}

TEST_F(Distributed, TwoRanksOfHalfTheBatchTrainAsOneProcessAndValidateTheSame) {
  testing::CommandResult one = testing::run_command(kiln_binary() + " train " + config_ +
                                                    " --runs-root " + dir_.path() + "/one");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  testing::CommandResult two = testing::run_command(launch("two"));
  ASSERT_EQ(two.exit_code, 0) << two.out << two.err;
  // Each worker's lines, stamped with their time (and elapsed time and ETA once training).
  EXPECT_THAT(two.out, ContainsRegex("\\[rank 1\\] [-0-9]+ [0-9:]+ \\[[^]\n]*\\] step 4 "));
  EXPECT_THAT(two.out, ContainsRegex("\\[rank 0\\] [-0-9]+ [0-9:]+ model: "));
  std::string run = launched_run(two.out);
  ASSERT_FALSE(run.empty()) << two.out;
  EXPECT_EQ(run, [&] {
    std::smatch found;
    std::regex_search(two.out, found, std::regex(R"(\[rank 1\] run: (\S+))"));
    return std::string(found[1]);
  }());
  std::string single = testing::run_dir_of(one.out);
  EXPECT_LT(weight_difference(latest_checkpoint(single), latest_checkpoint(run)), 1e-6);
  std::vector<std::vector<double>> alone = validation_values(single),
                                   ranks = validation_values(run);
  ASSERT_EQ(alone.size(), 6u);  // 3 validations of loss and mae
  ASSERT_EQ(ranks.size(), alone.size());
  for (size_t i = 0; i < alone.size(); ++i) {
    ASSERT_EQ(ranks[i].size(), alone[i].size());
    for (size_t k = 0; k < alone[i].size(); ++k)
      EXPECT_NEAR(ranks[i][k], alone[i][k], 1e-6 * std::max(1.0, std::abs(alone[i][k])));
  }
  // Only rank 0 wrote: one metrics file with each validation once.
  EXPECT_EQ(run.find(dir_.path() + "/two/ddp_check/"), 0u);
}

// Starts a launch, kills rank 1 with SIGKILL once it has logged step 20 (in epoch 2, after a
// checkpoint), and returns the launcher's whole output and exit code.
std::pair<std::string, int> kill_rank_one(const std::string& command) {
  testing::ChildProcess job(command + " 2>&1");
  std::string output, line;
  pid_t rank_one = -1;
  while (job.read_line(line)) {
    output += line + "\n";
    std::smatch found;
    if (rank_one < 0 && std::regex_search(line, found, std::regex(R"(rank 1 pid (\d+))")))
      rank_one = std::stoi(found[1]);
    if (is_step_of_rank_one(line, 20)) {
      EXPECT_GT(rank_one, 0);
      ::kill(rank_one, SIGKILL);
      break;
    }
  }
  while (job.read_line(line)) output += line + "\n";
  return {output, job.wait()};
}

// A batch norm (after a layer without bias, and with SGD: Adam would blow rounding up where a
// gradient is zero in exact arithmetic, as a bias before a batch norm's is), 16 steps. The single
// process synchronizes too, with itself: its statistics are then computed as the ranks' are.
TEST_F(Distributed, TwoRanksWithSynchronizedBatchNormTrainAsOneProcessOfTheWholeBatch) {
  std::string config = kConfig;
  auto replace = [&](const std::string& from, const std::string& to) {
    config.replace(config.find(from), from.size(), to);
  };
  replace("model: {type: mlp, num_classes: 1, hidden: [32, 32], activation: tanh}",
          "model: {type: sequential, layers: [{type: linear, out: 32}, tanh, {type: linear, out: "
          "32, bias: false}, batchnorm, tanh, {type: linear, out: 1}]}");
  replace("optimizer: {type: adamw, lr: 1.0e-2}", "optimizer: {type: sgd, lr: 0.02}");
  replace("max: 3 epochs", "max: 1 epoch");
  std::ofstream(config_) << config;
  std::string synchronized = " --set runtime.distributed.sync_batch_norm=true";
  testing::CommandResult one = testing::run_command(
      kiln_binary() + " train " + config_ + " --runs-root " + dir_.path() + "/one" + synchronized);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  testing::CommandResult two = testing::run_command(launch("two") + synchronized);
  ASSERT_EQ(two.exit_code, 0) << two.out << two.err;
  EXPECT_THAT(two.out, HasSubstr("[rank 0] batch norm: 1 layer(s) normalize by the statistics of "
                                 "all 2 rank(s)"));
  std::string single = latest_checkpoint(testing::run_dir_of(one.out));
  EXPECT_LT(weight_difference(single, latest_checkpoint(launched_run(two.out))), 1e-6);
  // Without it, each rank's batch norm sees only its half: the weights go another way.
  testing::CommandResult apart = testing::run_command(launch("apart"));
  ASSERT_EQ(apart.exit_code, 0) << apart.out << apart.err;
  EXPECT_GT(weight_difference(single, latest_checkpoint(launched_run(apart.out))), 1e-4);
}

TEST_F(Distributed, AKilledWorkerStopsTheJobNamingIt) {
  auto [output, status] = kill_rank_one(launch("killed"));
  EXPECT_EQ(status, 128 + SIGKILL) << output;
  std::smatch named;
  EXPECT_TRUE(
      std::regex_search(output, named, std::regex(R"(rank 1 \(pid \d+\) was killed by signal 9)")))
      << output;
  EXPECT_THAT(output, HasSubstr("kiln launch: the job failed (status 137)"));
}

TEST_F(Distributed, AKilledLauncherLeavesItsWorkersToCheckpointAndStop) {
  testing::ChildProcess job(launch("orphaned") + " --set 'train.max=100000 steps' 2>&1");
  std::string line, run;
  while (job.read_line(line) && !is_step_of_rank_one(line, 20))
    if (run.empty()) run = launched_run(line);
  ASSERT_FALSE(run.empty());
  job.signal(SIGKILL);
  EXPECT_EQ(job.wait(), 128 + SIGKILL);
  // The workers get SIGTERM as their launcher dies: rank 0 saves a checkpoint, and both end.
  bool stopped = FolderLock::wait_until_free(run, std::chrono::minutes(1));
  if (!stopped) {  // leave no worker behind: rank 0 holds the run folder
    int holder = std::atoi(FolderLock::holder(run).value_or("0").c_str());
    if (holder > 0) ::kill(holder, SIGKILL);
  }
  ASSERT_TRUE(stopped) << "the workers trained on without their launcher";
  Json record = Json::parse(read_file(run + "/run.json"));
  EXPECT_EQ(record["status"], "stopped");
  EXPECT_FALSE(latest_checkpoint(run).empty());
}

// A scheduler's SIGTERM (and a dying parent's, one per thread) may come twice: the second must
// not turn the clean stop into a kill.
TEST_F(Distributed, ASecondSigtermToTheLauncherStillLetsTheWorkersSave) {
  testing::ChildProcess job(launch("twice") + " --set 'train.max=100000 steps' 2>&1");
  std::string line, run, output;
  while (job.read_line(line) && !is_step_of_rank_one(line, 20))
    if (run.empty()) run = launched_run(line);
  job.signal(SIGTERM);
  while (job.read_line(line) && line.find("passing it to the workers") == std::string::npos) {
  }
  job.signal(SIGTERM);
  while (job.read_line(line)) output += line + "\n";
  EXPECT_EQ(job.wait(), 128 + SIGTERM) << output;
  EXPECT_THAT(output, Not(HasSubstr("killing the workers")));
  EXPECT_EQ(Json::parse(read_file(run + "/run.json"))["status"], "stopped") << output;
  EXPECT_FALSE(latest_checkpoint(run).empty());
}

TEST_F(Distributed, MaxRestartsFinishesTheJobWithTheWeightsOfAnUninterruptedOne) {
  testing::CommandResult straight = testing::run_command(launch("straight"));
  ASSERT_EQ(straight.exit_code, 0) << straight.out << straight.err;
  auto [output, status] = kill_rank_one(launch("restarted", "--max-restarts 1"));
  ASSERT_EQ(status, 0) << output;
  EXPECT_THAT(output, HasSubstr("restarting the workers (1 of 1 restarts): kiln train --resume"));
  EXPECT_THAT(output, HasSubstr("attempt 2 of 2"));
  EXPECT_THAT(output, HasSubstr("resumed from"));
  std::string run = launched_run(output);
  EXPECT_EQ(
      weight_difference(latest_checkpoint(launched_run(straight.out)), latest_checkpoint(run)),
      0.0);
  EXPECT_EQ(validation_rows(run), validation_rows(launched_run(straight.out)));
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  socklen_t length = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST_F(Distributed, TwoTasksOfATensorFlowClusterTrainTogether) {
  int port = free_port();
  std::string cluster = "{\"cluster\": {\"chief\": [\"127.0.0.1:" + std::to_string(port) +
                        "\"], \"worker\": [\"127.0.0.1:" + std::to_string(port + 1) + "\"]}, ";
  auto task = [&](const std::string& type, const std::string& log) {
    return "TF_CONFIG='" + cluster + "\"task\": {\"type\": \"" + type + "\", \"index\": 0}}' " +
           kiln_binary() + " train " + config_ + " --runs-root " + dir_.path() +
           "/tf --set 'train.max=1 epoch' > " + dir_.path() + "/" + log + " 2>&1";
  };
  testing::CommandResult both = testing::run_command(
      "(" + task("worker", "worker.log") + "; echo $? > " + dir_.path() + "/worker.status) & " +
      task("chief", "chief.log") + "; chief=$?; wait; exit $chief");
  std::string chief = read_file(dir_.path() + "/chief.log");
  ASSERT_EQ(both.exit_code, 0) << chief << read_file(dir_.path() + "/worker.log");
  EXPECT_EQ(read_file(dir_.path() + "/worker.status"), "0\n")
      << read_file(dir_.path() + "/worker.log");
  // Each rank reads half of the 512 examples per epoch, in 16 steps of 16.
  EXPECT_THAT(chief, HasSubstr("512 training examples, 16 steps per epoch"));
  EXPECT_EQ(testing::run_dir_of(chief),
            testing::run_dir_of(read_file(dir_.path() + "/worker.log")));
}

// Two Linux network namespaces joined by a veth pair, each with an address of its own: two hosts
// on this machine, which a rank reaches only over TCP through the pair.
class TwoHosts {
 public:
  TwoHosts() : prefix_("kiln" + std::to_string(::getpid())) {
    std::string a = prefix_ + "a", b = prefix_ + "b", va = prefix_ + "va", vb = prefix_ + "vb";
    std::string commands[] = {"ip netns add " + a,
                              "ip netns add " + b,
                              "ip link add " + va + " type veth peer name " + vb,
                              "ip link set " + va + " netns " + a,
                              "ip link set " + vb + " netns " + b,
                              "ip -n " + a + " addr add " + address(0) + "/24 dev " + va,
                              "ip -n " + b + " addr add " + address(1) + "/24 dev " + vb,
                              "ip -n " + a + " link set " + va + " up",
                              "ip -n " + b + " link set " + vb + " up",
                              "ip -n " + a + " link set lo up",
                              "ip -n " + b + " link set lo up"};
    for (const std::string& command : commands) {
      testing::CommandResult result = testing::run_command(command + " 2>&1");
      if (result.exit_code != 0) {
        problem_ = command + ": " + result.out;
        return;
      }
    }
  }
  ~TwoHosts() {
    testing::run_command("ip netns del " + prefix_ + "a 2>/dev/null; ip netns del " + prefix_ +
                         "b 2>/dev/null");
  }
  const std::string& problem() const { return problem_; }
  std::string address(int host) const { return host == 0 ? "10.231.7.1" : "10.231.7.2"; }
  std::string run_in(int host, const std::string& command) const {
    return "ip netns exec " + prefix_ + (host == 0 ? "a " : "b ") + command;
  }

 private:
  std::string prefix_, problem_;
};

TEST_F(Distributed, TwoHostsOfNetworkNamespacesTrainOverTcpAsOneProcessDoes) {
  TwoHosts hosts;
  if (!hosts.problem().empty())
    GTEST_SKIP() << "network namespaces are not permitted here: " << hosts.problem();
  std::string run = dir_.path() + "/hosts/run";
  auto rank = [&](int r) {
    return hosts.run_in(
        r, "env RANK=" + std::to_string(r) + " WORLD_SIZE=2 MASTER_ADDR=" + hosts.address(0) +
               " MASTER_PORT=29555 KILN_RUN_DIR=" + run + " " + kiln_binary() + " train " +
               config_ + " > " + dir_.path() + "/host" + std::to_string(r) + ".log 2>&1");
  };
  testing::CommandResult both =
      testing::run_command("(" + rank(1) + "; echo $? > " + dir_.path() + "/host1.status) & " +
                           rank(0) + "; status=$?; wait; exit $status");
  ASSERT_EQ(both.exit_code, 0) << read_file(dir_.path() + "/host0.log");
  ASSERT_EQ(read_file(dir_.path() + "/host1.status"), "0\n")
      << read_file(dir_.path() + "/host1.log");
  testing::CommandResult one = testing::run_command(kiln_binary() + " train " + config_ +
                                                    " --runs-root " + dir_.path() + "/one");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_LT(
      weight_difference(latest_checkpoint(testing::run_dir_of(one.out)), latest_checkpoint(run)),
      1e-6);
}

TEST_F(Distributed, TorchrunsAgentStartsTheRanks) {
  if (testing::run_command("/usr/bin/python3 -c 'import torch.distributed.run' 2>&1").exit_code)
    GTEST_SKIP() << "no python3-torch: torchrun is not installed";
  testing::CommandResult result = testing::run_command(
      std::string(KILN_SOURCE_DIR) + "/scripts/torchrun --nproc_per_node 2 --master_port " +
      std::to_string(free_port()) + " --no_python " + kiln_binary() + " train " + config_ +
      " --runs-root " + dir_.path() + "/torchrun --set 'train.max=1 epoch' 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.out;
  std::regex run_line(R"(run: (\S+))");
  std::vector<std::string> runs;
  for (std::sregex_iterator at(result.out.begin(), result.out.end(), run_line), end; at != end;
       ++at)
    runs.push_back((*at)[1]);
  ASSERT_EQ(runs.size(), 2u) << result.out;
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_THAT(result.out, HasSubstr("512 training examples, 16 steps per epoch"));
  EXPECT_THAT(result.out, HasSubstr("step 16 "));
}

}  // namespace
}  // namespace kiln
