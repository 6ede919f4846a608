#pragma once
// What end-to-end tests read from a kiln run directory, and how they interrupt a `kiln train` at
// a moment its own output marks.

#include <string>
#include <utility>
#include <vector>

#include "kiln/core/json.h"

namespace kiln::testing {

class ChildProcess;
struct CommandResult;

/// A whole file's bytes ("" when missing).
std::string read_file(const std::string& path);

/// The run directory from `kiln train`'s `run: DIR` first line.
std::string run_dir_of(const std::string& train_output);

/// The checkpoint directory checkpoints/latest names.
std::string latest_checkpoint(const std::string& run);

/// metrics.csv's validation rows without their wall time, to compare runs.
std::string validation_rows(const std::string& run);

/// Each line of JSON lines text (`kiln predict`'s output), parsed.
std::vector<Json> json_lines(const std::string& text);

/// The port of a `kiln serve` started with --port 0, read from its output up to the line that
/// names it; 0 when the server ended first.
int served_port(ChildProcess& server);
/// The same, with the port of its gRPC API too (0 when it names none).
struct ServedPorts {
  int rest = 0, grpc = 0;
};
ServedPorts served_ports(ChildProcess& server);

/// The status and body of a JSON POST to `path` of the kiln serve at `port`; status 0 when no
/// answer came.
std::pair<int, std::string> post_json(int port, const std::string& path, const Json& body);
/// GET `path` at 127.0.0.1:`port`: the status and the body; status 0 when no answer came.
std::pair<int, std::string> get(int port, const std::string& path);

/// tests/grpc/grpc_vs_rest.py, from Python stubs generated from the repository's protos, against
/// the REST API of `model` at the same server: status and metadata; Classify of `examples` (a JSON
/// file of raw-feature examples) against :classify; and with `instances` (a JSON lines file),
/// Predict of them against :predict.
CommandResult grpc_vs_rest(const ServedPorts& ports, const std::string& model,
                           const std::string& examples, const std::string& instances = "");

/// Starts `command`, reads `lines` lines of its output, then sends `signal`; returns the run
/// directory its `run:` line named and its exit code.
std::pair<std::string, int> interrupt(const std::string& command, int lines, int signal);

}  // namespace kiln::testing
