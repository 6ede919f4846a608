#include "kiln/board/board_page.h"

#include "kiln/board/board_web.h"
#include "kiln/core/error.h"

namespace kiln::board {
namespace {

// The page of kiln/board/web/: board.html with its CSS and JavaScript put in place of the
// comments that mark where they go, so that the page is one document (as the report must be).
std::string assembled_page() {
  std::string page = embedded::kBoardHtml;
  for (const auto& [mark, text] :
       {std::pair<std::string, const char*>{"/*KILN_CSS*/", embedded::kBoardCss},
        {"/*KILN_JS*/", embedded::kBoardJs}}) {
    size_t at = page.find(mark);
    KILN_ASSERT(at != std::string::npos);
    page.replace(at, mark.size(), text);
  }
  return page;
}

}  // namespace

const std::string& board_page() {
  static const std::string page = assembled_page();
  return page;
}

}  // namespace kiln::board
