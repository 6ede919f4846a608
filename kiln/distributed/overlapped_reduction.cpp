#include "kiln/distributed/overlapped_reduction.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace kiln::distributed {

struct OverlappedReduction::Bucket {
  std::vector<size_t> members;  // parameter indices, in the order backward reaches them
  // Their gradients, one after another, on the CPU; then one number per member, 1 where this
  // rank has its gradient: summed, it tells a parameter no rank used (it keeps no gradient, as
  // on one process) from one used elsewhere. The last bucket ends with the caller's flag.
  torch::Tensor flat;
  int64_t gradient_elements = 0;
  size_t waiting = 0;  // members whose gradient has not come this step
  c10::intrusive_ptr<c10d::Work> work;
};

OverlappedReduction::OverlappedReduction(int64_t first_bucket_bytes, int64_t bucket_bytes,
                                         Start start, Wait wait)
    : first_bucket_bytes_(first_bucket_bytes),
      bucket_bytes_(bucket_bytes),
      start_(std::move(start)),
      wait_(std::move(wait)) {}

OverlappedReduction::~OverlappedReduction() { uninstall(); }

void OverlappedReduction::install(const std::vector<torch::Tensor>& parameters) {
  uninstall();
  parameters_ = parameters;
  bucket_of_.assign(parameters.size(), 0);
  offset_of_.assign(parameters.size(), 0);
  position_of_.assign(parameters.size(), 0);
  // A bucket closes once it holds at least its size, as PyTorch's DDP does it: a large tensor
  // that comes early in backward (a dense layer near the output) then fills the small first
  // bucket and is exchanged while backward goes on, instead of opening the last bucket.
  int64_t bytes = 0, elements = 0;
  bool full = true;
  for (size_t k = parameters.size(); k-- > 0;) {
    const torch::Tensor& parameter = parameters[k];
    int64_t size = parameter.numel() * int64_t(parameter.element_size());
    if (full ||
        parameters[buckets_.back().members.front()].scalar_type() != parameter.scalar_type()) {
      buckets_.emplace_back();
      bytes = elements = 0;
    }
    bucket_of_[k] = buckets_.size() - 1;
    offset_of_[k] = elements;
    position_of_[k] = buckets_.back().members.size();
    buckets_.back().members.push_back(k);
    bytes += size;
    elements += parameter.numel();
    full = bytes >= (buckets_.size() == 1 ? first_bucket_bytes_ : bucket_bytes_);
  }
  if (buckets_.empty()) buckets_.emplace_back();  // nothing to average: the flag alone
  for (Bucket& bucket : buckets_) {
    for (size_t k : bucket.members) bucket.gradient_elements += parameters[k].numel();
    int64_t total = bucket.gradient_elements + int64_t(bucket.members.size());
    if (&bucket == &buckets_.back()) total += 1;
    torch::ScalarType type =
        bucket.members.empty() ? torch::kFloat32 : parameters[bucket.members.front()].scalar_type();
    bucket.flat = torch::empty({total}, torch::TensorOptions().dtype(type));
  }
  for (size_t k = 0; k < parameters.size(); ++k) {
    std::shared_ptr<torch::autograd::Node> accumulator =
        parameters[k].requires_grad() ? torch::autograd::impl::grad_accumulator(parameters[k])
                                      : nullptr;
    if (!accumulator) continue;  // never gets a gradient: finish() takes it as zeros
    // After the accumulator has added this backward's gradient into .grad: it is final.
    hook_keys_.push_back(
        accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
            [this, k](const torch::autograd::variable_list& outputs,
                      const torch::autograd::variable_list&) {
              ready(k);
              return outputs;
            })));
    accumulators_.push_back(std::move(accumulator));
  }
}

void OverlappedReduction::uninstall() {
  for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(hook_keys_[i]);
  accumulators_.clear();
  hook_keys_.clear();
  buckets_.clear();
  parameters_.clear();
}

void OverlappedReduction::arm(const std::vector<torch::Tensor>& parameters) {
  bool same = parameters.size() == parameters_.size();
  for (size_t k = 0; same && k < parameters.size(); ++k)
    same = parameters[k].unsafeGetTensorImpl() == parameters_[k].unsafeGetTensorImpl();
  if (!same || buckets_.empty()) install(parameters);
  for (Bucket& bucket : buckets_) {
    bucket.waiting = bucket.members.size();
    bucket.work.reset();
  }
  copied_.assign(parameters_.size(), false);
  next_start_ = 0;
  armed_ = true;
}

void OverlappedReduction::ready(size_t parameter) {
  if (!armed_ || copied_[parameter]) return;
  copy_in(parameter);
  start_ready_buckets();
}

void OverlappedReduction::copy_in(size_t parameter) {
  Bucket& bucket = buckets_[bucket_of_[parameter]];
  const torch::Tensor& grad = parameters_[parameter].grad();
  torch::Tensor slice =
      bucket.flat.narrow(0, offset_of_[parameter], parameters_[parameter].numel());
  if (grad.defined())
    slice.copy_(grad.detach().reshape({-1}));
  else
    slice.zero_();
  bucket.flat[bucket.gradient_elements + position_of_[parameter]] = grad.defined() ? 1 : 0;
  copied_[parameter] = true;
  bucket.waiting -= 1;
}

// All but the last bucket, which waits for finish() and the flag.
void OverlappedReduction::start_ready_buckets() {
  while (next_start_ + 1 < buckets_.size() && buckets_[next_start_].waiting == 0) {
    Bucket& bucket = buckets_[next_start_];
    bucket.work = start_(bucket.flat);
    ++next_start_;
  }
}

bool OverlappedReduction::finish(int world_size, bool flag) {
  armed_ = false;
  for (size_t b = next_start_; b < buckets_.size(); ++b)
    for (size_t k : buckets_[b].members)
      if (!copied_[k]) copy_in(k);
  start_ready_buckets();
  Bucket& last = buckets_.back();
  last.flat[last.flat.numel() - 1] = flag ? 1 : 0;
  last.work = start_(last.flat);
  next_start_ = buckets_.size();
  bool flagged = false;
  torch::NoGradGuard no_grad;
  for (Bucket& bucket : buckets_) {
    wait_(bucket.work);
    if (&bucket == &last) flagged = last.flat[last.flat.numel() - 1].item<double>() > 0.5;
    torch::Tensor had_gradient =
        (bucket.flat.narrow(0, bucket.gradient_elements, int64_t(bucket.members.size())) > 0.5)
            .contiguous();
    const bool* used = had_gradient.data_ptr<bool>();
    bucket.flat.div_(world_size);
    for (size_t i = 0; i < bucket.members.size(); ++i) {
      size_t k = bucket.members[i];
      if (!used[i]) continue;  // no rank used it
      torch::Tensor& parameter = parameters_[k];
      torch::Tensor mean = bucket.flat.narrow(0, offset_of_[k], parameter.numel());
      torch::Tensor& grad = parameter.mutable_grad();
      if (grad.defined())
        grad.copy_(mean.view(grad.sizes()));
      else
        grad = mean.view(parameter.sizes())
                   .to(parameter.device(), /*non_blocking=*/false,
                       /*copy=*/true);
    }
  }
  return flagged;
}

std::vector<std::vector<size_t>> OverlappedReduction::bucket_members() const {
  std::vector<std::vector<size_t>> members;
  for (const Bucket& bucket : buckets_) members.push_back(bucket.members);
  return members;
}

}  // namespace kiln::distributed
