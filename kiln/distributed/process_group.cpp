#include "kiln/distributed/process_group.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "kiln/core/error.h"

// Defined by the CMakeLists where LibTorch's Gloo process group cannot be compiled: a LibTorch
// from pip ships ProcessGroupGloo.hpp without the Gloo headers it includes.
#ifdef KILN_WITHOUT_GLOO

namespace kiln::distributed {

std::shared_ptr<Context> join_process_group(const Rendezvous& job, const ProcessGroupOptions&) {
  throw Error(fmt::format(
      "rank {} of {}: this kiln was built against a LibTorch without Gloo's headers (a pip "
      "LibTorch ships none), so it cannot train on several processes; build it with them "
      "(docs/gpu.md)",
      job.rank, job.world_size));
}

}  // namespace kiln::distributed

#else

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "kiln/distributed/overlapped_reduction.h"

namespace kiln::distributed {
namespace {

// The address of this machine that its packets to `host` leave from: a UDP socket "connected"
// there (which sends nothing) is bound by the kernel's routing to that interface's address.
std::string local_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &found) != 0) return "";
  std::string address;
  for (addrinfo* at = found; at && address.empty(); at = at->ai_next) {
    int fd = ::socket(at->ai_family, SOCK_DGRAM, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (::connect(fd, at->ai_addr, at->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0) {
      char text[INET6_ADDRSTRLEN] = {};
      const void* raw =
          local.ss_family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
      if (::inet_ntop(local.ss_family, raw, text, sizeof text)) address = text;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return address;
}

std::shared_ptr< ::gloo::transport::Device> gloo_device(const Rendezvous& job,
                                                        const ProcessGroupOptions& options) {
  std::string interface = options.interface;
  if (interface.empty())
    if (const char* named = std::getenv("GLOO_SOCKET_IFNAME")) interface = named;
  if (!interface.empty()) return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  std::string address = local_address_towards(job.master_addr);
  if (!address.empty()) return c10d::ProcessGroupGloo::createDeviceForHostname(address);
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

c10d::ReduceOp reduce_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return c10d::ReduceOp::MAX;
    case ReduceOp::kMin:
      return c10d::ReduceOp::MIN;
    default:
      return c10d::ReduceOp::SUM;
  }
}

class ProcessGroupContext : public Context {
 public:
  ProcessGroupContext(const Rendezvous& job, const ProcessGroupOptions& options,
                      c10::intrusive_ptr<c10d::ProcessGroupGloo> group)
      : job_(job), options_(options), group_(std::move(group)) {}

  int rank() const override { return job_.rank; }
  int world_size() const override { return job_.world_size; }

  void prepare_gradient_reduction(const std::vector<torch::Tensor>& parameters) override {
    if (options_.overlap) reduction().arm(parameters);
  }

  // Without overlap (or a backward it was not told of), the same buckets all start now.
  bool reduce_gradients(const std::vector<torch::Tensor>& parameters, bool flag) override {
    if (!reduction().armed()) reduction().arm(parameters);
    return reduction().finish(job_.world_size, flag);
  }

  void all_reduce(std::vector<double>& values, ReduceOp op) override {
    if (values.empty()) return;
    std::vector<torch::Tensor> tensors = {torch::tensor(values, torch::kFloat64)};
    c10d::AllreduceOptions reduce;
    reduce.reduceOp = reduce_op(op);
    run("an all-reduce", [&] { return group_->allreduce(tensors, reduce); });
    const double* reduced = tensors[0].data_ptr<double>();
    values.assign(reduced, reduced + values.size());
  }

  std::vector<std::vector<double> > all_gather(const std::vector<double>& values) override {
    // The lengths first, then every rank's values padded to the longest.
    std::vector<int64_t> lengths = gather_lengths(int64_t(values.size()));
    int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    torch::Tensor mine = torch::zeros({std::max<int64_t>(longest, 1)}, torch::kFloat64);
    if (!values.empty())
      mine.narrow(0, 0, int64_t(values.size())).copy_(torch::tensor(values, torch::kFloat64));
    std::vector<torch::Tensor> gathered = gather(mine);
    std::vector<std::vector<double> > out;
    for (int r = 0; r < job_.world_size; ++r) {
      const double* data = gathered[size_t(r)].data_ptr<double>();
      out.emplace_back(data, data + lengths[size_t(r)]);
    }
    return out;
  }

  std::string broadcast(const std::string& text) override {
    std::vector<torch::Tensor> length = {torch::tensor({int64_t(text.size())}, torch::kInt64)};
    run("a broadcast", [&] { return group_->broadcast(length); });
    torch::Tensor bytes =
        torch::zeros({std::max<int64_t>(length[0].item<int64_t>(), 1)}, torch::kUInt8);
    if (job_.rank == 0 && !text.empty())
      std::memcpy(bytes.data_ptr<uint8_t>(), text.data(), text.size());
    std::vector<torch::Tensor> tensors = {bytes};
    run("a broadcast", [&] { return group_->broadcast(tensors); });
    return std::string(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()),
                       size_t(length[0].item<int64_t>()));
  }

  void broadcast_tensors(std::vector<torch::Tensor>& tensors) override {
    for (torch::Tensor& tensor : tensors) {
      torch::NoGradGuard no_grad;
      std::vector<torch::Tensor> host = {tensor.detach().to(torch::kCPU).contiguous()};
      run("the broadcast of rank 0's weights", [&] { return group_->broadcast(host); });
      if (job_.rank != 0) tensor.copy_(host[0]);
    }
  }

 private:
  std::vector<int64_t> gather_lengths(int64_t length) {
    std::vector<torch::Tensor> gathered = gather(torch::tensor({length}, torch::kInt64));
    std::vector<int64_t> lengths;
    for (const torch::Tensor& t : gathered) lengths.push_back(t.item<int64_t>());
    return lengths;
  }

  std::vector<torch::Tensor> gather(torch::Tensor mine) {
    std::vector<std::vector<torch::Tensor> > outputs(1);
    for (int r = 0; r < job_.world_size; ++r) outputs[0].push_back(torch::empty_like(mine));
    std::vector<torch::Tensor> inputs = {mine};
    run("an all-gather", [&] { return group_->allgather(outputs, inputs); });
    return outputs[0];
  }

  template <typename Start>
  c10::intrusive_ptr<c10d::Work> collective(const std::string& what, Start start) {
    try {
      return start();
    } catch (const std::exception& e) {
      throw failed(what, e.what());
    }
  }
  void finish(const std::string& what, const c10::intrusive_ptr<c10d::Work>& work) {
    try {
      work->wait(options_.timeout);
    } catch (const std::exception& e) {
      throw failed(what, e.what());
    }
  }
  template <typename Start>
  void run(const std::string& what, Start start) {
    finish(what, collective(what, start));
  }

  Error failed(const std::string& what, const std::string& why) const {
    std::string reason = why.substr(0, why.find('\n'));
    return Error(
        fmt::format("rank {} of {}: {} failed: {} (another rank has stopped, or is slower than the "
                    "{} s timeout)",
                    job_.rank, job_.world_size, what, reason,
                    std::chrono::duration_cast<std::chrono::seconds>(options_.timeout).count()));
  }

  Rendezvous job_;
  ProcessGroupOptions options_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
  OverlappedReduction& reduction() {
    if (!reduction_)
      reduction_ = std::make_unique<OverlappedReduction>(
          options_.first_bucket_bytes, options_.bucket_bytes,
          [this](torch::Tensor& flat) {
            std::vector<torch::Tensor> tensors = {flat};
            return collective("the all-reduce of gradients",
                              [&] { return group_->allreduce(tensors); });
          },
          [this](const c10::intrusive_ptr<c10d::Work>& work) {
            finish("the all-reduce of gradients", work);
          });
    return *reduction_;
  }

  std::unique_ptr<OverlappedReduction> reduction_;  // made at the first step that asks for it
};

}  // namespace

std::shared_ptr<Context> join_process_group(const Rendezvous& job,
                                            const ProcessGroupOptions& options) {
  std::string where = fmt::format("{}:{}", job.master_addr, job.master_port);
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(job.master_port);
    store_options.isServer = job.rank == 0 && !job.agent_store;
    store_options.numWorkers = static_cast<size_t>(job.world_size);
    store_options.waitWorkers = true;
    store_options.timeout = options.timeout;
    c10::intrusive_ptr<c10d::Store> store =
        c10::make_intrusive<c10d::TCPStore>(job.master_addr, store_options);
    if (!job.store_prefix.empty())
      store = c10::make_intrusive<c10d::PrefixStore>(job.store_prefix, store);
    auto gloo = c10d::ProcessGroupGloo::Options::create(options.timeout);
    gloo->devices.push_back(gloo_device(job, options));
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, job.rank, job.world_size, gloo);
    return std::make_shared<ProcessGroupContext>(job, options, std::move(group));
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw Error(
        fmt::format("rank {} of {} could not meet the other ranks at {} ({}) within {} s: {}",
                    job.rank, job.world_size, where, job.source,
                    std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count(),
                    why.substr(0, why.find('\n'))));
  }
}

}  // namespace kiln::distributed

#endif  // KILN_WITHOUT_GLOO
