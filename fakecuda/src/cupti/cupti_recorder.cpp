// SPDX-License-Identifier: Apache-2.0
// CuptiRecorder: API calls and stream ops become CUPTI activity records; callbacks for subscribers.
//
// Time base. Without a timestamp callback every record time, and cuptiGetTimestamp, is the runtime's clock in ns:
// the virtual times of Genie's report and trace, unchanged. Kineto (torch.profiler) registers a callback that
// reads the TSC and converts every CUPTI time to wall-clock ns with its own TSC->Unix converter, and drops
// activities outside its capture window (wall-clock times). So with a callback the records carry ticks of that
// callback, mapped from the runtime's clock by one affine map per flush interval:
//   ticks(t) = anchor_ticks + (t - anchor_host) x ticks_per_ns
// anchored at the first op put on a stream after the profiler was armed or flushed (that op's host time and the
// callback's reading at that moment), with ticks_per_ns measured against CLOCK_MONOTONIC. Durations and the gaps
// between records are the report's (virtual) ones; the first profiled op lines up with the CPU op that launched
// it; CPU ops (wall time) and GPU rows (virtual time) then drift apart by the emulator's own speed.
#include "cupti_recorder.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cupti_cbid.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda::cupti {

namespace {

constexpr uint64_t kNestedToken = uint64_t{1} << 63;

struct ThreadState {
  int depth = 0;              // API calls of this thread inside one another (only the outermost is recorded)
  uint32_t correlation = 0;   // of the outermost call running
  uint32_t cbid = 0;
  ApiDomain domain = ApiDomain::kRuntime;
  const char* name = nullptr;
  int64_t enter_ns = 0;
  uint64_t correlation_data = 0;  // CUpti_CallbackData::correlationData, shared by enter and exit
  std::vector<uint64_t> external[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
};
thread_local ThreadState t_state;
thread_local int t_internal = 0;  // CuptiRecorder::InternalCall depth

int64_t host_ns() {
  Runtime* r = Runtime::existing();
  return r != nullptr ? r->clock().peek().count_ns() : 0;
}

uint64_t key(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }

bool is_kernel_kind(sched::OpKind k) {
  return k == sched::OpKind::kKernel || k == sched::OpKind::kCollective || k == sched::OpKind::kP2p;
}

uint8_t memcpy_kind(const char* label) {
  if (std::strcmp(label, "HtoD") == 0) return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  if (std::strcmp(label, "DtoH") == 0) return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  if (std::strcmp(label, "DtoD") == 0) return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  if (std::strcmp(label, "HtoH") == 0) return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
  if (std::strcmp(label, "PtoP") == 0) return CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
}

uint8_t memory_kind(uint8_t copy_kind, bool source) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return source ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return source ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    default:
      return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
  }
}

// The synchronization record a blocking API call makes (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), if any.
bool sync_type(const char* name, CUpti_ActivitySynchronizationType* type) {
  struct Entry {
    const char* name;
    CUpti_ActivitySynchronizationType type;
  };
  static constexpr Entry kSyncs[] = {
      {"cudaDeviceSynchronize", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE},
      {"cuCtxSynchronize", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE},
      {"cudaStreamSynchronize", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE},
      {"cuStreamSynchronize", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE},
      {"cudaEventSynchronize", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE},
      {"cuEventSynchronize", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE},
      {"cudaStreamWaitEvent", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT},
      {"cuStreamWaitEvent", CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT},
  };
  for (const Entry& e : kSyncs) {
    if (std::strcmp(e.name, name) == 0) {
      *type = e.type;
      return true;
    }
  }
  return false;
}

}  // namespace

CuptiRecorder::InternalCall::InternalCall() noexcept { ++t_internal; }
CuptiRecorder::InternalCall::~InternalCall() { --t_internal; }

CuptiRecorder& CuptiRecorder::instance() {
  static CuptiRecorder* r = new CuptiRecorder();  // never destroyed: runtime threads may report at exit
  return *r;
}

bool CuptiRecorder::supported_kind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    // Accepted, never produced: Genie has no CUPTI overhead of its own to report.
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return true;
    default:
      return false;
  }
}

bool CuptiRecorder::enabled(CUpti_ActivityKind kind) const {
  return static_cast<uint32_t>(kind) < 64 && (kinds_.load(std::memory_order_acquire) >> kind & 1u) != 0;
}

CUptiResult CuptiRecorder::enable(CUpti_ActivityKind kind, bool on) {
  if (!supported_kind(kind)) return CUPTI_ERROR_NOT_COMPATIBLE;
  static_assert(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION < 64 && CUPTI_ACTIVITY_KIND_SYNCHRONIZATION < 64);
  const uint64_t bit = uint64_t{1} << kind;
  if (on) kinds_.fetch_or(bit, std::memory_order_acq_rel);
  else kinds_.fetch_and(~bit, std::memory_order_acq_rel);
  if (on) {
    attach();
    // Kineto asks for its records only once it has handed out a buffer: take one now, as CUPTI does.
    std::unique_lock lk(mu_);
    if (held_ == nullptr && request_ != nullptr) {
      CUpti_BuffersCallbackRequestFunc request = request_;
      lk.unlock();
      uint8_t* buf = nullptr;
      size_t size = 0, max_records = 0;
      request(&buf, &size, &max_records);
      lk.lock();
      if (held_ == nullptr && buf != nullptr && size > 0) {
        held_ = buf;
        held_size_ = size;
        held_max_records_ = max_records;
      } else if (buf != nullptr) {
        GENIE_LOG_WARN(log::kFakecuda, "CUPTI: a buffer the client gave has no room; records wait for the flush");
      }
    }
  }
  update_active();
  return CUPTI_SUCCESS;
}

void CuptiRecorder::attach() {
  if (attached_.exchange(true)) return;
  if (Runtime* r = Runtime::instance()) {
    r->set_activity_sink(this);
  } else {
    attached_.store(false);
    GENIE_LOG_WARN(log::kFakecuda, "CUPTI: the CUDA emulation could not start; no activity will be recorded");
  }
}

void CuptiRecorder::update_active() {
  active_.store(kinds_.load(std::memory_order_acquire) != 0 || callbacks_on_.load(std::memory_order_acquire),
                std::memory_order_release);
}

CUptiResult CuptiRecorder::register_buffers(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
  std::lock_guard lk(mu_);
  request_ = request;
  complete_ = complete;
  return CUPTI_SUCCESS;
}

void CuptiRecorder::enable_api_record(ApiDomain domain, uint32_t cbid, bool on) {
  std::lock_guard lk(mu_);
  if (on) disabled_api_.erase(key(static_cast<uint32_t>(domain), cbid));
  else disabled_api_.insert(key(static_cast<uint32_t>(domain), cbid));
}

void CuptiRecorder::push_external(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  t_state.external[kind].push_back(id);
}

bool CuptiRecorder::pop_external(CUpti_ExternalCorrelationKind kind, uint64_t* id) {
  auto& stack = t_state.external[kind];
  if (stack.empty()) return false;
  if (id != nullptr) *id = stack.back();
  stack.pop_back();
  return true;
}

void CuptiRecorder::queue(const PendingRecord& r) {
  // Under mu_.
  if (pending_.size() >= kMaxPending) {
    if (dropped_.fetch_add(1, std::memory_order_relaxed) == 0)
      GENIE_LOG_WARN(log::kFakecuda, "CUPTI: more than {} records between two flushes; later ones are dropped "
                     "(cuptiActivityGetNumDroppedRecords counts them)", kMaxPending);
    return;
  }
  pending_.push_back(r);
}

void CuptiRecorder::emit_external(uint32_t correlation) {
  if (!enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) return;
  for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++k) {
    const auto& stack = t_state.external[k];
    if (stack.empty()) continue;
    PendingRecord r{};
    r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    r.correlation.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    r.correlation.externalKind = static_cast<CUpti_ExternalCorrelationKind>(k);
    r.correlation.externalId = stack.back();
    r.correlation.correlationId = correlation;
    std::lock_guard lk(mu_);
    queue(r);
  }
}

namespace {
uint32_t thread_id(CUpti_ActivityThreadIdType type) {
  if (type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) return static_cast<uint32_t>(syscall(SYS_gettid));
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(reinterpret_cast<void*>(pthread_self())));
}

PendingRecord api_record(ApiDomain domain, uint32_t cbid, int64_t start, int64_t end, uint32_t correlation,
                         int result, CUpti_ActivityThreadIdType tid_type) {
  PendingRecord r{};
  r.kind = domain == ApiDomain::kRuntime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  r.api.kind = r.kind;
  r.api.cbid = cbid;
  r.api.start = static_cast<uint64_t>(start);
  r.api.end = static_cast<uint64_t>(std::max(start, end));
  r.api.processId = static_cast<uint32_t>(getpid());
  r.api.threadId = thread_id(tid_type);
  r.api.correlationId = correlation;
  r.api.returnValue = static_cast<uint32_t>(result);
  return r;
}
}  // namespace

void CuptiRecorder::callback(CUpti_CallbackDomain domain, uint32_t cbid, const CUpti_CallbackData& data) {
  if (!callbacks_on_.load(std::memory_order_acquire)) return;
  CUpti_CallbackFunc fn;
  void* user;
  {
    std::lock_guard lk(mu_);
    if (subscriber_fn_ == nullptr || enabled_callbacks_.count(key(domain, cbid)) == 0) return;
    fn = subscriber_fn_;
    user = subscriber_user_;
  }
  fn(user, domain, cbid, &data);
}

uint64_t CuptiRecorder::api_enter(ApiDomain domain, const char* name) noexcept {
  if (!active() || t_internal > 0) return 0;
  ThreadState& t = t_state;
  if (t.depth++ > 0) return kNestedToken;
  t.correlation = next_correlation_.fetch_add(1, std::memory_order_relaxed);
  t.domain = domain;
  t.name = name;
  t.cbid = cbid_of(domain, name);
  t.enter_ns = host_ns();
  t.correlation_data = 0;
  emit_external(t.correlation);
  if (t.cbid != 0) {
    CUpti_CallbackData d{};
    d.callbackSite = CUPTI_API_ENTER;
    d.functionName = name;
    d.correlationData = &t.correlation_data;
    d.correlationId = t.correlation;
    callback(domain == ApiDomain::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, t.cbid, d);
  }
  return t.correlation;
}

void CuptiRecorder::api_exit(uint64_t token, int result) noexcept {
  ThreadState& t = t_state;
  --t.depth;
  if (token == kNestedToken || t.depth != 0) return;
  const int64_t exit_ns = host_ns();
  if (t.cbid != 0) {
    const CUpti_ActivityKind kind =
        t.domain == ApiDomain::kRuntime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    CUpti_ActivitySynchronizationType st{};
    const bool sync = enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) && sync_type(t.name, &st);
    if (enabled(kind) || sync) {
      std::lock_guard lk(mu_);
      if (enabled(kind) && disabled_api_.count(key(static_cast<uint32_t>(t.domain), t.cbid)) == 0)
        queue(api_record(t.domain, t.cbid, t.enter_ns, exit_ns, t.correlation, result, thread_id_type()));
      if (sync) {
        PendingRecord r{};
        r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        r.sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        r.sync.type = st;
        r.sync.start = static_cast<uint64_t>(t.enter_ns);
        r.sync.end = static_cast<uint64_t>(std::max(t.enter_ns, exit_ns));
        r.sync.correlationId = t.correlation;
        Runtime* rt = Runtime::existing();
        r.sync.contextId = static_cast<uint32_t>(rt != nullptr ? rt->current_device() + 1 : 1);
        r.sync.streamId = CUPTI_INVALID_STREAM_ID;  // the guard does not see the call's stream argument
        r.sync.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
        r.sync.returnValue = static_cast<uint32_t>(result);
        queue(r);
      }
    }
    CUpti_CallbackData d{};
    d.callbackSite = CUPTI_API_EXIT;
    d.functionName = t.name;
    d.correlationData = &t.correlation_data;
    d.correlationId = t.correlation;
    callback(t.domain == ApiDomain::kRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, t.cbid, d);
  }
  t.correlation = 0;
}

uint32_t CuptiRecorder::synthesize_launch(SimTime host_now) {
  const uint32_t corr = next_correlation_.fetch_add(1, std::memory_order_relaxed);
  emit_external(corr);
  if (enabled(CUPTI_ACTIVITY_KIND_RUNTIME)) {
    const uint32_t cbid = cbid_of(ApiDomain::kRuntime, "cudaLaunchKernel");
    std::lock_guard lk(mu_);
    if (disabled_api_.count(key(0, cbid)) == 0)
      queue(api_record(ApiDomain::kRuntime, cbid, host_now.count_ns(), host_now.count_ns(), corr, 0,
                       thread_id_type()));
  }
  return corr;
}

uint32_t CuptiRecorder::op_submitted(Stream&, const sched::OpSpec& spec, SimTime host_now, const KernelShape* shape,
                                     bool captured) noexcept {
  if (!active()) return 0;
  const bool kernels = enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) || enabled(CUPTI_ACTIVITY_KIND_KERNEL);
  bool follow;
  if (is_kernel_kind(spec.kind)) follow = kernels;
  else if (spec.kind == sched::OpKind::kCopy) follow = enabled(CUPTI_ACTIVITY_KIND_MEMCPY);
  else if (spec.kind == sched::OpKind::kMemset) follow = enabled(CUPTI_ACTIVITY_KIND_MEMSET);
  else follow = spec.parts != nullptr;  // a graph launch: its parts are the GPU work
  if (!follow) return 0;
  ThreadState& t = t_state;
  const uint32_t corr = t.depth > 0 && t.correlation != 0 ? t.correlation : synthesize_launch(host_now);
  std::lock_guard lk(mu_);
  anchor_at(host_now.count_ns());
  if (shape != nullptr) (captured ? captured_shapes_ : launch_shapes_)[corr] = *shape;
  return corr;
}

const char* CuptiRecorder::intern(const char* name) {
  // Under mu_. Records outlive the library that named a kernel: copies, never freed.
  return names_.insert(name != nullptr ? name : "").first->c_str();
}

void CuptiRecorder::record_op(const sched::OpRecord& r, int device, uint32_t stream_id, uint32_t correlation) {
  // Under mu_.
  PendingRecord p{};
  const uint32_t context = static_cast<uint32_t>(device + 1);
  if (is_kernel_kind(r.kind)) {
    const bool concurrent = enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (!concurrent && !enabled(CUPTI_ACTIVITY_KIND_KERNEL)) return;
    p.kind = concurrent ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : CUPTI_ACTIVITY_KIND_KERNEL;
    CUpti_ActivityKernel10& k = p.kernel;
    k.kind = p.kind;
    k.start = static_cast<uint64_t>(r.start.count_ns());
    k.end = static_cast<uint64_t>(r.end.count_ns());
    k.completed = k.end;
    k.deviceId = static_cast<uint32_t>(device);
    k.contextId = context;
    k.streamId = stream_id;
    KernelShape shape;  // collectives and library work: one block of one thread, as nothing better is known
    if (auto it = launch_shapes_.find(r.activity); it != launch_shapes_.end()) {
      shape = it->second;
      launch_shapes_.erase(it);
    } else if (auto c = captured_shapes_.find(r.activity); c != captured_shapes_.end()) {
      shape = c->second;
    }
    k.gridX = static_cast<int32_t>(shape.grid[0]);
    k.gridY = static_cast<int32_t>(shape.grid[1]);
    k.gridZ = static_cast<int32_t>(shape.grid[2]);
    k.blockX = static_cast<int32_t>(shape.block[0]);
    k.blockY = static_cast<int32_t>(shape.block[1]);
    k.blockZ = static_cast<int32_t>(shape.block[2]);
    k.dynamicSharedMemory = static_cast<int32_t>(shape.shared_mem);
    k.correlationId = correlation;
    k.gridId = static_cast<int64_t>(correlation);
    // NCCL's kernels are named ncclDevKernel_<collective>_...; tools find communication kernels by that prefix.
    k.name = r.kind == sched::OpKind::kKernel ? intern(r.label)
                                              : intern((std::string("ncclDevKernel_") + r.label).c_str());
    k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  } else if (r.kind == sched::OpKind::kCopy) {
    if (!enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    CUpti_ActivityMemcpy6& m = p.memcpy;
    m.kind = p.kind;
    m.copyKind = memcpy_kind(r.label);
    m.srcKind = memory_kind(m.copyKind, true);
    m.dstKind = memory_kind(m.copyKind, false);
    m.bytes = r.bytes;
    m.start = static_cast<uint64_t>(r.start.count_ns());
    m.end = static_cast<uint64_t>(r.end.count_ns());
    m.deviceId = static_cast<uint32_t>(device);
    m.contextId = context;
    m.streamId = stream_id;
    m.correlationId = correlation;
    m.runtimeCorrelationId = correlation;
    m.copyCount = 1;
  } else if (r.kind == sched::OpKind::kMemset) {
    if (!enabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
    p.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    CUpti_ActivityMemset4& s = p.memset;
    s.kind = p.kind;
    s.bytes = r.bytes;
    s.start = static_cast<uint64_t>(r.start.count_ns());
    s.end = static_cast<uint64_t>(r.end.count_ns());
    s.deviceId = static_cast<uint32_t>(device);
    s.contextId = context;
    s.streamId = stream_id;
    s.correlationId = correlation;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  } else {
    return;  // events, waits, host functions: no GPU activity
  }
  queue(p);
}

void CuptiRecorder::op_completed(int device, uint32_t stream_id, const sched::OpRecord& op,
                                 const sched::OpRecord* parts, size_t n_parts) noexcept {
  std::lock_guard lk(mu_);
  if (n_parts == 0) {
    record_op(op, device, stream_id, op.activity);
    return;
  }
  // A graph replay: each node's record, correlated with the graph launch (as CUPTI reports a graph's kernels).
  for (size_t i = 0; i < n_parts; ++i) record_op(parts[i], device, stream_id, op.activity);
}

}  // namespace genie::fakecuda::cupti
