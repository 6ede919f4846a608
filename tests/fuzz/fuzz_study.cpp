// A study's study.db as `kiln tune --resume`, `kiln tune show` and the board read it back: the
// bytes of an SQLite file (damaged, or edited with sqlite3) opened and every trial read. Any bytes
// give the study or a kiln::Error naming the file; never a crash, a hang, or a trial that indexes
// past the others.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/core/error.h"
#include "kiln/tune/study.h"
#include "temp_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // SQLite's files beside a database (a WAL-mode one leaves two) belong to the input before.
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    std::remove((kiln::fuzz::write_temp_file("") + suffix).c_str());
  const std::string& path =
      kiln::fuzz::write_temp_file(std::string(reinterpret_cast<const char*>(data), size));
  try {
    kiln::tune::Study study = kiln::tune::Study::open(path, 0);
    kiln::tune::StudyInfo info = study.info();
    std::vector<kiln::tune::TrialRecord> trials = study.trials();
    for (size_t i = 0; i < trials.size(); ++i)
      if (trials[i].number != int64_t(i)) std::abort();
    kiln::tune::trial_views(trials, info.maximize);
  } catch (const kiln::Error&) {
  }
  return 0;
}
