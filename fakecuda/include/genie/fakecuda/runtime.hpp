// SPDX-License-Identifier: Apache-2.0
// The emulated CUDA runtime: devices, memory, streams, events, graphs, kernels. C++ API used by the
// cudart/driver ABI layers and by the NCCL shim (which enqueues collectives on streams).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/fakecuda/code_image.hpp"
#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/device_spec.hpp"
#include "genie/fakecuda/memory.hpp"
#include "genie/sched/timeline.hpp"

namespace genie::fakecuda {

class ActivitySink;
class Device;
class Graph;
struct GraphNode;
class UserObject;
struct CodeLibrary;

/// A kernel registered by nvcc's static constructors (__cudaRegisterFunction).
struct Kernel {
  static constexpr uint32_t kMagic = 0x6b65726eu;  // "kern"
  uint32_t magic = kMagic;
  const void* host_stub = nullptr;
  std::string name;  ///< mangled device name: the cost model's key
  /// Parameter layout from the cubin's kernel info (driver modules and code libraries); empty when unknown (kernels
  /// registered by host code, PTX images). The launch reads pointer operands with it (CostModel::operand_rule).
  std::vector<KernelParam> params;
};

/// Kernels and __device__ variables registered at load time. Needs no device or configuration, so the
/// registration storm of `import torch` stays cheap and never fails. Thread-safe; process-wide.
class ModuleRegistry {
 public:
  static ModuleRegistry& instance();
  void register_kernel(const void* host_stub, const char* name);
  /// The kernel registered for `host_stub`, nullptr if unknown.
  const Kernel* find_kernel(const void* host_stub) const;
  /// A `cudaKernel_t`/`cudaFunction_t` we handed out, validated; nullptr otherwise.
  static const Kernel* from_handle(const void* handle);
  /// A kernel no host stub names (a kernel of a code library, cudaLibraryGetKernel): its handle is also its key,
  /// so find_kernel(handle) and from_handle(handle) both answer it and every launch API takes it.
  const Kernel* add_handle_kernel(std::string name, std::vector<KernelParam> params = {});
  /// Invalidates the handle of a kernel from add_handle_kernel (its library was unloaded). The Kernel stays
  /// allocated: trace labels of earlier launches point into its name.
  void retire_kernel(const Kernel* k);
  /// Records a __device__ variable (its host shadow is its storage) and registers it with `memory`
  /// of the live runtime, if any.
  void register_var(void* host_var, size_t size);
  /// Adds every variable registered so far to `memory` and routes later ones there too.
  void attach(MemoryRegistry* memory);

 private:
  mutable std::shared_mutex mu_;
  std::unordered_map<const void*, std::unique_ptr<Kernel>> kernels_;
  std::unordered_set<const void*> handles_;  ///< every Kernel* handed out (replaced ones are kept alive)
  std::vector<std::unique_ptr<Kernel>> replaced_;
  std::atomic<uint64_t> generation_{1};  ///< bumped when a registration replaces a kernel
  std::vector<std::pair<void*, size_t>> vars_;
  MemoryRegistry* memory_ = nullptr;
};
struct CaptureSession;

/// Stream creation flags (cudaStreamNonBlocking).
inline constexpr unsigned kStreamNonBlocking = 0x1;
/// Event creation flags (cudaEventDisableTiming, cudaEventInterprocess in driver_types.h).
inline constexpr unsigned kEventDisableTiming = 0x2;
inline constexpr unsigned kEventInterprocess = 0x4;

/// Stream priorities, as cudaDeviceGetStreamPriorityRange / cuCtxGetStreamPriorityRange report them (Hopper:
/// 0 least .. -5 greatest); out-of-range values are clamped.
inline constexpr int kLeastStreamPriority = 0;
inline constexpr int kGreatestStreamPriority = -5;

/// An emulated stream. Owned by the Runtime; the C handle (cudaStream_t) is its address.
class Stream {
 public:
  enum class Kind { kLegacy, kPerThread, kUser };
  Stream(Device& dev, Kind kind, unsigned flags, int priority, sched::Timeline& timeline);

  Device& device() { return dev_; }
  Kind kind() const { return kind_; }
  unsigned flags() const { return flags_; }
  int priority() const { return priority_; }
  /// Blocking streams (not NonBlocking, not legacy) synchronise with the legacy default stream.
  bool blocking() const { return kind_ != Kind::kLegacy && (flags_ & kStreamNonBlocking) == 0; }
  sched::Lane& lane() { return lane_; }

  /// Capture state (guarded by the runtime's capture mutex; `capturing` is the lock-free fast check).
  std::atomic<bool> capturing{false};
  std::shared_ptr<CaptureSession> capture;
  /// Nodes that the next captured op depends on.
  std::vector<int> capture_frontier;
  /// For per-thread default streams: the owning thread.
  std::thread::id owner;

 private:
  Device& dev_;
  Kind kind_;
  unsigned flags_;
  int priority_;
  sched::Lane lane_;
};

/// An emulated device: its spec, memory accounting and streams.
class Device {
 public:
  Device(int ordinal, const DeviceSpec& spec, sched::Timeline& timeline);
  int ordinal() const { return ordinal_; }
  const DeviceSpec& spec() const { return spec_; }
  Stream& legacy_stream() { return *legacy_; }
  /// The calling thread's per-thread default stream on this device (created on first use).
  Stream& per_thread_stream();

  /// Accounting of device memory; false when it would exceed the capacity.
  bool reserve_bytes(uint64_t n);
  void release_bytes(uint64_t n);
  uint64_t used_bytes() const { return used_.load(std::memory_order_relaxed); }
  /// The default memory pool's share of used_bytes (cudaMallocAsync not yet freed) and its high-water mark since
  /// the last reset (cudaMemPoolAttrUsedMemCurrent / UsedMemHigh). The pool keeps no freed memory, so what it
  /// reserves is what it hands out.
  void pool_add(uint64_t n);
  void pool_release(uint64_t n) { pool_used_.fetch_sub(n, std::memory_order_relaxed); }
  uint64_t pool_used_bytes() const { return pool_used_.load(std::memory_order_relaxed); }
  uint64_t pool_high_bytes() const { return pool_high_.load(std::memory_order_relaxed); }
  /// Resets the high-water mark to the current use (a cudaMemPoolSetAttribute of ...MemHigh to 0).
  void pool_reset_high() { pool_high_.store(pool_used_bytes(), std::memory_order_relaxed); }

  void add_stream(Stream* s);
  void remove_stream(Stream* s);
  /// Dependencies an op on `s` must wait for because of legacy-default-stream semantics.
  void legacy_deps(Stream& s, std::vector<sched::Dep>* deps);
  /// Every stream of this device (legacy, per-thread and user streams).
  std::vector<Stream*> streams();

  bool peer_access_enabled(int peer) const;
  void set_peer_access(int peer, bool on);

 private:
  int ordinal_;
  const DeviceSpec& spec_;
  sched::Timeline& timeline_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> pool_used_{0}, pool_high_{0};
  std::unique_ptr<Stream> legacy_;
  mutable std::mutex mu_;
  std::vector<Stream*> streams_;  // blocking and non-blocking user and per-thread streams
  std::vector<std::unique_ptr<Stream>> per_thread_;  // owned per-thread default streams
  std::unordered_set<int> peers_;
};

/// Shared state of an interprocess event (cudaEventInterprocess), in a memfd mapping both processes
/// see: the sequence number of the last record, of the last completed record, and its time.
struct IpcEventBlock {
  std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> completed{0};
  std::atomic<int64_t> time_ns{0};
};

/// An emulated event.
struct Event {
  std::mutex mu;
  IpcEventBlock* ipc = nullptr;  ///< set for interprocess events (created or opened)
  int ipc_fd = -1;               ///< memfd of `ipc` in the creating process
  unsigned flags = 0;
  int device = 0;
  bool recorded = false;
  sched::Dep point;  ///< completion point of the last record
  /// When recorded during stream capture: the capture and its frontier at that point.
  std::shared_ptr<CaptureSession> capture;
  std::vector<int> capture_frontier;
};

/// Timing-only runs (GENIE_DATA=none): the largest transfer that still moves its bytes. Such transfers are control
/// data (sizes, flags, a loss, pickled objects, MoE routing counts), whose values programs read to decide what to do
/// next. 512 KiB is the largest storage PyTorch's small-value tracking admits by default (65536 elements of 8 bytes,
/// GENIE_TORCH_SMALL_VALUE_ELEMENTS), so every small tensor a copy or a collective writes holds real bytes.
constexpr size_t kControlDataMaxBytes = size_t{512} << 10;

/// Runtime options, read once from the config registry.
struct RuntimeOptions {
  DeviceSpec spec;
  int device_count = 8;                 ///< devices visible to the process
  int physical_device_count = 8;        ///< devices of the emulated node, before CUDA_VISIBLE_DEVICES (GENIE_GPUS)
  /// The node's ordinal of each visible device (CUDA_VISIBLE_DEVICES; 0..device_count-1 when unset). NVML numbers
  /// devices by these, as the real one ignores CUDA_VISIBLE_DEVICES.
  std::vector<int> visible_ordinals;
  sched::ClockOptions clock;
  SimTime api_overhead = SimTime::ns(500);  ///< modelled host cost of a non-launch API call
  std::string cost_table;               ///< JSON file of measured kernel durations ("" = none)
  std::string cost_params;              ///< cost-model parameter file ("" = the preset's embedded parameters)
  bool record_trace = false;
  /// Device memory lives on memfds so NCCL peers in other processes can map it (GENIE_FAKECUDA_SHAREABLE_MEMORY).
  bool shareable_memory = true;
  /// GENIE_DATA=copy (true): copies, memsets and collectives move real bytes. none (false): a timing-only run; they
  /// keep their modelled durations but move no bytes unless they are control data (at most kControlDataMaxBytes),
  /// so device memory stays address space without host pages (docs/timing-only.md).
  bool move_data = true;
  /// Virtual mode: how long a non-blocking query waits (wall time) for unresolved work (a collective
  /// waiting on peers) before answering cudaErrorNotReady.
  SimTime query_wait = SimTime::ms(10);
  /// GENIE_APP_CLOCK=virtual: the program's clock reads answer virtual host time (app_clock.cpp). Decided here,
  /// when the runtime starts, because the interposed clock_gettime runs in any context (inside malloc, in a
  /// thread's teardown) where reading the configuration is not safe.
  bool app_clock_virtual = false;
};

/// Builds options from the configuration (GENIE_DEVICE, GENIE_GPUS, CUDA_VISIBLE_DEVICES, GENIE_CLOCK, ...).
Result<RuntimeOptions> options_from_config();

/// The emulated runtime of one process.
class Runtime {
 public:
  explicit Runtime(RuntimeOptions options);
  ~Runtime();

  /// The process-wide runtime used by the C ABI, created on first use from the configuration.
  /// Never destroyed (worker threads and atexit handlers may still use it). nullptr if init failed.
  static Runtime* instance();
  /// The runtime if instance() has made it, else nullptr (never creates it: safe during static initialisation).
  static Runtime* existing();
  static const Status& instance_status();

  const RuntimeOptions& options() const { return options_; }
  /// Whether a copy, memset or collective of `bytes` bytes moves them: always with GENIE_DATA=copy, only control data
  /// (at most kControlDataMaxBytes) with GENIE_DATA=none. Its modelled duration is the same either way.
  bool moves_bytes(uint64_t bytes) const { return options_.move_data || bytes <= kControlDataMaxBytes; }
  sched::Timeline& timeline() { return timeline_; }
  sched::Clock& clock() { return timeline_.clock(); }
  MemoryRegistry& memory() { return memory_; }
  CostModel& cost_model() { return *cost_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  Device& device(int i) { return *devices_[i]; }

  /// The calling thread's current device.
  int current_device() const;
  void set_current_device(int d);

  // --- streams ---
  /// Resolves a cudaStream_t: nullptr/0 -> legacy (or per-thread when `per_thread_default`),
  /// cudaStreamLegacy (0x1), cudaStreamPerThread (0x2), or a live user stream. nullptr if invalid.
  /// The default streams are those of `device`, or of the calling thread's current device when it is -1 (a
  /// library that launches on its own device, as NCCL on a communicator's, passes that device).
  Stream* resolve_stream(const void* handle, bool per_thread_default, int device = -1);
  Stream* create_stream(int device, unsigned flags, int priority);
  Status destroy_stream(Stream* s);

  /// Submits an op on `s` at the calling thread's current host time, adding legacy-stream dependencies,
  /// or appends it to the stream's capture. Returns the completion point (empty while capturing).
  Result<sched::Dep> submit(Stream& s, sched::OpSpec spec);
  /// Same, at a host time the caller already has (from api_call()). `shape`: a kernel launch's shape, for the
  /// activity sink (launch_kernel passes it).
  Result<sched::Dep> submit(Stream& s, sched::OpSpec spec, SimTime host_now, const KernelShape* shape = nullptr);
  /// Registers the profiler that observes API calls and stream ops (activity.hpp; nullptr: none). The sink must
  /// live for the rest of the process. It becomes the process's activity_sink() and this timeline's op observer.
  void set_activity_sink(ActivitySink* sink);
  /// Blocking wait for everything submitted to `s`; advances host time to its end.
  Status synchronize(Stream& s);
  /// Non-blocking: ok when all of `s`'s work is done by host time, kNotReady otherwise.
  Status query(Stream& s);
  Status synchronize_device(int device);

  // --- events ---
  Event* create_event(unsigned flags);
  Status destroy_event(Event* e);
  Event* resolve_event(const void* handle);
  Status record_event(Event& e, Stream& s);
  Status wait_event(Stream& s, Event& e);
  Status query_event(Event& e);
  Status synchronize_event(Event& e);
  Result<float> elapsed_ms(Event& start, Event& end);
  /// Interprocess events: the (pid, fd) another process on this host opens, and opening it there.
  Result<std::pair<int, int>> export_event(Event& e);
  Result<Event*> open_event(int pid, int fd);

  // --- capture and graphs ---
  Status begin_capture(Stream& s, int mode);
  /// cudaStreamBeginCaptureToGraph: captures into the existing graph `g`, the first op after the nodes `deps`
  /// (indices in g). end_capture then returns `g`.
  Status begin_capture_to_graph(Stream& s, Graph& g, std::vector<int> deps, int mode);
  /// The graph `s` captures into and its current dependencies (cudaStreamGetCaptureInfo); nullptr when `s` is
  /// not capturing.
  Graph* capture_graph(Stream& s, std::vector<int>* frontier);
  /// cudaStreamUpdateCaptureDependencies: the next captured op of `s` depends on `nodes` (indices in its capture
  /// graph) instead of (`replace`) or as well as its current dependencies. kInvalidUsage when not capturing.
  Status update_capture_dependencies(Stream& s, const std::vector<int>& nodes, bool replace);
  /// Appends `node` to `g` after the nodes `deps` (indices in g); returns its index. A conditional node gets
  /// `body_count` new body graphs, registered so that nodes can be added to them (handles: graph addresses).
  Result<int> add_graph_node(Graph& g, std::vector<int> deps, GraphNode node, unsigned body_count = 0);
  /// Appends the op that `enqueue` submits on a private stream of `device` as one node of `g` after `deps`
  /// (cudaGraphAddNode of kernels, copies and memsets reuses the stream APIs' checks and cost model).
  Result<int> add_graph_node_by_capture(Graph& g, std::vector<int> deps, int device,
                                        const std::function<Status(Stream&)>& enqueue);
  /// cudaGraphConditionalHandleCreate: a handle of `g` whose value is `default_value` when the graph runs.
  uint64_t create_conditional_handle(Graph& g, unsigned default_value, unsigned flags);
  /// The default value of a conditional handle; kInvalidArgument when it is unknown. A handle of any live graph is
  /// taken for `g` (a conditional body's nodes use the handles of the graph around it).
  Result<uint64_t> conditional_value(uint64_t handle, const Graph& g);
  Result<Graph*> end_capture(Stream& s);
  bool is_capturing(Stream& s);
  /// Capture id of `s` (0 when not capturing).
  uint64_t capture_id(Stream& s);
  Graph* create_graph();
  Status destroy_graph(Graph* g);
  Graph* resolve_graph(const void* handle);

  // --- user objects (cudaUserObject_t) ---
  UserObject* create_user_object(void* ptr, void (*destroy)(void*), unsigned refs);
  UserObject* resolve_user_object(const void* handle);
  void retain_user_object(UserObject& o, unsigned n);
  /// Drops `n` references; the last runs the destructor (on the calling thread) and frees the object.
  Status release_user_object(UserObject& o, unsigned n);
  /// cudaGraphRetainUserObject: `g` takes `n` references, new ones or (`move`) the caller's.
  Status graph_retain_user_object(Graph& g, UserObject& o, unsigned n, bool move);
  /// cudaGraphReleaseUserObject: kInvalidArgument when `g` holds fewer than `n`.
  Status graph_release_user_object(Graph& g, UserObject& o, unsigned n);

  // --- code libraries (cudaLibrary_t) ---
  /// Loads a cubin, fat binary or PTX image (read_code_image); kInvalidArgument when it is none of them.
  Result<CodeLibrary*> load_library(const void* image);
  Status unload_library(CodeLibrary* lib);
  CodeLibrary* resolve_library(const void* handle);
  /// The kernel `name` of `lib`; kNotFound when the image names its kernels and not this one.
  Result<const Kernel*> library_kernel(CodeLibrary& lib, const std::string& name);
  std::vector<const Kernel*> library_kernels(CodeLibrary& lib);
  /// Device memory of the variable `name` of `lib` on the current device (allocated and initialised from the
  /// image on the first request); kNotFound when the image has no such variable.
  Result<std::pair<void*, size_t>> library_global(CodeLibrary& lib, const std::string& name);
  // --- memory ---
  /// Device memory on `device` (capacity enforced): kOutOfMemory past the preset's capacity. `pooled`: from the
  /// device's default memory pool (cudaMallocAsync), counted in its attributes until freed.
  Result<void*> device_alloc(int device, size_t size, MemKind kind = MemKind::kDevice, bool pooled = false);
  /// Frees device or pinned-host memory allocated by this runtime (kInvalidArgument otherwise).
  Status free_memory(const void* p, bool expect_host);
  Result<void*> host_alloc(size_t size, unsigned flags);
  Status host_register(void* p, size_t size, unsigned flags);
  Status host_unregister(void* p);
  /// Enqueues a copy of `n` bytes on `s` (kind derived from the pointers); data moves in stream order, unless
  /// !moves_bytes(n) and a side is device memory: then the op is timed alone and neither side is read or written (a
  /// host destination is left as it was), and an unregistered host side is only checked to be mapped.
  Status copy_async(void* dst, const void* src, size_t n, Stream& s, int kind_hint);
  /// Enqueues a memset of `n` bytes on `s`; like copy_async, it writes nothing when !moves_bytes(n).
  Status memset_async(void* dst, int value, size_t n, Stream& s);

  // --- kernels ---
  /// Enqueues a kernel: a timed op of the cost model's duration; charges the launch overhead.
  /// `args`: the launch's argument array (cudaLaunchKernel's `args`, cuLaunchKernel's `kernelParams`) or null;
  /// read only where the cost model takes a row length from it (CostModel::row_argument) or, for a kernel whose
  /// parameter layout is known (Kernel::params), its pointer and integer operands (CostModel::operand_rule).
  Status launch_kernel(const struct Kernel& k, const KernelShape& shape, Stream& s, void* const* args = nullptr);
  /// KernelShape::operand_bytes of a launch of `k` (its parameter layout known) with `args`; 0 when the cost model
  /// does not cost `k` by its operands or no argument points into device memory. For a template GEMM
  /// (OperandRule::kTritonTemplate) it also sets shape.operand_gemm (template_gemm).
  double launch_operand_bytes(const struct Kernel& k, KernelShape& shape, void* const* args);

  /// Graph executables share the Graph type (an instantiated copy).
  Result<Graph*> instantiate(Graph& g);
  Status launch_graph(Graph& exec, Stream& s);

  /// Host time of the calling thread after an API call of the default overhead.
  SimTime api_call() { return clock().api_call(options_.api_overhead); }

 private:
  Status wait_point(const sched::Dep& d);
  Status make_ipc_event(Event& e);
  static void release_ipc_event(Event& e);
  Status record_ipc_event(Event& e, Stream& s);
  Status query_ipc_event(Event& e);
  Status synchronize_ipc_event(Event& e);
  Status wait_ipc_event(Stream& s, Event& e);
  Status query_point(const sched::Dep& d);

  RuntimeOptions options_;
  sched::Timeline timeline_;
  MemoryRegistry memory_;
  std::unique_ptr<CostModel> cost_;
  std::vector<std::unique_ptr<Device>> devices_;

  std::shared_mutex handles_mu_;
  std::unordered_map<const void*, std::unique_ptr<Stream>> streams_;
  std::unordered_map<const void*, std::unique_ptr<Event>> events_;
  std::unordered_map<const void*, std::shared_ptr<Graph>> graphs_;
  std::mutex capture_mu_;
  struct ConditionalHandle {
    const Graph* graph;
    uint64_t default_value;
  };
  std::unordered_map<uint64_t, ConditionalHandle> conditionals_;  ///< guarded by capture_mu_
  uint64_t next_conditional_ = 1;
  std::mutex objects_mu_;  ///< user objects and libraries
  std::unordered_map<const void*, std::shared_ptr<UserObject>> user_objects_;
  std::unordered_map<const void*, std::shared_ptr<CodeLibrary>> libraries_;

  std::atomic<ActivitySink*> activity_sink_{nullptr};  ///< set_activity_sink
  std::atomic<uint64_t> next_capture_id_{1};
  /// Bumped whenever a stream is destroyed: invalidates per-thread handle caches.
  std::atomic<uint64_t> stream_generation_{1};
};

}  // namespace genie::fakecuda
