// SPDX-License-Identifier: Apache-2.0
// CuptiRecorder: the CUPTI drop-in's state. It is the runtime's ActivitySink: it turns API calls and stream ops into
// CUPTI activity records (kept until a flush hands them to the client's buffers) and runs the callback API.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "genie/fakecuda/activity.hpp"
#include "genie/fakecuda/cost_model.hpp"

namespace genie::fakecuda::cupti {

/// One queued activity record, timestamps still in the runtime's clock (ns): converted at the flush.
struct PendingRecord {
  CUpti_ActivityKind kind;
  union {
    CUpti_ActivityKernel10 kernel;
    CUpti_ActivityMemcpy6 memcpy;
    CUpti_ActivityMemset4 memset;
    CUpti_ActivityAPI api;
    CUpti_ActivityExternalCorrelation correlation;
    CUpti_ActivitySynchronization2 sync;
  };
};

/// Bytes of one record of `kind` in a buffer (before its 8-byte alignment), 0 for a kind Genie never writes.
size_t activity_record_size(CUpti_ActivityKind kind);

/// The process's CUPTI state (one instance, never destroyed: runtime threads may report to it at exit).
/// Thread-safe: one mutex guards the queue and the settings; per-thread state (API nesting, external correlation
/// stacks) is thread-local.
class CuptiRecorder final : public ActivitySink {
 public:
  static CuptiRecorder& instance();

  /// RAII: the calling thread runs a CUPTI entry point; the runtime and driver calls it makes on the way are not
  /// the program's, and are not reported (api_enter returns 0).
  struct InternalCall {
    InternalCall() noexcept;
    ~InternalCall();
    InternalCall(const InternalCall&) = delete;
    InternalCall& operator=(const InternalCall&) = delete;
  };

  // --- activity API (the cupti_api.cpp entry points check their arguments, then call these)
  CUptiResult enable(CUpti_ActivityKind kind, bool on);
  static bool supported_kind(CUpti_ActivityKind kind);
  bool enabled(CUpti_ActivityKind kind) const;
  CUptiResult register_buffers(CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete);
  /// Hands every queued record to the client's buffers (bufferRequested / bufferCompleted).
  CUptiResult flush_all(uint32_t flag);
  size_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  void register_timestamp_callback(CUpti_TimestampCallbackFunc fn);
  /// cuptiGetTimestamp: the calling thread's host time on the activity records' time base.
  uint64_t timestamp();
  void push_external(CUpti_ExternalCorrelationKind kind, uint64_t id);
  /// false when the kind's stack is empty.
  bool pop_external(CUpti_ExternalCorrelationKind kind, uint64_t* id);
  /// cuptiActivityEnableRuntimeApi / EnableDriverApi: API records of one callback id on or off.
  void enable_api_record(ApiDomain domain, uint32_t cbid, bool on);
  void set_thread_id_type(CUpti_ActivityThreadIdType t) { thread_id_type_.store(t); }
  CUpti_ActivityThreadIdType thread_id_type() const { return thread_id_type_.load(); }
  /// cuptiFinalize: activity kinds off, callbacks and buffers forgotten, queued records dropped.
  void finalize();

  // --- callback API
  CUptiResult subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc fn, void* user);
  CUptiResult unsubscribe(CUpti_SubscriberHandle handle);
  CUptiResult enable_callback(bool on, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid);
  CUptiResult enable_domain(bool on, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain);
  CUptiResult callback_state(uint32_t* on, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain,
                             CUpti_CallbackId cbid);

  // --- ActivitySink
  uint64_t api_enter(ApiDomain domain, const char* name) noexcept override;
  void api_exit(uint64_t token, int result) noexcept override;
  uint32_t op_submitted(Stream& s, const sched::OpSpec& spec, SimTime host_now, const KernelShape* shape,
                        bool captured) noexcept override;
  void op_completed(int device, uint32_t stream_id, const sched::OpRecord& op, const sched::OpRecord* parts,
                    size_t n_parts) noexcept override;

  /// Most records kept between two flushes; past it records are counted as dropped.
  static constexpr size_t kMaxPending = size_t{1} << 22;

 private:
  CuptiRecorder() = default;
  /// Registers this sink with the runtime once something is enabled (starts the runtime).
  void attach();
  /// True when anything could want API or op activity (a kind, or a callback, is enabled).
  bool active() const { return active_.load(std::memory_order_acquire); }
  void update_active();
  /// A correlation id for an op put on a stream outside any API call (NCCL, cuBLAS): the launch their libraries
  /// make, as a runtime API record of its own.
  uint32_t synthesize_launch(SimTime host_now);
  void emit_external(uint32_t correlation);
  void queue(const PendingRecord& r);
  void record_op(const sched::OpRecord& r, int device, uint32_t stream_id, uint32_t correlation);
  const char* intern(const char* name);
  /// Converts a runtime-clock time to the records' time base (see cupti_recorder.cpp, "Time base").
  uint64_t to_record_time(int64_t ns);
  /// Anchors the record time base at `host_ns` (the runtime's clock) when a timestamp callback is registered and no
  /// anchor is held.
  void anchor_at(int64_t host_ns);
  void callback(CUpti_CallbackDomain domain, uint32_t cbid, const CUpti_CallbackData& data);

  mutable std::mutex mu_;
  std::atomic<bool> attached_{false};
  std::atomic<bool> active_{false};
  std::atomic<uint64_t> kinds_{0};  ///< bit per enabled kind (every supported kind is below 64)
  std::atomic<uint32_t> next_correlation_{1};
  std::atomic<size_t> dropped_{0};
  std::atomic<CUpti_ActivityThreadIdType> thread_id_type_{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
  CUpti_BuffersCallbackRequestFunc request_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete_ = nullptr;
  std::vector<PendingRecord> pending_;
  /// A buffer taken from the client ahead of the records (Kineto flushes only when it has handed one out).
  uint8_t* held_ = nullptr;
  size_t held_size_ = 0;
  size_t held_max_records_ = 0;
  std::unordered_set<uint64_t> disabled_api_;  ///< (domain << 32 | cbid) of API records switched off
  /// Kernels of captured graphs: their node's id -> launch shape (a replay's parts carry the id).
  std::unordered_map<uint32_t, KernelShape> captured_shapes_;
  /// Launch shapes of kernels on a stream until they complete.
  std::unordered_map<uint32_t, KernelShape> launch_shapes_;
  std::unordered_set<std::string> names_;  ///< interned kernel names: records point into them
  // Time base (guarded by mu_).
  std::atomic<CUpti_TimestampCallbackFunc> clock_fn_{nullptr};
  bool anchored_ = false;
  int64_t anchor_host_ns_ = 0;
  uint64_t anchor_ticks_ = 0;
  double ticks_per_ns_ = 1.0;
  int64_t rate_mono_ns_ = 0;  ///< CLOCK_MONOTONIC and callback ticks when the rate was first measured
  uint64_t rate_ticks_ = 0;
  // Callback API: one subscriber, as CUPTI allows.
  std::atomic<bool> subscribed_{false};
  CUpti_CallbackFunc subscriber_fn_ = nullptr;
  void* subscriber_user_ = nullptr;
  std::unordered_set<uint64_t> enabled_callbacks_;  ///< (domain << 32 | cbid)
  std::atomic<bool> callbacks_on_{false};
};

}  // namespace genie::fakecuda::cupti
