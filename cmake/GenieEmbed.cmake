# SPDX-License-Identifier: Apache-2.0
# genie_embed_files(<out.cpp> <symbol> FILES...): turn data files (JSON presets) into a C++ source that
# defines `std::span<const genie::EmbeddedFile> <symbol>()`, so the preloaded libraries need no files at
# run time.
function(genie_embed_files out symbol)
  set(script ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${symbol} "-DFILES=${ARGN}" -P ${script}
    DEPENDS ${ARGN} ${script}
    COMMENT "Embedding ${symbol}")
endfunction()
