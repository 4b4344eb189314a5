// SPDX-License-Identifier: Apache-2.0
// Logging: one spdlog logger per module, configured lazily from GENIE_LOG_LEVEL / GENIE_LOG_FILE.
// Only log.cpp includes spdlog: a log line is formatted here with fmt and handed to log.cpp as text, so the
// files that log compile fmt alone (spdlog's header-only logger in every one of them tripled their compile time).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <iterator>
#include <memory>

namespace spdlog::sinks {
class sink;
}

namespace genie::log {

/// Logger names (the role of NCCL_DEBUG_SUBSYS).
inline constexpr const char* kCommon = "common";
inline constexpr const char* kNetsim = "netsim";
inline constexpr const char* kSched = "sched";
inline constexpr const char* kFakecuda = "fakecuda";
inline constexpr const char* kShim = "shim";

/// Levels, numbered as spdlog's.
enum class Level : int { kTrace = 0, kDebug = 1, kInfo = 2, kWarn = 3, kError = 4, kCritical = 5 };

/// Whether the module's logger prints `level`. The first call initialises sinks and levels (std::call_once);
/// after that it is a lookup and a level check, without a lock. Never throws.
bool enabled(const char* name, Level level) noexcept;
/// Prints one line through the module's logger (`function`, `file` and `line` are the call site's).
void write(const char* name, Level level, const char* file, int line, const char* function,
           fmt::string_view message) noexcept;
/// Flushes the sinks of every logger.
void flush() noexcept;

/// What the GENIE_LOG_* macros call: formats only when the level is enabled. The format string is checked at
/// compile time, as spdlog's is.
template <class... Args>
void emit(const char* name, Level level, const char* file, int line, const char* function,
          fmt::format_string<Args...> format, Args&&... args) noexcept {
  if (!enabled(name, level)) return;
  try {
    fmt::memory_buffer buf;
    fmt::vformat_to(std::back_inserter(buf), format, fmt::make_format_args(args...));
    write(name, level, file, line, function, fmt::string_view(buf.data(), buf.size()));
  } catch (...) {  // out of memory while formatting a log line: the line is dropped
  }
}

/// Rank shown in the `[r3]` field of every line (-1: none).
void set_rank(int rank) noexcept;
/// Source of the `[vt=...]` field: the calling thread's virtual time in ns, or a negative value for none.
void set_virtual_time_source(int64_t (*fn)() noexcept) noexcept;
/// Adds a sink to every module logger (tests capture warnings through a ringbuffer sink).
void add_sink(std::shared_ptr<spdlog::sinks::sink> sink) noexcept;
void remove_sink(const std::shared_ptr<spdlog::sinks::sink>& sink) noexcept;

}  // namespace genie::log

#define GENIE_LOG_AT_(level, logger, ...)                                                                  \
  ::genie::log::emit(logger, ::genie::log::Level::level, __FILE__, __LINE__, static_cast<const char*>(__FUNCTION__), \
                     __VA_ARGS__)
#define GENIE_LOG_TRACE(logger, ...) GENIE_LOG_AT_(kTrace, logger, __VA_ARGS__)
#define GENIE_LOG_DEBUG(logger, ...) GENIE_LOG_AT_(kDebug, logger, __VA_ARGS__)
#define GENIE_LOG_INFO(logger, ...) GENIE_LOG_AT_(kInfo, logger, __VA_ARGS__)
#define GENIE_LOG_WARN(logger, ...) GENIE_LOG_AT_(kWarn, logger, __VA_ARGS__)
#define GENIE_LOG_ERROR(logger, ...) GENIE_LOG_AT_(kError, logger, __VA_ARGS__)
