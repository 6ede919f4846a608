#include "kiln/engine/train_state.h"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include <mutex>

#include "kiln/core/error.h"

namespace kiln::engine {
namespace {

std::string to_hex(const torch::Tensor& bytes) {
  static const char* digits = "0123456789abcdef";
  torch::Tensor contiguous = bytes.contiguous();
  const auto* data = contiguous.data_ptr<uint8_t>();
  std::string hex;
  hex.reserve(static_cast<size_t>(contiguous.numel()) * 2);
  for (int64_t i = 0; i < contiguous.numel(); ++i) {
    hex += digits[data[i] >> 4];
    hex += digits[data[i] & 15];
  }
  return hex;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

torch::Tensor from_hex(const std::string& hex, const std::string& file) {
  if (hex.size() % 2 != 0) throw DataError(file, -1, -1, "rng state has an odd number of digits");
  torch::Tensor bytes = torch::empty({int64_t(hex.size() / 2)}, torch::kUInt8);
  auto* data = bytes.data_ptr<uint8_t>();
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = hex_digit(hex[i]), low = hex_digit(hex[i + 1]);
    if (high < 0 || low < 0) throw DataError(file, -1, -1, "rng state is not lowercase hex");
    data[i / 2] = static_cast<uint8_t>(high * 16 + low);
  }
  return bytes;
}

std::vector<std::pair<std::string, at::Device>> generator_devices() {
  std::vector<std::pair<std::string, at::Device>> devices = {{"cpu", at::Device(at::kCPU)}};
  for (int64_t i = 0; i < static_cast<int64_t>(torch::cuda::device_count()); ++i)
    devices.emplace_back("cuda:" + std::to_string(i),
                         at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(i)));
  return devices;
}

}  // namespace

Json capture_rng() {
  Json rng = Json::object();
  for (const auto& [name, device] : generator_devices()) {
    at::Generator generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    rng[name] = to_hex(generator.get_state());
  }
  return rng;
}

void restore_rng(const Json& rng, const std::string& file) {
  // Every checkpoint holds the CPU generator's state: without it a resumed run would draw its
  // shuffles and dropout masks from the seed again, and silently differ from the run it continues.
  if (!rng.is_object() || !rng.contains("cpu"))
    throw DataError(file, -1, -1,
                    "train state key \"rng\" lacks the CPU generator's state (\"cpu\"); the "
                    "run cannot continue as it would have");
  for (const auto& [name, device] : generator_devices()) {
    // A checkpoint from a machine without this GPU leaves its generator as seeded.
    if (!rng.contains(name)) continue;
    at::Generator generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    try {
      generator.set_state(from_hex(rng.at(name).get<std::string>(), file));
    } catch (const c10::Error& e) {
      throw DataError(file, -1, -1, "rng state for " + name + " does not fit: " + e.msg());
    }
  }
}

}  // namespace kiln::engine
