// SPDX-License-Identifier: Apache-2.0
// CuptiRecorder, continued: the records' time base (cupti_recorder.cpp explains it), the flush into the client's
// buffers, and the callback API's subscriber.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cupti_cbid.hpp"
#include "cupti_recorder.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda::cupti {

namespace {

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// How long the callback's rate is first measured for (it is refined at every flush from the same start).
constexpr int64_t kRateProbeNs = 2000000;
// A flush refines the rate once this much time has passed since the first measurement.
constexpr int64_t kRateRefineNs = 50000000;

size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    default:
      return 0;
  }
}

}  // namespace

size_t activity_record_size(CUpti_ActivityKind kind) { return record_size(kind); }

void CuptiRecorder::register_timestamp_callback(CUpti_TimestampCallbackFunc fn) {
  std::lock_guard lk(mu_);
  clock_fn_.store(fn, std::memory_order_release);
  anchored_ = false;
  if (fn == nullptr) return;
  // The callback's ticks per ns, against CLOCK_MONOTONIC over a short probe; refined at each flush.
  rate_mono_ns_ = monotonic_ns();
  rate_ticks_ = fn();
  int64_t now;
  do now = monotonic_ns();
  while (now - rate_mono_ns_ < kRateProbeNs);
  const uint64_t ticks = fn();
  ticks_per_ns_ = static_cast<double>(ticks - rate_ticks_) / static_cast<double>(now - rate_mono_ns_);
  if (!(ticks_per_ns_ > 0)) ticks_per_ns_ = 1.0;
}

void CuptiRecorder::anchor_at(int64_t host_ns) {
  // Under mu_.
  if (anchored_) return;
  CUpti_TimestampCallbackFunc fn = clock_fn_.load(std::memory_order_acquire);
  if (fn == nullptr) return;
  anchored_ = true;
  anchor_host_ns_ = host_ns;
  anchor_ticks_ = fn();
}

uint64_t CuptiRecorder::to_record_time(int64_t ns) {
  // Under mu_.
  if (clock_fn_.load(std::memory_order_acquire) == nullptr || !anchored_) return static_cast<uint64_t>(std::max<int64_t>(ns, 0));
  const double ticks = static_cast<double>(anchor_ticks_) +
                       std::round(static_cast<double>(ns - anchor_host_ns_) * ticks_per_ns_);
  return ticks > 0 ? static_cast<uint64_t>(ticks) : 0;
}

uint64_t CuptiRecorder::timestamp() {
  Runtime* r = Runtime::existing();
  const int64_t host = r != nullptr ? r->clock().peek().count_ns() : 0;
  std::lock_guard lk(mu_);
  CUpti_TimestampCallbackFunc fn = clock_fn_.load(std::memory_order_acquire);
  if (fn != nullptr && !anchored_) return fn();  // nothing recorded yet: the callback's own clock
  return to_record_time(host);
}

CUptiResult CuptiRecorder::flush_all(uint32_t flag) {
  std::vector<PendingRecord> records;
  CUpti_BuffersCallbackRequestFunc request;
  CUpti_BuffersCallbackCompleteFunc complete;
  uint8_t* buf;
  size_t size, max_records;
  {
    std::lock_guard lk(mu_);
    request = request_;
    complete = complete_;
    if (complete == nullptr) return CUPTI_SUCCESS;  // nobody to give records to: keep them
    records.swap(pending_);
    // Times on the base in force for this interval, then a new anchor for the next one.
    for (PendingRecord& r : records) {
      switch (r.kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
          r.kernel.start = to_record_time(static_cast<int64_t>(r.kernel.start));
          r.kernel.end = to_record_time(static_cast<int64_t>(r.kernel.end));
          r.kernel.completed = r.kernel.end;
          break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
          r.memcpy.start = to_record_time(static_cast<int64_t>(r.memcpy.start));
          r.memcpy.end = to_record_time(static_cast<int64_t>(r.memcpy.end));
          break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
          r.memset.start = to_record_time(static_cast<int64_t>(r.memset.start));
          r.memset.end = to_record_time(static_cast<int64_t>(r.memset.end));
          break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
          r.api.start = to_record_time(static_cast<int64_t>(r.api.start));
          r.api.end = to_record_time(static_cast<int64_t>(r.api.end));
          break;
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
          r.sync.start = to_record_time(static_cast<int64_t>(r.sync.start));
          r.sync.end = to_record_time(static_cast<int64_t>(r.sync.end));
          break;
        default:
          break;
      }
    }
    CUpti_TimestampCallbackFunc fn = clock_fn_.load(std::memory_order_acquire);
    if (fn != nullptr) {
      const int64_t now = monotonic_ns();
      if (now - rate_mono_ns_ > kRateRefineNs)
        ticks_per_ns_ = static_cast<double>(fn() - rate_ticks_) / static_cast<double>(now - rate_mono_ns_);
    }
    anchored_ = false;
    buf = std::exchange(held_, nullptr);
    size = held_size_;
    max_records = held_max_records_;
  }
  // Outside the lock: the client's callbacks may call back into CUPTI (Kineto asks for dropped counts).
  size_t i = 0;
  while (i < records.size() || buf != nullptr) {
    if (buf == nullptr) {
      if (request == nullptr) break;
      size = max_records = 0;
      request(&buf, &size, &max_records);
      if (buf == nullptr || size < sizeof(CUpti_ActivityKernel10)) {
        GENIE_LOG_WARN(log::kFakecuda, "CUPTI: the client gave no buffer (or one of {} bytes): {} records dropped",
                       size, records.size() - i);
        dropped_.fetch_add(records.size() - i, std::memory_order_relaxed);
        break;
      }
    }
    size_t used = 0, count = 0;
    while (i < records.size()) {
      const size_t n = record_size(records[i].kind);
      if (used + n > size || (max_records != 0 && count == max_records)) break;
      std::memcpy(buf + used, &records[i].kernel, n);  // every member of the union starts at the same address
      used += (n + 7) & ~size_t{7};
      ++count;
      ++i;
    }
    if (used == 0 && i == records.size() && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == 0) {
      std::lock_guard lk(mu_);  // an empty buffer stays ours for the next records
      if (held_ == nullptr) {
        held_ = buf;
        held_size_ = size;
        held_max_records_ = max_records;
        buf = nullptr;
        break;
      }
    }
    complete(nullptr, 0, buf, size, std::min(used, size));
    buf = nullptr;
  }
  // Hold a fresh buffer for what comes next while anything is enabled (Kineto flushes only then).
  if (kinds_.load(std::memory_order_acquire) != 0 && request != nullptr) {
    bool need;
    {
      std::lock_guard lk(mu_);
      need = held_ == nullptr;
    }
    if (need) {
      uint8_t* fresh = nullptr;
      size_t fresh_size = 0, fresh_max = 0;
      request(&fresh, &fresh_size, &fresh_max);
      std::lock_guard lk(mu_);
      if (held_ == nullptr && fresh != nullptr && fresh_size >= sizeof(CUpti_ActivityKernel10)) {
        held_ = fresh;
        held_size_ = fresh_size;
        held_max_records_ = fresh_max;
      }
    }
  }
  return CUPTI_SUCCESS;
}

void CuptiRecorder::finalize() {
  kinds_.store(0, std::memory_order_release);
  std::lock_guard lk(mu_);
  pending_.clear();
  launch_shapes_.clear();
  request_ = nullptr;
  complete_ = nullptr;
  held_ = nullptr;  // the client owns its buffers
  subscriber_fn_ = nullptr;
  subscriber_user_ = nullptr;
  enabled_callbacks_.clear();
  subscribed_.store(false);
  callbacks_on_.store(false);
  clock_fn_.store(nullptr);
  anchored_ = false;
  update_active();
}

// --- callback API ------------------------------------------------------------------------------------------
namespace {
// Our subscriber handle: CUPTI's is opaque (struct CUpti_Subscriber_st*).
CUpti_SubscriberHandle the_handle() {
  static int token;
  return reinterpret_cast<CUpti_SubscriberHandle>(&token);
}

uint32_t domain_size(CUpti_CallbackDomain d) {
  switch (d) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
  }
}
}  // namespace

CUptiResult CuptiRecorder::subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc fn, void* user) {
  std::lock_guard lk(mu_);
  if (subscribed_.load()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscribed_.store(true);
  subscriber_fn_ = fn;
  subscriber_user_ = user;
  enabled_callbacks_.clear();
  *handle = the_handle();
  return CUPTI_SUCCESS;
}

CUptiResult CuptiRecorder::unsubscribe(CUpti_SubscriberHandle handle) {
  std::lock_guard lk(mu_);
  if (!subscribed_.load() || handle != the_handle()) return CUPTI_ERROR_INVALID_PARAMETER;
  subscribed_.store(false);
  subscriber_fn_ = nullptr;
  subscriber_user_ = nullptr;
  enabled_callbacks_.clear();
  callbacks_on_.store(false);
  update_active();
  return CUPTI_SUCCESS;
}

CUptiResult CuptiRecorder::enable_callback(bool on, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain,
                                           CUpti_CallbackId cbid) {
  {
    std::lock_guard lk(mu_);
    if (!subscribed_.load() || handle != the_handle()) return CUPTI_ERROR_INVALID_PARAMETER;
    if (cbid >= domain_size(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
    const uint64_t k = (uint64_t{static_cast<uint32_t>(domain)} << 32) | cbid;
    if (on) enabled_callbacks_.insert(k);
    else enabled_callbacks_.erase(k);
    callbacks_on_.store(!enabled_callbacks_.empty());
  }
  if (on) attach();
  update_active();
  return CUPTI_SUCCESS;
}

CUptiResult CuptiRecorder::enable_domain(bool on, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain) {
  {
    std::lock_guard lk(mu_);
    if (!subscribed_.load() || handle != the_handle()) return CUPTI_ERROR_INVALID_PARAMETER;
    const uint32_t n = domain_size(domain);
    if (n == 0) return CUPTI_ERROR_INVALID_PARAMETER;
    for (uint32_t c = 0; c < n; ++c) {
      const uint64_t k = (uint64_t{static_cast<uint32_t>(domain)} << 32) | c;
      if (on) enabled_callbacks_.insert(k);
      else enabled_callbacks_.erase(k);
    }
    callbacks_on_.store(!enabled_callbacks_.empty());
  }
  if (on) attach();
  update_active();
  return CUPTI_SUCCESS;
}

CUptiResult CuptiRecorder::callback_state(uint32_t* on, CUpti_SubscriberHandle handle, CUpti_CallbackDomain domain,
                                          CUpti_CallbackId cbid) {
  std::lock_guard lk(mu_);
  if (!subscribed_.load() || handle != the_handle() || cbid >= domain_size(domain))
    return CUPTI_ERROR_INVALID_PARAMETER;
  *on = enabled_callbacks_.count((uint64_t{static_cast<uint32_t>(domain)} << 32) | cbid) != 0 ? 1 : 0;
  return CUPTI_SUCCESS;
}

}  // namespace genie::fakecuda::cupti
