// SPDX-License-Identifier: Apache-2.0
// Data files compiled into the libraries (presets), see cmake/GenieEmbed.cmake.
#pragma once

#include <span>
#include <string_view>

namespace genie {

/// One embedded file: its base name ("h200.json") and its bytes.
struct EmbeddedFile {
  std::string_view name;
  std::string_view data;
};

}  // namespace genie
