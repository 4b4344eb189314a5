// SPDX-License-Identifier: Apache-2.0
// Fuzz target: `genie report DIR` reading genie-report.json (render_html). The input is the report. Whatever
// the bytes, rendering returns a page or a Status naming the file (no exception escapes, no crash on any
// type or value); a page is whole (doctype to </html>) with its three charts, and every string of the input
// is escaped: the page holds exactly the one inline script the renderer writes.
#include <cstddef>
#include <cstdint>

#include "fuzz_check.hpp"
#include "genie/sched/report.hpp"

extern "C" {
size_t genie_fuzz_accepted = 0;
}

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = genie::sched::render_html_text(genie::fuzz::text_of(data, size), "fuzz.json");
  if (!r.is_ok()) {
    GENIE_FUZZ_CHECK(r.status().message().rfind("fuzz.json: ", 0) == 0,
                     "the error does not name the file: " + r.status().message());
    return 0;
  }
  ++genie_fuzz_accepted;
  const std::string& html = r.value();
  GENIE_FUZZ_CHECK(html.rfind("<!DOCTYPE html>", 0) == 0 && html.size() > 8 &&
                       html.compare(html.size() - 8, 8, "</html>\n") == 0,
                   "the page is not a whole document");
  GENIE_FUZZ_CHECK(count(html, "<script") == 1 && count(html, "</script>") == 1,
                   "a string of the report reached the page unescaped (a script element)");
  GENIE_FUZZ_CHECK(count(html, "<svg") == 3, "the page does not have its three charts");
  return 0;
}
