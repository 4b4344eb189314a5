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
if(GENIE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # A unity file includes our .cpp files, so gcc takes a pimpl struct holding a type of that file's anonymous
  # namespace for a header's and warns; each such type is still used by one translation unit only.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()
option(GENIE_FUZZ "Build libFuzzer targets (needs clang); with GENIE_SANITIZE=address every library gets coverage" OFF)
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
# The sanitizer's shared runtime: programs not built with it (nvcc examples) preload it to use our instrumented
# libraries (tests/e2e).
set(GENIE_SANITIZER_RUNTIME "")
set(link_shared_runtime OFF)
if(GENIE_SANITIZE STREQUAL "address")
  set(instrument address,undefined)
  if(GENIE_FUZZ)
    # Coverage for libFuzzer in every library, so one build serves the ASan suite and the fuzz targets.
    string(APPEND instrument ",fuzzer-no-link")
  endif()
  # Not clang's `enum` check: the C API takes enums (cudaMemcpyKind, ncclDataType_t, ...) as any int, our argument
  # checks are there to reject out-of-range values, and neither compiler assumes an enum's range (no
  # -fstrict-enums), so loading one is what the checks need, not undefined behaviour they could be folded by.
  add_compile_options(-fsanitize=${instrument} -fno-sanitize=enum -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(runtime_name libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
    set(link_shared_runtime ON)
  else()
    set(runtime_name libasan.so)
  endif()
elseif(GENIE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread)
  add_link_options(-fsanitize=thread)
  set(runtime_name libtsan.so)
elseif(GENIE_SANITIZE)
  message(FATAL_ERROR "GENIE_SANITIZE='${GENIE_SANITIZE}': expected '', 'address' or 'thread'")
endif()
if(GENIE_SANITIZE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${runtime_name}
    OUTPUT_VARIABLE GENIE_SANITIZER_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${GENIE_SANITIZER_RUNTIME}" OR NOT EXISTS "${GENIE_SANITIZER_RUNTIME}")
    message(FATAL_ERROR "GENIE_SANITIZE=${GENIE_SANITIZE}: ${CMAKE_CXX_COMPILER} has no ${runtime_name}")
  endif()
  if(link_shared_runtime)
    # clang links its ASan runtime statically into executables only, which leaves our shared libraries
    # (-Wl,--no-undefined) unresolved: link the shared runtime everywhere, found through an rpath.
    get_filename_component(runtime_dir ${GENIE_SANITIZER_RUNTIME} DIRECTORY)
    add_link_options(-shared-libasan -Wl,-rpath,${runtime_dir})
  endif()
endif()
set(GENIE_SKIP_DIRS "" CACHE STRING "Module folders of tests/ and bench/ to leave out (development builds)")
