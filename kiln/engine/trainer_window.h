#pragma once
// The trainer's bookkeeping between log lines (TrainerWindow, its Window) and within one
// optimizer step (StepGroup, its Group), shared by trainer.cpp (the loop, logging) and
// trainer_step.cpp (one step). Private to the trainer: include it from those two files only.

#include <torch/torch.h>

#include <cstdint>

namespace kiln::engine {

struct TrainerWindow {
  int64_t steps = 0, samples = 0;
  double started = 0;
  // Seconds of the window's training time spent waiting for the loader, in forward, in backward,
  // exchanging gradients with the other ranks, in the optimizer's update and in the callbacks
  // after each step (train/time/...).
  double data_wait = 0, forward = 0, backward = 0, communication = 0, optimizer = 0, callbacks = 0;
  // Of the gradient norms read back so far (settle_through), and how many.
  double grad_norm_sum = 0;
  int64_t norms = 0;
  torch::Tensor penalty_sum;  // over the steps that updated the weights; read when logged
  int64_t updates = 0;
};

struct StepGroup {
  int64_t size = 1;     // batches in this group
  int64_t batches = 0;  // taken so far
  int64_t samples = 0;
  torch::Tensor loss;        // the sum of its batches' losses, on the device (undefined: none)
  int64_t loss_batches = 0;  // the batches in it: those with rows
  double forward = 0, backward = 0;  // seconds, over the group's batches
  torch::Tensor penalty;  // the regularization added to the step's loss; undefined without
};

}  // namespace kiln::engine
