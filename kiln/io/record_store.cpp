#include "kiln/io/record_store.h"

#include <glob.h>

#include <cstdio>
#include <optional>

#include "kiln/core/error.h"
#include "kiln/io/tfrecord.h"

namespace kiln::io {
namespace {

// Runs `step`; a DataError propagates unless damaged records are skipped, then it is counted and
// false returned.
template <class Step>
bool attempt(Step step, bool skip_corrupt, int64_t& skipped, std::string& first_problem) {
  try {
    step();
    return true;
  } catch (const DataError& e) {
    if (!skip_corrupt) throw;
    if (skipped++ == 0) first_problem = e.what();
    return false;
  }
}

}  // namespace

std::vector<std::string> expand_file_patterns(const std::vector<std::string>& patterns) {
  std::vector<std::string> paths;
  for (const auto& pattern : patterns) {
    glob_t matches{};
    int status = ::glob(pattern.c_str(), 0, nullptr, &matches);
    for (size_t i = 0; status == 0 && i < matches.gl_pathc; ++i)
      paths.emplace_back(matches.gl_pathv[i]);
    globfree(&matches);
    if (status != 0) throw Error("no file matches \"" + pattern + "\"");
  }
  return paths;
}

ScanSummary scan_records(const RecordStoreOptions& options, const RecordStore::Check& check,
                         const std::function<void(const ScannedRecord&, std::string&)>& keep) {
  ScanSummary summary;
  summary.files = expand_file_patterns(options.patterns);
  bool skip = options.skip_corrupt;
  std::optional<Compression> compression;
  if (options.compression != "auto") compression = parse_compression(options.compression);
  int64_t kept = 0;
  std::string record;
  for (size_t file = 0; file < summary.files.size(); ++file) {
    TfRecordReader reader(summary.files[file], compression);
    if (skip) reader.resynchronize_after_damage();
    while (options.limit == 0 || kept < options.limit) {
      bool more = false;
      if (!attempt([&] { more = reader.next(record); }, skip, summary.skipped,
                   summary.first_problem))
        continue;
      if (!more) break;
      ScannedRecord origin{file, reader.record_index() - 1, reader.record_offset() + 12};
      RecordLocation at{summary.files[file], origin.record, origin.offset};
      if (check &&
          !attempt([&] { check(record, at); }, skip, summary.skipped, summary.first_problem))
        continue;
      keep(origin, record);
      kept += 1;
    }
    summary.skipped_bytes += reader.damaged_bytes();
  }
  if (summary.skipped > 0) {
    // Bytes are worth a mention when framing was lost: more may be gone than the records counted.
    std::string bytes = summary.skipped_bytes > 0
                            ? fmt::format(" ({} damaged bytes passed over)", summary.skipped_bytes)
                            : "";
    std::fprintf(stderr, "kiln: warning: skipped %lld corrupt records%s; the first: %s\n",
                 static_cast<long long>(summary.skipped), bytes.c_str(),
                 summary.first_problem.c_str());
  }
  KILN_CHECK(kept > 0, "{}: the files hold no usable record",
             options.patterns.empty() ? std::string("tfrecord") : options.patterns.front());
  return summary;
}

RecordStore RecordStore::read(const RecordStoreOptions& options, const Check& check) {
  RecordStore store;
  store.summary_ = scan_records(options, check, [&](const ScannedRecord& at, std::string& bytes) {
    store.data_ += bytes;
    store.ends_.push_back(store.data_.size());
    store.origins_.push_back(at);
  });
  return store;
}

std::string_view RecordStore::bytes(int64_t index) const {
  auto i = static_cast<size_t>(index);
  size_t begin = i == 0 ? 0 : ends_[i - 1];
  return std::string_view(data_).substr(begin, ends_[i] - begin);
}

RecordLocation RecordStore::location(int64_t index) const {
  const ScannedRecord& origin = origins_[static_cast<size_t>(index)];
  return {summary_.files[origin.file], origin.record, origin.offset};
}

}  // namespace kiln::io
