#pragma once
// The one reader of TorchScript files (torch.jit.save's zip archives): a served version's
// model.pt and a trained module (`model: {type: torchscript, file: net.pt}`). The file is read
// whole, as a regular file of bounded size, before LibTorch parses it from memory: a FIFO is
// refused by name rather than waited on. Thread-safety: a function of its arguments.

#include <torch/script.h>

#include <string>

namespace kiln::models {

/// The module saved in `path`, on `device`; a DataError naming `path` when it is missing, no
/// regular file, or not a TorchScript archive LibTorch reads.
torch::jit::Module read_torchscript(const std::string& path, torch::Device device);

/// What went wrong in a scripted module's code, in a line: the interpreter's message
/// ("RuntimeError: mat1 and mat2 shapes cannot be multiplied ...") rather than its first line,
/// which only says that an operation failed.
std::string script_error_text(const std::exception& error);

/// The module as torch.jit.save would write it: the bytes of a TorchScript archive.
std::string torchscript_bytes(const torch::jit::Module& module);

}  // namespace kiln::models
