# SPDX-License-Identifier: Apache-2.0
# Third-party dependencies, all from Debian packages (scripts/install-deps.sh installs them).
# spdlog and fmt are used header-only and nlohmann is header-only, so with -fvisibility=hidden none of
# their symbols leak out of the preloaded libraries into the host application.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBFABRIC REQUIRED IMPORTED_TARGET libfabric)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
find_package(CLI11 REQUIRED)
if(GENIE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(GENIE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

find_path(SPDLOG_INCLUDE_DIR spdlog/spdlog.h REQUIRED)
find_path(FMT_INCLUDE_DIR fmt/format.h REQUIRED)
add_library(genie_thirdparty_log INTERFACE)
target_include_directories(genie_thirdparty_log SYSTEM INTERFACE ${SPDLOG_INCLUDE_DIR} ${FMT_INCLUDE_DIR})
target_compile_definitions(genie_thirdparty_log INTERFACE SPDLOG_HEADER_ONLY FMT_HEADER_ONLY SPDLOG_FMT_EXTERNAL
  SPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_TRACE)

# The CUDA toolkit: only its headers (our runtime is built against them) and nvcc for examples.
if(NOT EXISTS ${GENIE_CUDA_ROOT}/include/cuda_runtime_api.h)
  message(FATAL_ERROR "CUDA toolkit headers not found under GENIE_CUDA_ROOT=${GENIE_CUDA_ROOT}")
endif()
set(GENIE_CUDA_INCLUDE_DIR ${GENIE_CUDA_ROOT}/include)
find_program(GENIE_NVCC nvcc HINTS ${GENIE_CUDA_ROOT}/bin)
