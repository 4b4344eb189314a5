// SPDX-License-Identifier: Apache-2.0
// Logging: one spdlog logger per module, configured lazily from GENIE_LOG_LEVEL / GENIE_LOG_FILE.
#pragma once

#include <cstdint>
#include <spdlog/spdlog.h>

namespace genie::log {

/// Logger names (the role of NCCL_DEBUG_SUBSYS).
inline constexpr const char* kCommon = "common";
inline constexpr const char* kNetsim = "netsim";
inline constexpr const char* kSched = "sched";
inline constexpr const char* kFakecuda = "fakecuda";
inline constexpr const char* kShim = "shim";

/// The module's logger. The first call initialises sinks and levels (std::call_once); never throws.
spdlog::logger* get(const char* name) noexcept;

/// Rank shown in the `[r3]` field of every line (-1: none).
void set_rank(int rank) noexcept;
/// Source of the `[vt=...]` field: the calling thread's virtual time in ns, or a negative value for none.
void set_virtual_time_source(int64_t (*fn)() noexcept) noexcept;
/// Adds a sink to every module logger (tests capture warnings through a ringbuffer sink).
void add_sink(spdlog::sink_ptr sink) noexcept;
void remove_sink(const spdlog::sink_ptr& sink) noexcept;

}  // namespace genie::log

#define GENIE_LOG_TRACE(logger, ...) SPDLOG_LOGGER_TRACE(::genie::log::get(logger), __VA_ARGS__)
#define GENIE_LOG_DEBUG(logger, ...) SPDLOG_LOGGER_DEBUG(::genie::log::get(logger), __VA_ARGS__)
#define GENIE_LOG_INFO(logger, ...) SPDLOG_LOGGER_INFO(::genie::log::get(logger), __VA_ARGS__)
#define GENIE_LOG_WARN(logger, ...) SPDLOG_LOGGER_WARN(::genie::log::get(logger), __VA_ARGS__)
#define GENIE_LOG_ERROR(logger, ...) SPDLOG_LOGGER_ERROR(::genie::log::get(logger), __VA_ARGS__)
