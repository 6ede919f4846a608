#include "kiln/distributed/rendezvous.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "kiln/core/error.h"

namespace kiln::distributed {
namespace rendezvous_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

Environment environment(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

std::string error_of(std::map<std::string, std::string> variables) {
  try {
    rendezvous_from(environment(std::move(variables)));
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Rendezvous, NoJobVariablesMeanAProcessTrainingAlone) {
  EXPECT_FALSE(rendezvous_from(environment({{"HOME", "/root"}, {"MASTER_PORT", "1"}})));
}

TEST(Rendezvous, ReadsTorchrunsVariables) {
  std::optional<Rendezvous> job = rendezvous_from(environment({{"RANK", "3"},
                                                               {"WORLD_SIZE", "4"},
                                                               {"LOCAL_RANK", "1"},
                                                               {"LOCAL_WORLD_SIZE", "2"},
                                                               {"GROUP_RANK", "1"},
                                                               {"MASTER_ADDR", "node0"},
                                                               {"MASTER_PORT", "29400"}}));
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "torchrun");
  EXPECT_EQ(job->rank, 3);
  EXPECT_EQ(job->world_size, 4);
  EXPECT_EQ(job->local_rank, 1);
  EXPECT_EQ(job->local_world_size, 2);
  EXPECT_EQ(job->node_rank, 1);
  EXPECT_EQ(job->master_addr, "node0");
  EXPECT_EQ(job->master_port, 29400);
}

TEST(Rendezvous, UnderTorchrunsAgentEveryRankIsAClientOfItsStore) {
  std::map<std::string, std::string> agent = {{"RANK", "0"},
                                              {"WORLD_SIZE", "2"},
                                              {"MASTER_PORT", "29500"},
                                              {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                              {"TORCHELASTIC_RESTART_COUNT", "3"}};
  std::optional<Rendezvous> job = rendezvous_from(environment(agent));
  ASSERT_TRUE(job);
  EXPECT_TRUE(job->agent_store);
  EXPECT_EQ(job->store_prefix, "/worker/attempt_3");
  agent.erase("TORCHELASTIC_RESTART_COUNT");
  EXPECT_THAT(error_of(agent), HasSubstr("TORCHELASTIC_RESTART_COUNT is not set"));
  agent["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  EXPECT_FALSE(rendezvous_from(environment(agent))->agent_store);
}

TEST(Rendezvous, AWorldOfOneNeedsNoStore) {
  std::optional<Rendezvous> job =
      rendezvous_from(environment({{"RANK", "0"}, {"WORLD_SIZE", "1"}}));
  ASSERT_TRUE(job);
  EXPECT_EQ(job->world_size, 1);
  EXPECT_EQ(job->master_addr, "127.0.0.1");
}

TEST(Rendezvous, MalformedTorchrunVariablesAreNamed) {
  EXPECT_THAT(error_of({{"RANK", "1"}}), HasSubstr("RANK is set but WORLD_SIZE is not"));
  EXPECT_THAT(error_of({{"RANK", "one"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}),
              AllOf(HasSubstr("RANK=one"), HasSubstr("not a whole number")));
  EXPECT_THAT(error_of({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}),
              HasSubstr("rank 2 (RANK) is not below the world size 2 (WORLD_SIZE)"));
  EXPECT_THAT(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
              AllOf(HasSubstr("WORLD_SIZE=0"), HasSubstr("at least 1")));
  EXPECT_THAT(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}}), HasSubstr("MASTER_PORT is not set"));
  EXPECT_THAT(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}),
              HasSubstr("a port is at most 65535"));
  EXPECT_THAT(error_of({{"RANK", "-1"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}),
              HasSubstr("RANK=-1"));
  EXPECT_THAT(error_of({{"RANK", "0"},
                        {"WORLD_SIZE", "2"},
                        {"MASTER_PORT", "1"},
                        {"LOCAL_RANK", "2"},
                        {"LOCAL_WORLD_SIZE", "2"}}),
              HasSubstr("local rank 2 is not below the ranks on this machine, 2"));
}

TEST(Rendezvous, ReadsASlurmStepsTasks) {
  std::optional<Rendezvous> job =
      rendezvous_from(environment({{"SLURM_STEP_ID", "0"},
                                   {"SLURM_PROCID", "5"},
                                   {"SLURM_NTASKS", "8"},
                                   {"SLURM_LOCALID", "1"},
                                   {"SLURM_NODEID", "2"},
                                   {"SLURM_TASKS_PER_NODE", "4(x2)"},
                                   {"SLURM_JOB_NODELIST", "gpu[003-004],cpu9"}}));
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "slurm");
  EXPECT_EQ(job->rank, 5);
  EXPECT_EQ(job->world_size, 8);
  EXPECT_EQ(job->local_rank, 1);
  EXPECT_EQ(job->local_world_size, 4);
  EXPECT_EQ(job->node_rank, 2);
  EXPECT_EQ(job->master_addr, "gpu003");
  EXPECT_EQ(job->master_port, 29500);
}

TEST(Rendezvous, SlurmsBatchScriptIsNoTaskAndTorchrunInsideSlurmWins) {
  EXPECT_FALSE(rendezvous_from(environment({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}})));
  std::optional<Rendezvous> job = rendezvous_from(environment({{"SLURM_STEP_ID", "0"},
                                                               {"SLURM_PROCID", "0"},
                                                               {"SLURM_NTASKS", "1"},
                                                               {"RANK", "1"},
                                                               {"WORLD_SIZE", "2"},
                                                               {"MASTER_PORT", "1234"}}));
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "torchrun");
  EXPECT_EQ(job->rank, 1);
}

TEST(Rendezvous, FirstSlurmHostKeepsTheNumbersZeros) {
  EXPECT_EQ(first_slurm_host("node[07-09,12],gpu1"), "node07");
  EXPECT_EQ(first_slurm_host("node[12]"), "node12");
  EXPECT_EQ(first_slurm_host("alpha,beta"), "alpha");
  EXPECT_EQ(first_slurm_host("solo"), "solo");
}

TEST(Rendezvous, ATensorFlowClusterRanksTheChiefFirstThenTheWorkers) {
  std::string cluster =
      R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host0:2223"],
          "ps": ["host3:2222"]}, "environment": "cloud", )";
  std::optional<Rendezvous> worker = rendezvous_from(
      environment({{"TF_CONFIG", cluster + R"("task": {"type": "worker", "index": 1}})"}}));
  ASSERT_TRUE(worker);
  EXPECT_EQ(worker->source, "TF_CONFIG");
  EXPECT_EQ(worker->rank, 2);
  EXPECT_EQ(worker->world_size, 3);
  EXPECT_EQ(worker->master_addr, "host0");
  EXPECT_EQ(worker->master_port, 2222);
  // host0 runs the chief and this worker: they share its cores.
  EXPECT_EQ(worker->local_rank, 1);
  EXPECT_EQ(worker->local_world_size, 2);
  std::optional<Rendezvous> chief = rendezvous_from(
      environment({{"TF_CONFIG", cluster + R"("task": {"type": "chief", "index": 0}})"}}));
  EXPECT_EQ(chief->rank, 0);
}

TEST(Rendezvous, AClusterWithoutAChiefHasWorkerZeroAsRankZeroAndMasterIsTheChief) {
  std::optional<Rendezvous> job = rendezvous_from(environment(
      {{"TF_CONFIG", R"({"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker"}})"}}));
  ASSERT_TRUE(job);
  EXPECT_EQ(job->rank, 0);
  EXPECT_EQ(job->master_addr, "a");
  std::optional<Rendezvous> master = rendezvous_from(environment(
      {{"TF_CONFIG",
        R"({"cluster": {"master": ["m:9"], "worker": ["w:1"]}, "task": {"type": "worker"}})"}}));
  EXPECT_EQ(master->rank, 1);
  EXPECT_EQ(master->master_addr, "m");
}

TEST(Rendezvous, ParameterServersEvaluatorsAndMalformedClustersAreRefused) {
  std::string cluster = R"({"cluster": {"worker": ["a:1"], "ps": ["p:2"]}, )";
  EXPECT_THAT(error_of({{"TF_CONFIG", cluster + R"("task": {"type": "ps", "index": 0}})"}}),
              AllOf(HasSubstr("this task is a ps"), HasSubstr("no parameter servers")));
  EXPECT_THAT(error_of({{"TF_CONFIG", cluster + R"("task": {"type": "evaluator"}})"}}),
              HasSubstr("this task is an evaluator"));
  EXPECT_THAT(error_of({{"TF_CONFIG", cluster + R"("task": {"type": "worker", "index": 3}})"}}),
              HasSubstr("task worker 3 is not in the cluster, which has 1 worker(s)"));
  EXPECT_THAT(error_of({{"TF_CONFIG", cluster + R"("task": {"type": "boss"}})"}}),
              HasSubstr("\"boss\" is none of chief, master, worker"));
  EXPECT_THAT(error_of({{"TF_CONFIG", "{not json"}}), HasSubstr("TF_CONFIG is not JSON"));
  EXPECT_THAT(error_of({{"TF_CONFIG", "[]"}}), HasSubstr("must be a JSON object"));
  EXPECT_THAT(error_of({{"TF_CONFIG", R"({"cluster": {"worker": ["nohost"]},
                                           "task": {"type": "worker"}})"}}),
              HasSubstr("\"nohost\", not HOST:PORT"));
  EXPECT_THAT(error_of({{"TF_CONFIG", R"({"cluster": {"worker": "a:1"},
                                           "task": {"type": "worker"}})"}}),
              HasSubstr("cluster.worker must be a list"));
  EXPECT_THAT(error_of({{"TF_CONFIG", R"({"cluster": {"chief": ["a:1"], "master": ["b:1"]},
                                           "task": {"type": "chief"}})"}}),
              HasSubstr("at most one chief"));
  EXPECT_THAT(error_of({{"TF_CONFIG", R"({"cluster": {"worker": ["a:1"]}, "task": {}})"}}),
              HasSubstr("task.type must name"));
  EXPECT_THAT(error_of({{"TF_CONFIG", R"({"cluster": {"worker": ["a:1"]},
                                           "task": {"type": "worker", "index": -1}})"}}),
              HasSubstr("task.index must be a whole number from 0"));
}

}  // namespace rendezvous_test
}  // namespace kiln::distributed
