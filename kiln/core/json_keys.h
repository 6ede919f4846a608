#pragma once
// Files kiln wrote and reads back (an export's model.yaml, preprocessing.json) may have been
// edited by hand: a key kiln does not know is a misspelling or a part another program expects
// kiln to honour, and is refused rather than silently ignored.
// Thread-safety: pure functions.

#include <string>
#include <vector>

#include "kiln/core/json.h"

namespace kiln {

/// The first key of `object` (in its own order) that is not in `known`; "" when every key is
/// known or `object` is no object.
std::string first_unknown_key(const Json& object, const std::vector<std::string>& known);

/// "\"KEY\" is no key of WHAT (did you mean \"k\"? known: a, b)", or "" when every key of
/// `object` is known.
std::string unknown_key_problem(const Json& object, const std::vector<std::string>& known,
                                const std::string& what);

}  // namespace kiln
