#pragma once
// The page of `kiln board` (written in kiln/board/web/, docs/observe.md): the runs table (with
// the filters and sort of `kiln runs`), and views of the runs ticked: every logged value as small
// multiples (train and validation of a run in one chart), compare (the configs' differences,
// notes, parallel coordinates), the chosen run's images and histograms, and the studies of
// `kiln tune`. It polls the server for what metrics.csv gained since its last request, so curves
// grow while runs train; its state lives in the address, so a link reopens a view.
// Thread-safety: immutable text.

#include <string>

namespace kiln::board {

const std::string& board_page();

}  // namespace kiln::board
