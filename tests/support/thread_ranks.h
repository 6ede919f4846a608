#pragma once
// Fake process groups for tests of what several processes do together. ThreadRanks runs the
// ranks of a job as threads of the test process that meet in memory: its collectives really
// combine what each rank brings (the mean of gradients, sums, gathers, rank 0's broadcast), so a
// test sees ranks agree or diverge as real processes would. LoneRank is one rank of a larger job
// whose other ranks always bring the same as it: every collective returns its own input.
// Thread-safety: ThreadRanks' contexts are used from one thread per rank; collectives are called
// in the same order by every rank.

#include <torch/torch.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/distributed/context.h"

namespace kiln::testing {

class ThreadRanks {
 public:
  explicit ThreadRanks(int world) : world_(world), slots_(static_cast<size_t>(world)) {}

  /// The context of rank `rank`, which `counter` (when given) counts gradient reductions of.
  std::shared_ptr<distributed::Context> context(int rank, int* gradient_reductions = nullptr) {
    return std::make_shared<Rank>(*this, rank, gradient_reductions);
  }

  /// How many times the ranks have met (collectives of every kind), so far.
  int64_t meetings() {
    std::lock_guard<std::mutex> lock(mutex_);
    return round_;
  }

 private:
  class Rank : public distributed::Context {
   public:
    Rank(ThreadRanks& group, int rank, int* reductions)
        : group_(group), rank_(rank), reductions_(reductions) {}
    int rank() const override { return rank_; }
    int world_size() const override { return group_.world_; }

    // As the process group does it: a missing gradient counts as zeros, and one that no rank
    // has stays missing; the flag travels with the gradients.
    bool reduce_gradients(const std::vector<torch::Tensor>& parameters, bool flag) override {
      if (reductions_) ++*reductions_;
      torch::NoGradGuard no_grad;
      std::vector<double> flat, used;
      for (const torch::Tensor& parameter : parameters) {
        const torch::Tensor& g = parameter.grad();
        used.push_back(g.defined() ? 1 : 0);
        // Through host memory, as the ranks meet there: a CUDA gradient comes to the CPU first.
        torch::Tensor values = (g.defined() ? g : torch::zeros_like(parameter))
                                   .to(torch::kCPU, torch::kFloat64)
                                   .contiguous()
                                   .view(-1);
        flat.insert(flat.end(), values.data_ptr<double>(),
                    values.data_ptr<double>() + values.numel());
      }
      flat.insert(flat.end(), used.begin(), used.end());
      flat.push_back(flag ? 1 : 0);
      all_reduce(flat, distributed::ReduceOp::kSum);
      size_t next = 0, flags = flat.size() - 1 - parameters.size();
      for (size_t k = 0; k < parameters.size(); ++k) {
        torch::Tensor parameter = parameters[k];
        torch::Tensor mean =
            torch::from_blob(flat.data() + next, {parameter.numel()}, torch::kFloat64) /
            group_.world_;
        next += static_cast<size_t>(parameter.numel());
        if (flat[flags + k] == 0) continue;
        torch::Tensor& g = parameter.mutable_grad();
        if (g.defined())
          g.copy_(mean.view(g.sizes()));
        else
          g = mean.view(parameter.sizes()).to(parameter.options());
      }
      return flat.back() > 0;
    }
    void all_reduce(std::vector<double>& values, distributed::ReduceOp op) override {
      std::vector<std::vector<double>> all = group_.exchange(rank_, values);
      for (size_t i = 0; i < values.size(); ++i) {
        values[i] = all[0][i];
        for (size_t r = 1; r < all.size(); ++r) values[i] = combine(values[i], all[r][i], op);
      }
    }
    std::vector<std::vector<double>> all_gather(const std::vector<double>& values) override {
      return group_.exchange(rank_, values);
    }
    std::string broadcast(const std::string& text) override {
      std::vector<double> codes(text.begin(), text.end());
      std::vector<double> first = group_.exchange(rank_, codes)[0];
      return std::string(first.begin(), first.end());
    }

   private:
    static double combine(double a, double b, distributed::ReduceOp op) {
      if (op == distributed::ReduceOp::kSum) return a + b;
      return op == distributed::ReduceOp::kMax ? std::max(a, b) : std::min(a, b);
    }
    ThreadRanks& group_;
    int rank_;
    int* reductions_;
  };

  // Every rank's `mine`, by rank, once all ranks have brought theirs.
  std::vector<std::vector<double>> exchange(int rank, std::vector<double> mine) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !draining_; });  // the last round's readers are done
    int64_t round = round_;
    slots_[static_cast<size_t>(rank)] = std::move(mine);
    if (++arrived_ == world_) {
      result_ = slots_;
      draining_ = true;
      readers_left_ = world_;
      ++round_;
      changed_.notify_all();
    } else {
      changed_.wait(lock, [&] { return round_ != round; });
    }
    std::vector<std::vector<double>> out = result_;
    if (--readers_left_ == 0) {
      draining_ = false;
      arrived_ = 0;
      changed_.notify_all();
    }
    return out;
  }

  int world_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<double>> slots_, result_;
  int arrived_ = 0, readers_left_ = 0;
  int64_t round_ = 0;
  bool draining_ = false;
};

/// Rank `rank` of a job of `world` processes whose others always bring what this one does.
class LoneRank : public distributed::Context {
 public:
  LoneRank(int rank, int world) : rank_(rank), world_(world) {}
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }

 private:
  int rank_, world_;
};

}  // namespace kiln::testing
