#include "tests/support/run_files.h"

#include <httplib.h>

#include <fstream>
#include <sstream>

#include "tests/support/run_command.h"

namespace kiln::testing {

std::string read_file(const std::string& path) {
  std::ostringstream bytes;
  bytes << std::ifstream(path, std::ios::binary).rdbuf();
  return bytes.str();
}

std::string run_dir_of(const std::string& train_output) {
  if (train_output.rfind("run: ", 0) != 0) return "";
  return train_output.substr(5, train_output.find('\n') - 5);
}

std::string latest_checkpoint(const std::string& run) {
  std::string name = read_file(run + "/checkpoints/latest");
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  return run + "/checkpoints/" + name;
}

std::string validation_rows(const std::string& run) {
  std::istringstream in(read_file(run + "/metrics.csv"));
  std::string line, rows;
  while (std::getline(in, line))
    if (line.find(",val,") != std::string::npos) rows += line.substr(0, line.rfind(',')) + "\n";
  return rows;
}

std::vector<Json> json_lines(const std::string& text) {
  std::vector<Json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  return lines;
}

int served_port(ChildProcess& server) { return served_ports(server).rest; }

ServedPorts served_ports(ChildProcess& server) {
  const std::string rest = "listening on 127.0.0.1:", grpc = "grpc://127.0.0.1:";
  ServedPorts ports;
  for (std::string line; server.read_line(line);) {
    if (size_t at = line.find(grpc); at != std::string::npos)
      ports.grpc = std::stoi(line.substr(at + grpc.size()));
    if (size_t at = line.find(rest); at != std::string::npos) {
      ports.rest = std::stoi(line.substr(at + rest.size()));
      break;
    }
  }
  return ports;
}

std::pair<std::string, int> interrupt(const std::string& command, int lines, int signal) {
  ChildProcess child(command);
  std::string line, run;
  for (int i = 0; i < lines && child.read_line(line); ++i)
    if (line.rfind("run: ", 0) == 0) run = line.substr(5);
  child.signal(signal);
  return {run, child.wait()};
}

std::pair<int, std::string> post_json(int port, const std::string& path, const Json& body) {
  httplib::Client client("127.0.0.1", port);
  httplib::Result answer = client.Post(path, body.dump(), "application/json");
  return answer ? std::make_pair(answer->status, answer->body) : std::make_pair(0, "");
}

std::pair<int, std::string> get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  httplib::Result answer = client.Get(path);
  return answer ? std::make_pair(answer->status, answer->body) : std::make_pair(0, "");
}

CommandResult grpc_vs_rest(const ServedPorts& ports, const std::string& model,
                           const std::string& examples, const std::string& instances) {
  return run_command(std::string("/usr/bin/python3 ") + KILN_SOURCE_DIR +
                     "/tests/grpc/grpc_vs_rest.py --grpc 127.0.0.1:" + std::to_string(ports.grpc) +
                     " --rest 127.0.0.1:" + std::to_string(ports.rest) + " --model " + model +
                     " --examples " + examples +
                     (instances.empty() ? "" : " --instances " + instances));
}

}  // namespace kiln::testing
