#pragma once
// The page of `kiln board`: the runs table (with the filters and sort of `kiln runs`), curves of
// any logged value for the runs ticked (several overlaid; x by step, epoch or wall time;
// smoothing; log scale), and the chosen run's config, notes and summary. It polls the server for
// what metrics.csv gained since its last request, so curves grow while runs train.
// Thread-safety: immutable text.

#include <string>

namespace kiln::board {

const std::string& board_page();

}  // namespace kiln::board
