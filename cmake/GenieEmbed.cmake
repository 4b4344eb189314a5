# SPDX-License-Identifier: Apache-2.0
# genie_embed_files(<out.cpp> <symbol> FILES...): turn data files (JSON presets) into a C++ source that
# defines `std::span<const genie::EmbeddedFile> <symbol>()`, so the preloaded libraries need no files at
# run time. The file list travels through a side file so no shell quoting is involved.
function(genie_embed_files out symbol)
  set(script ${CMAKE_SOURCE_DIR}/cmake/embed_files.cmake)
  set(list_file ${out}.files)
  set(files ${ARGN})
  string(JOIN "\n" lines ${files})
  # file(CONFIGURE) rewrites the list only when it changes: a new time stamp would re-embed and relink at every
  # configure.
  file(CONFIGURE OUTPUT ${list_file} CONTENT "${lines}\n" @ONLY)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${symbol} -DFILES_LIST=${list_file} -P ${script}
    DEPENDS ${files} ${script} ${list_file}
    COMMENT "Embedding ${symbol}" VERBATIM)
endfunction()
