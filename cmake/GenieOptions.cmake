# SPDX-License-Identifier: Apache-2.0
# Build options and warning flags shared by every module.
option(GENIE_BUILD_TESTS "Build GoogleTest unit and e2e tests" ON)
option(GENIE_BUILD_BENCH "Build Google Benchmark programs" ON)
option(GENIE_BUILD_CUDA_EXAMPLES "Compile CUDA examples with the toolkit's nvcc" ON)
set(GENIE_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA 13 toolkit whose headers define our ABI")
# Unity build: the sources of a target compiled a few at a time in one translation unit, so the headers' inline
# code (the standard library, fmt, nlohmann::json, GoogleTest) is compiled once per group instead of once per file.
# The sanitizer builds of the test command use it (-O1: the TSan build from scratch took 4 min 14 s instead of
# 6 min 56 s on the 2-core VM); the normal -O2 build gained nothing measurable, and OFF suits editing one file.
option(GENIE_UNITY_BUILD "Compile each target's sources in groups (CMAKE_UNITY_BUILD)" OFF)
set(CMAKE_UNITY_BUILD ${GENIE_UNITY_BUILD})
set(GENIE_SANITIZE "" CACHE STRING "Sanitizer build: '', 'address' (ASan+UBSan) or 'thread'")

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

add_compile_options(-Wall -Wextra -Wno-unused-parameter)
# Sanitizer builds: -O1 -g1 (after the build type's flags, so they win): line tables are all a report needs, and
# CI builds these variants from scratch on two cores.
if(GENIE_SANITIZE)
  add_compile_options(-O1 -g1)
endif()
if(GENIE_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(GENIE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread)
  add_link_options(-fsanitize=thread)
endif()
set(GENIE_SKIP_DIRS "" CACHE STRING "Module folders of tests/ and bench/ to leave out (development builds)")
