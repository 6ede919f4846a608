#include "kiln/engine/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/ranges.h>

#include "kiln/core/crc32c.h"
#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/safetensors.h"

namespace kiln::engine {
namespace fs = std::filesystem;
namespace {

constexpr const char* kManifest = "MANIFEST";

std::string dtype_name(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return "F32";
    case torch::kFloat64:
      return "F64";
    case torch::kFloat16:
      return "F16";
    case torch::kBFloat16:
      return "BF16";
    case torch::kInt64:
      return "I64";
    case torch::kInt32:
      return "I32";
    case torch::kInt16:
      return "I16";
    case torch::kInt8:
      return "I8";
    case torch::kUInt8:
      return "U8";
    case torch::kBool:
      return "BOOL";
    default:
      throw InternalError("no safetensors dtype for " + std::string(c10::toString(type)));
  }
}

void fsync_path(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw IoError("open", path, errno);
  int result = ::fsync(fd);
  ::close(fd);
  if (result != 0) throw IoError("fsync", path, errno);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw IoError("write", path, errno);
  fsync_path(path, false);
}

std::string manifest_line(const std::string& name, const std::string& bytes) {
  return fmt::format("{:08x} {} {}\n", crc32c(bytes.data(), bytes.size()), bytes.size(), name);
}

torch::ScalarType scalar_type(const std::string& dtype, const std::string& file) {
  static const std::map<std::string, torch::ScalarType> types = {
      {"F32", torch::kFloat32},   {"F64", torch::kFloat64}, {"F16", torch::kFloat16},
      {"BF16", torch::kBFloat16}, {"I64", torch::kInt64},   {"I32", torch::kInt32},
      {"I16", torch::kInt16},     {"I8", torch::kInt8},     {"U8", torch::kUInt8},
      {"BOOL", torch::kBool}};
  auto it = types.find(dtype);
  if (it == types.end()) throw DataError(file, -1, -1, "unsupported tensor dtype " + dtype);
  return it->second;
}

}  // namespace

torch::Tensor tensor_view(const io::SafeTensor& tensor, const std::string& file) {
  return torch::from_blob(const_cast<uint8_t*>(tensor.data), tensor.shape,
                          scalar_type(tensor.dtype, file));
}

std::map<std::string, torch::Tensor> named_state(const torch::nn::Module& model) {
  std::map<std::string, torch::Tensor> state;
  for (const auto& item : model.named_parameters()) state[item.key()] = item.value();
  for (const auto& item : model.named_buffers()) state[item.key()] = item.value();
  return state;
}

std::string serialize_weights(const torch::nn::Module& model) {
  std::map<std::string, torch::Tensor> state = named_state(model);
  std::vector<torch::Tensor> keep_alive;
  std::vector<io::SafeTensorView> views;
  for (const auto& [name, tensor] : state) {
    keep_alive.push_back(tensor.detach().to(torch::kCPU).contiguous());
    const auto& cpu = keep_alive.back();
    views.push_back({name, dtype_name(cpu.scalar_type()), cpu.sizes().vec(), cpu.data_ptr(),
                     static_cast<size_t>(cpu.numel()) * cpu.element_size()});
  }
  return io::serialize_safetensors(views, {{"format", "pt"}, {"producer", "kiln"}});
}

std::string save_checkpoint(const std::string& checkpoints_dir, const CheckpointContents& c) {
  std::string name = fmt::format("step-{:09d}", c.step);
  std::string final_dir = checkpoints_dir + "/" + name;
  std::string temp_dir = final_dir + ".tmp";
  fs::remove_all(temp_dir);
  fs::create_directories(temp_dir);
  std::vector<std::pair<std::string, std::string>> files = {
      {"model.safetensors", serialize_weights(*c.model)},
      {"train_state.json", c.train_state.dump(2) + "\n"},
      {"config.yaml", c.config_yaml}};
  if (c.optimizer) {
    std::ostringstream optimizer_bytes;
    torch::serialize::OutputArchive archive;
    c.optimizer->save(archive);
    archive.save_to(optimizer_bytes);
    files.emplace_back("optimizer.pt", optimizer_bytes.str());
  }
  std::string manifest;
  for (const auto& [file, bytes] : files) {
    write_file(temp_dir + "/" + file, bytes);
    manifest += manifest_line(file, bytes);
  }
  write_file(temp_dir + "/" + kManifest, manifest);
  fsync_path(temp_dir, true);
  fs::remove_all(final_dir);  // a checkpoint of the same step from an earlier, stopped attempt
  fs::rename(temp_dir, final_dir);
  fsync_path(checkpoints_dir, true);
  write_file_atomic(checkpoints_dir + "/latest", name + "\n");
  return final_dir;
}

std::string find_checkpoint(const std::string& run_dir, const std::string& which) {
  if (which != "last" && which != "best") {
    if (!fs::is_directory(which)) throw UsageError("no checkpoint directory at " + which);
    return which;
  }
  std::string dir = run_dir + "/checkpoints";
  for (const std::string pointer : {which == "best" ? "best" : "latest", "latest"}) {
    if (!fs::exists(dir + "/" + pointer)) continue;
    std::string name = read_text_file(dir + "/" + pointer);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    return dir + "/" + name;
  }
  throw UsageError("run " + run_dir + " has no checkpoint yet (no checkpoints/latest)");
}

void verify_checkpoint(const std::string& checkpoint_dir) {
  std::string manifest_path = checkpoint_dir + "/" + kManifest;
  std::istringstream manifest(read_text_file(manifest_path));
  std::set<std::string> listed;
  std::string line;
  for (int64_t line_number = 0; std::getline(manifest, line); ++line_number) {
    std::istringstream fields(line);
    std::string crc, file;
    size_t size = 0;
    if (!(fields >> crc >> size >> file))
      throw DataError(manifest_path, line_number, -1, "malformed MANIFEST line: " + line);
    if (!fs::is_regular_file(checkpoint_dir + "/" + file))
      throw DataError(manifest_path, line_number, -1,
                      "lists \"" + file + "\", which is missing: the checkpoint is incomplete");
    std::string bytes = io::read_file_bytes(checkpoint_dir + "/" + file);
    if (manifest_line(file, bytes) != line + "\n")
      throw DataError(checkpoint_dir + "/" + file, -1, -1,
                      "checksum or size differs from the MANIFEST: the checkpoint is corrupt");
    listed.insert(file);
  }
  // A MANIFEST that lost lines must not vouch for the files it no longer lists.
  for (const auto& entry : fs::directory_iterator(checkpoint_dir)) {
    std::string name = entry.path().filename().string();
    if (name != kManifest && listed.count(name) == 0)
      throw DataError(entry.path().string(), -1, -1,
                      "is not listed in the MANIFEST: the checkpoint is incomplete or altered");
  }
}

void load_model_weights(const std::string& checkpoint_dir, torch::nn::Module& model) {
  verify_checkpoint(checkpoint_dir);
  std::string path = checkpoint_dir + "/model.safetensors";
  io::SafeTensorsFile file = io::read_safetensors(path);
  std::map<std::string, torch::Tensor> state = named_state(model);
  torch::NoGradGuard no_grad;
  for (const auto& tensor : file.tensors) {
    auto it = state.find(tensor.name);
    if (it == state.end())
      throw DataError(path, -1, -1, "tensor \"" + tensor.name + "\" is not part of this model");
    torch::Tensor source = tensor_view(tensor, path);
    KILN_CHECK(source.sizes() == it->second.sizes(),
               "{}: tensor \"{}\" has shape [{}] but the model expects [{}]", path, tensor.name,
               fmt::join(source.sizes(), ", "), fmt::join(it->second.sizes(), ", "));
    it->second.copy_(source);
    state.erase(it);
  }
  if (!state.empty())
    throw DataError(path, -1, -1, "the checkpoint lacks \"" + state.begin()->first + "\"");
}

}  // namespace kiln::engine
