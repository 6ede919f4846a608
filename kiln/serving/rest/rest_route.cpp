#include "kiln/serving/rest/rest_route.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

// Reads the path from its start, keywords matched whatever their case.
class PathReader {
 public:
  explicit PathReader(std::string path) : path_(std::move(path)) {}
  bool done() const { return at_ == path_.size(); }
  /// Takes `word` (lower case) if the path goes on with it.
  bool take(const std::string& word) {
    if (path_.size() - at_ < word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(path_[at_ + i])) != word[i]) return false;
    at_ += word.size();
    return true;
  }
  /// Takes the characters up to the next '/' or ':' (a name: at least one).
  std::optional<std::string> take_name() {
    size_t end = path_.find_first_of("/:", at_);
    if (end == std::string::npos) end = path_.size();
    if (end == at_) return std::nullopt;
    std::string name = path_.substr(at_, end - at_);
    at_ = end;
    return name;
  }
  /// Takes a run of digits (at least one).
  std::optional<std::string> take_digits() {
    size_t end = at_;
    while (end < path_.size() && std::isdigit(static_cast<unsigned char>(path_[end]))) ++end;
    if (end == at_) return std::nullopt;
    std::string digits = path_.substr(at_, end - at_);
    at_ = end;
    return digits;
  }

 private:
  std::string path_;
  size_t at_ = 0;
};

ServingError malformed(const std::string& method, const std::string& path) {
  return ServingError(StatusCode::kInvalidArgument, "Malformed request: " + method + " " + path);
}

int64_t version_number(const std::string& digits) {
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(digits.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0')
    throw ServingError(StatusCode::kInvalidArgument, "Failed to convert version: " + digits);
  return value;
}

// `/versions/N` or `/labels/L`, if the path goes on with one; false when it goes on with
// neither, or with one that does not read.
bool take_version_or_label(PathReader& reader, Route& route) {
  if (reader.take("/versions/")) {
    auto digits = reader.take_digits();
    if (!digits) return false;
    route.version = version_number(*digits);
  } else if (reader.take("/labels/")) {
    route.label = reader.take_name();
    if (!route.label) return false;
  }
  return true;
}

}  // namespace

Route parse_route(const std::string& method, const std::string& full_path) {
  std::string path = full_path.substr(0, full_path.find('?'));
  bool get = method == "GET", post = method == "POST";
  PathReader reader(path);
  if ((!get && !post) || !reader.take("/v1/models")) throw malformed(method, path);
  if (get && reader.done())
    throw ServingError(StatusCode::kInvalidArgument, "Missing model name in request.");
  Route route;
  std::optional<std::string> model;
  if (!reader.take("/") || !(model = reader.take_name())) throw malformed(method, path);
  route.model = *model;
  if (!take_version_or_label(reader, route)) throw malformed(method, path);
  if (get) {
    route.kind = reader.take("/metadata") ? RouteKind::kMetadata : RouteKind::kStatus;
  } else if (reader.take(":predict")) {
    route.kind = RouteKind::kPredict;
  } else if (reader.take(":classify")) {
    route.kind = RouteKind::kClassify;
  } else if (reader.take(":regress")) {
    route.kind = RouteKind::kRegress;
  } else {
    throw malformed(method, path);
  }
  if (!reader.done()) throw malformed(method, path);
  return route;
}

}  // namespace kiln::serving
