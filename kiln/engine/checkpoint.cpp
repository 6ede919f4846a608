#include "kiln/engine/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <fmt/ranges.h>

#include "kiln/core/crc32c.h"
#include "kiln/core/error.h"
#include "kiln/core/remove_tree.h"
#include "kiln/core/text_file.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/manifest.h"
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

NamedTensors named_state(const torch::nn::Module& model) {
  NamedTensors state;
  for (const auto& item : model.named_parameters()) state[item.key()] = item.value();
  for (const auto& item : model.named_buffers()) state[item.key()] = item.value();
  return state;
}

std::string serialize_tensors(const NamedTensors& tensors) {
  std::vector<torch::Tensor> keep_alive;
  std::vector<io::SafeTensorView> views;
  for (const auto& [name, tensor] : tensors) {
    keep_alive.push_back(tensor.detach().to(torch::kCPU).contiguous());
    const auto& cpu = keep_alive.back();
    views.push_back({name, dtype_name(cpu.scalar_type()), cpu.sizes().vec(), cpu.data_ptr(),
                     static_cast<size_t>(cpu.numel()) * cpu.element_size()});
  }
  return io::serialize_safetensors(views, {{"format", "pt"}, {"producer", "kiln"}});
}

std::string serialize_weights(const torch::nn::Module& model) {
  return serialize_tensors(named_state(model));
}

void CheckpointFileSystem::write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw IoError("write", path, errno);
  fsync_path(path, false);
}

void CheckpointFileSystem::make_directory(const std::string& path) { fs::create_directories(path); }

void CheckpointFileSystem::sync_directory(const std::string& path) { fsync_path(path, true); }

void CheckpointFileSystem::rename(const std::string& from, const std::string& to) {
  fs::rename(from, to);
}

void CheckpointFileSystem::remove_all(const std::string& path) { remove_tree(path); }

CheckpointFileSystem& real_file_system() {
  static CheckpointFileSystem real;
  return real;
}

void write_pointer(const std::string& checkpoints_dir, const std::string& pointer,
                   const std::string& name, CheckpointFileSystem& fs) {
  std::string path = checkpoints_dir + "/" + pointer;
  fs.write(path + ".tmp", name + "\n");
  fs.rename(path + ".tmp", path);
}

std::string save_checkpoint(const std::string& checkpoints_dir, const CheckpointContents& c,
                            CheckpointFileSystem& fs) {
  std::string name = fmt::format("step-{:09d}", c.step);
  std::string final_dir = checkpoints_dir + "/" + name;
  std::string temp_dir = final_dir + ".tmp";
  fs.remove_all(temp_dir);
  fs.make_directory(temp_dir);
  std::vector<std::pair<std::string, std::string>> files = {
      {"model.safetensors", serialize_weights(*c.model)},
      {kTrainStateFile, c.train_state.dump(2) + "\n"},
      {"config.yaml", c.config_yaml}};
  if (!c.inputs.is_null()) files.emplace_back("inputs.json", c.inputs.dump(2) + "\n");
  if (c.optimizer) {
    std::ostringstream optimizer_bytes;
    torch::serialize::OutputArchive archive;
    c.optimizer->save(archive);
    archive.save_to(optimizer_bytes);
    files.emplace_back("optimizer.pt", optimizer_bytes.str());
  }
  for (const auto& [stem, tensors] : c.tensor_files)
    files.emplace_back(stem + ".safetensors", serialize_tensors(tensors));
  std::string manifest;
  for (const auto& [file, bytes] : files) {
    fs.write(temp_dir + "/" + file, bytes);
    manifest += io::manifest_line(file, bytes);
  }
  fs.write(temp_dir + "/" + kManifest, manifest);
  fs.sync_directory(temp_dir);
  fs.remove_all(final_dir);  // a checkpoint of the same step from an earlier, stopped attempt
  fs.rename(temp_dir, final_dir);
  fs.sync_directory(checkpoints_dir);
  write_pointer(checkpoints_dir, "latest", name, fs);
  return final_dir;
}

std::vector<std::string> checkpoint_directories(const std::string& checkpoints_dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  if (fs::is_directory(checkpoints_dir))
    for (const auto& entry : fs::directory_iterator(checkpoints_dir)) {
      int64_t step = checkpoint_step(entry.path().string());
      if (step >= 0 && entry.is_directory()) found.emplace_back(step, entry.path().string());
    }
  std::sort(found.begin(), found.end());
  std::vector<std::string> dirs;
  for (auto& item : found) dirs.push_back(std::move(item.second));
  return dirs;
}

namespace {

// The directory a pointer file (latest, best) names; "" when there is no pointer.
std::string pointed_to(const std::string& checkpoints_dir, const std::string& pointer) {
  // With an error code: a pointer linked to itself is not "absent" but unreadable, which reading
  // it then says as a kiln error naming the file (std::filesystem threw before).
  std::error_code error;
  if (!fs::exists(checkpoints_dir + "/" + pointer, error) && !error) return "";
  std::string name = read_text_line(checkpoints_dir + "/" + pointer);
  return name.empty() ? "" : checkpoints_dir + "/" + name;
}

// The problem verify_checkpoint finds in `dir`, or "" when it passes.
std::string verification_problem(const std::string& dir) {
  try {
    verify_checkpoint(dir);
    return "";
  } catch (const Error& e) {
    return e.what();
  } catch (const fs::filesystem_error& e) {
    return e.what();
  }
}

// The newest checkpoint at or before `newest_step` that passes verification.
std::string newest_valid(const std::string& checkpoints_dir, int64_t newest_step,
                         std::vector<std::string>& warnings) {
  auto dirs = checkpoint_directories(checkpoints_dir);
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    if (checkpoint_step(*it) > newest_step) continue;
    std::string problem = verification_problem(*it);
    if (problem.empty()) return *it;
    warnings.push_back("skipping checkpoint " + *it + ": " + problem);
  }
  return "";
}

// Saving the step `latest` names again (a finished run after its final validation) removes the
// old directory before renaming the new one in; a crash between the two leaves the new one
// complete under its temporary name. Finishing that rename recovers it.
void finish_interrupted_replace(const std::string& latest) {
  std::string temporary = latest + ".tmp";
  std::error_code error;
  if (fs::is_directory(latest, error) || !fs::is_directory(temporary, error)) return;
  if (verification_problem(temporary).empty()) fs::rename(temporary, latest);
}

}  // namespace

std::string find_checkpoint(const std::string& run_dir, const std::string& which,
                            std::vector<std::string>* warnings_out) {
  if (which != "last" && which != "best") {
    if (!fs::is_directory(which)) throw UsageError("no checkpoint directory at " + which);
    return which;
  }
  std::string dir = run_dir + "/checkpoints";
  std::vector<std::string> warnings;
  std::string found;
  if (which == "best") {
    std::string best = pointed_to(dir, "best");
    std::string problem = best.empty() ? "" : verification_problem(best);
    if (!best.empty() && problem.empty()) found = best;
    if (!problem.empty())
      warnings.push_back("skipping the best checkpoint " + best + ": " + problem +
                         "; using the last one");
  }
  if (found.empty()) {
    std::string latest = pointed_to(dir, "latest");
    if (!latest.empty()) finish_interrupted_replace(latest);
    std::error_code error;
    if (!latest.empty() && !fs::is_directory(latest, error))
      warnings.push_back("checkpoints/latest names " + latest +
                         ", which is missing; using the newest checkpoint before it");
    // Without a pointer (a crash before the first one was written) any complete checkpoint
    // counts; with one, checkpoints after it belong to a write that never finished.
    int64_t newest = latest.empty() ? INT64_MAX : checkpoint_step(latest);
    found = newest_valid(dir, newest < 0 ? INT64_MAX : newest, warnings);
  }
  for (const auto& warning : warnings) {
    if (warnings_out)
      warnings_out->push_back(warning);
    else
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  if (found.empty() && !warnings.empty())
    throw Error("run " + run_dir + " has no valid checkpoint; " + warnings.front());
  if (found.empty()) throw UsageError("run " + run_dir + " has no checkpoint yet");
  return found;
}

void verify_manifest(const std::string& folder, const std::string& kind) {
  std::string manifest_path = folder + "/" + kManifest;
  std::set<std::string> listed;
  int64_t line_number = 0;
  for (const io::ManifestEntry& entry :
       io::parse_manifest(read_text_file(manifest_path), manifest_path)) {
    std::string file = folder + "/" + entry.file;
    std::error_code error;
    if (!fs::exists(fs::symlink_status(file, error)))
      throw DataError(
          manifest_path, line_number, -1,
          "lists \"" + entry.file + "\", which is missing: the " + kind + " is incomplete");
    // A FIFO, or a link to a device (/dev/zero), where the file was is damage, not an absence.
    if (!fs::is_regular_file(fs::status(file, error)))
      throw DataError(file, -1, -1,
                      "is not a regular file (a FIFO, a device, or a link to one or to "
                      "nothing): the " +
                          kind + " is damaged");
    // The size first: a file of the wrong size is not read whole to learn that it differs.
    bool same = fs::file_size(file) == entry.size;
    if (same) {
      std::string bytes = io::read_file_bytes(file);
      same = crc32c(bytes.data(), bytes.size()) == entry.crc;
    }
    if (!same)
      throw DataError(file, -1, -1,
                      "checksum or size differs from the MANIFEST: the " + kind + " is corrupt");
    listed.insert(entry.file);
    line_number += 1;
  }
  // A MANIFEST that lost lines must not vouch for the files it no longer lists.
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::string name = entry.path().filename().string();
    if (name != kManifest && listed.count(name) == 0)
      throw DataError(entry.path().string(), -1, -1,
                      "is not listed in the MANIFEST: the " + kind + " is incomplete or altered");
  }
}

void verify_checkpoint(const std::string& checkpoint_dir) {
  verify_manifest(checkpoint_dir, "checkpoint");
}

namespace {

std::string count_of(int64_t count, const char* one, const char* more) {
  return fmt::format("{} {}", count, count == 1 ? one : more);
}

}  // namespace

void copy_weights_from(const std::string& path, torch::nn::Module& model) {
  io::SafeTensorsFile file = io::read_safetensors(path);
  NamedTensors state = named_state(model);
  torch::NoGradGuard no_grad;
  for (const auto& tensor : file.tensors) {
    auto it = state.find(tensor.name);
    if (it == state.end())
      throw DataError(path, -1, -1, "tensor \"" + tensor.name + "\" is not part of this model");
    torch::Tensor source = tensor_view(tensor, path);
    KILN_CHECK(source.sizes() == it->second.sizes(),
               "{}: tensor \"{}\" has shape [{}] but the model expects [{}]", path, tensor.name,
               fmt::join(source.sizes(), ", "), fmt::join(it->second.sizes(), ", "));
    // Another dtype of the same size would be read as this one's bits (F32 taken for I32).
    if (source.scalar_type() != it->second.scalar_type())
      throw DataError(path, -1, -1,
                      fmt::format("tensor \"{}\" is {}, but the model's is {}", tensor.name,
                                  c10::toString(source.scalar_type()),
                                  c10::toString(it->second.scalar_type())));
    // A weight of inf or NaN answers NaN to every input; training never saves one.
    if (source.is_floating_point() && !torch::isfinite(source).all().item<bool>())
      throw DataError(path, -1, -1,
                      fmt::format("tensor \"{}\" holds {} not finite (inf or NaN)", tensor.name,
                                  count_of((~torch::isfinite(source)).sum().item<int64_t>(),
                                           "value that is", "values that are")));
    it->second.copy_(source);
    state.erase(it);
  }
  if (!state.empty())
    throw DataError(path, -1, -1, "the checkpoint lacks \"" + state.begin()->first + "\"");
}

void load_model_weights(const std::string& checkpoint_dir, torch::nn::Module& model) {
  verify_checkpoint(checkpoint_dir);
  copy_weights_from(checkpoint_dir + "/model.safetensors", model);
}

std::string load_evaluation_weights(const std::string& checkpoint_dir, torch::nn::Module& model) {
  verify_checkpoint(checkpoint_dir);
  std::string ema = checkpoint_dir + "/ema.safetensors";
  std::string path = fs::exists(ema) ? ema : checkpoint_dir + "/model.safetensors";
  copy_weights_from(path, model);
  return path;
}

namespace {

// Where the optimizer's parameters live, or nothing for an optimizer without any.
std::optional<torch::Device> parameter_device(const torch::optim::Optimizer& optimizer) {
  for (const auto& group : optimizer.param_groups())
    if (!group.params().empty()) return group.params().front().device();
  return std::nullopt;
}

}  // namespace

void load_optimizer_state(const std::string& checkpoint_dir, torch::optim::Optimizer& optimizer) {
  std::string path = checkpoint_dir + "/optimizer.pt";
  if (!fs::exists(path)) throw DataError(path, -1, -1, "missing: the checkpoint has no optimizer");
  try {
    torch::serialize::InputArchive archive;
    // The state (momenta, second moments) goes where the parameters are, not where it was saved:
    // a checkpoint written on CUDA resumes on the CPU and the other way round.
    if (std::optional<torch::Device> device = parameter_device(optimizer))
      archive.load_from(path, *device);
    else
      archive.load_from(path);
    optimizer.load(archive);
  } catch (const c10::Error& e) {
    throw DataError(path, -1, -1, "does not fit this optimizer: " + e.msg());
  } catch (const std::exception& e) {  // LibTorch's reader of damaged bytes throws others too
    throw DataError(path, -1, -1,
                    std::string("is not an optimizer state LibTorch can read: ") + e.what());
  }
}

NamedTensors read_tensor_file(const std::string& path) {
  io::SafeTensorsFile file = io::read_safetensors(path);
  NamedTensors tensors;
  for (const auto& tensor : file.tensors) tensors[tensor.name] = tensor_view(tensor, path).clone();
  return tensors;
}

}  // namespace kiln::engine
