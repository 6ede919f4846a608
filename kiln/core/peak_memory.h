#pragma once
// How much memory this process has used at most (system/peak_rss_mb, kiln bench).

namespace kiln {

/// The largest resident set this process has had, in MiB.
double peak_resident_mb();

}  // namespace kiln
