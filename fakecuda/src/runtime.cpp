// SPDX-License-Identifier: Apache-2.0
// Runtime: options, devices, streams and op submission (legacy-stream rules, capture), sync and query.
#include "genie/fakecuda/runtime.hpp"

#include <algorithm>
#include <array>
#include <new>
#include <sstream>
#include <thread>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/activity.hpp"
#include "genie/fakecuda/device_status.hpp"
#include "genie/fakecuda/family_cost_model.hpp"
#include "genie/fakecuda/graph.hpp"
#include "genie/sched/coord_client.hpp"
#include "python_gil.hpp"

namespace genie::fakecuda {
namespace {

const config::Param<std::string> kDevice{"device", "h200",
                                         "Emulated GPU: a preset name (genie presets) or a device JSON file."};
const config::Param<int64_t> kGpus{"gpus", 8, "Emulated devices visible per process (before CUDA_VISIBLE_DEVICES).",
                                   {}, 1.0, 1024.0};
const config::Param<std::string> kVisible{"cuda_visible_devices", "",
                                          "CUDA_VISIBLE_DEVICES: comma-separated ordinals (or GPU-<uuid>) to expose.",
                                          {}, {}, {}, "CUDA_VISIBLE_DEVICES"};
const config::Param<std::string> kClock{"clock", "virtual",
                                        "Clock mode: virtual (nothing sleeps, times are modelled) or realtime "
                                        "(streams sleep for modelled durations).",
                                        {"virtual", "realtime"}};
const config::Param<double> kDilation{"dilation", 1.0,
                                      "Realtime mode: time dilation D. Modelled durations are slept D times longer "
                                      "and measured times read D times shorter, so a fabric D times slower than "
                                      "the modelled one stands in for it (docs/fabric.md).",
                                      {}, 1.0, 1e6};
const config::Param<double> kHostCpuScale{
    "host_cpu_scale", 1.0,
    "Virtual mode: host time charged per second of a host thread's CPU time (1: this machine's CPU stands for the "
    "modelled host's; 0.5: a host twice as fast; 0: not charged, so times are the same every run).",
    {}, 0.0, 1000.0};
// Host cost of a CUDA runtime call that is not a launch. Assumed (no calibration point yet: the H200
// data has only the PyTorch launch path); the cost-model issue (#6) calibrates it.
constexpr int64_t kDefaultApiOverheadNs = 500;
const config::Param<int64_t> kApiOverhead{"fakecuda.api_overhead_ns", kDefaultApiOverheadNs,
                                          "Modelled host cost in ns of a CUDA API call other than a launch.",
                                          {}, 0.0, 1e9};
const config::Param<std::string> kCostTable{"fakecuda.cost_table", "",
                                            "JSON table of measured kernel durations (genie calibrate output)."};
const config::Param<std::string> kCostParams{
    "fakecuda.cost_params", "",
    "Cost-model parameter file (genie calibrate --fit output); empty: the device preset's fitted parameters."};
const config::Param<int64_t> kQueryWaitMs{
    "fakecuda.query_wait_ms", 2000,
    "Virtual mode: wall-clock ms a non-blocking query of unresolved work waits for it before answering not-ready, "
    "when the calling thread enqueues collectives or polls (asks about the same work again within 20 ms); other "
    "threads' first queries (PyTorch's watchdog) answer at once.",
    {}, 0.0, 60000.0};
const config::Param<std::string> kAppClock{
    "app_clock", "wall",
    "What the program's clock reads return (clock_gettime on CLOCK_MONOTONIC/REALTIME and their variants, "
    "gettimeofday): wall (the real clock) or virtual (the calling thread's virtual host time, offset from the "
    "real clock at start-up), for programs that time their own work, like nccl-tests; python: the C clocks stay "
    "real (C++ timeouts: TCPStore, NCCL's watchdog) and Python's time.time and time.perf_counter (and their _ns "
    "forms) read virtual time, time.monotonic real (Megatron's timers and logs, Python's queue and thread timeouts).",
    {"wall", "virtual", "python"}};
const config::Param<bool> kShareable{
    "fakecuda.shareable_memory", true,
    "Back device memory with memfds so NCCL peers in other processes read it in place (off: anonymous memory; "
    "collectives across processes then fail)."};
// One key for every library of the process: fakecuda's copies and memsets, the NCCL shim's collectives and p2p.
const config::Param<std::string> kData{
    "data", "copy",
    "copy: copies, memsets and collectives move real bytes; none: a timing-only run (genie run --data none, "
    "docs/timing-only.md): they keep their modelled durations but move no bytes, except control data of at most 512 "
    "KiB, so device memory costs no host memory; values the program reads from device memory are then garbage or "
    "zeros. The real fabric always moves bytes.",
    {"copy", "none"}};
const config::Param<bool> kTrace{"fakecuda.trace", false,
                                 "Record every stream op for the report and trace (default: when a coordinator is "
                                 "configured, GENIE_COORDINATOR)."};

// Parses CUDA_VISIBLE_DEVICES as the CUDA runtime does: entries up to the first invalid one.
std::vector<int> visible_ordinals(const std::string& text, int physical) {
  std::vector<int> out;
  if (text.empty()) {
    for (int i = 0; i < physical; ++i) out.push_back(i);
    return out;
  }
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" \t");
    if (b == std::string::npos) break;
    item = item.substr(b);
    char* end = nullptr;
    long v = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || v < 0 || v >= physical) break;
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) != out.end()) break;
    out.push_back(static_cast<int>(v));
  }
  return out;
}

GENIE_TLS_FAST thread_local int t_current_device = 0;

}  // namespace

Result<RuntimeOptions> options_from_config() {
  GENIE_TRY(config::global_status());
  const config::Config& cfg = config::global();
  RuntimeOptions o;
  GENIE_ASSIGN_OR_RETURN(o.spec, load_device_spec(cfg.get(kDevice)));
  o.physical_device_count = static_cast<int>(cfg.get(kGpus));
  o.visible_ordinals = visible_ordinals(cfg.get(kVisible), o.physical_device_count);
  o.device_count = static_cast<int>(o.visible_ordinals.size());
  sched::parse_clock_mode(cfg.get(kClock).c_str(), &o.clock.mode);
  o.clock.cpu_time_scale = cfg.get(kHostCpuScale);
  o.clock.dilation = cfg.get(kDilation);
  o.api_overhead = SimTime::ns(cfg.get(kApiOverhead));
  o.cost_table = cfg.get(kCostTable);
  o.cost_params = cfg.get(kCostParams);
  o.query_wait = SimTime::ms(cfg.get(kQueryWaitMs));
  o.app_clock_virtual = cfg.get(kAppClock) == "virtual";
  // Ranks of a job with a coordinator (genie run, genie coordinator, GENIE_COORDINATOR=auto) feed its report:
  // they record unless told not to (genie run --no-report sets GENIE_FAKECUDA_TRACE=0).
  o.record_trace = cfg.source("fakecuda.trace") == config::Source::kDefault ? !cfg.text("coordinator").empty()
                                                                             : cfg.get(kTrace);
  o.shareable_memory = cfg.get(kShareable);
  o.move_data = cfg.get(kData) != "none";
  return o;
}

// ---------------------------------------------------------------------------------------------------
Stream::Stream(Device& dev, Kind kind, unsigned flags, int priority, sched::Timeline& timeline)
    : dev_(dev), kind_(kind), flags_(flags), priority_(priority), lane_(timeline) {
  // Numbered in creation order per process, for the trace's stream tracks (0 is the first legacy stream).
  static std::atomic<uint32_t> next_id{0};
  lane_.set_identity(dev.ordinal(), next_id.fetch_add(1, std::memory_order_relaxed));
}

Device::Device(int ordinal, const DeviceSpec& spec, sched::Timeline& timeline)
    : ordinal_(ordinal), spec_(spec), timeline_(timeline) {
  legacy_ = std::make_unique<Stream>(*this, Stream::Kind::kLegacy, 0, 0, timeline);
}

Stream& Device::per_thread_stream() {
  std::lock_guard lk(mu_);
  auto id = std::this_thread::get_id();
  for (auto& s : per_thread_)
    if (s->owner == id) return *s;
  per_thread_.push_back(std::make_unique<Stream>(*this, Stream::Kind::kPerThread, 0, 0, timeline_));
  per_thread_.back()->owner = id;
  streams_.push_back(per_thread_.back().get());
  return *per_thread_.back();
}

bool Device::reserve_bytes(uint64_t n) {
  uint64_t cur = used_.load(std::memory_order_relaxed);
  do {
    if (n > spec_.memory_bytes || cur > spec_.memory_bytes - n) return false;
  } while (!used_.compare_exchange_weak(cur, cur + n, std::memory_order_relaxed));
  return true;
}

void Device::release_bytes(uint64_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }

void Device::pool_add(uint64_t n) {
  const uint64_t now = pool_used_.fetch_add(n, std::memory_order_relaxed) + n;
  uint64_t high = pool_high_.load(std::memory_order_relaxed);
  while (now > high && !pool_high_.compare_exchange_weak(high, now, std::memory_order_relaxed)) {
  }
}

void Device::add_stream(Stream* s) {
  std::lock_guard lk(mu_);
  streams_.push_back(s);
}

void Device::remove_stream(Stream* s) {
  std::lock_guard lk(mu_);
  streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
}

void Device::legacy_deps(Stream& s, std::vector<sched::Dep>* deps) {
  if (s.kind() == Stream::Kind::kLegacy) {
    std::lock_guard lk(mu_);
    for (Stream* o : streams_)
      if (o->blocking()) deps->push_back(o->lane().tail());
  } else if (s.blocking()) {
    deps->push_back(legacy_->lane().tail());
  }
}

std::vector<Stream*> Device::streams() {
  std::lock_guard lk(mu_);
  std::vector<Stream*> v{legacy_.get()};
  v.insert(v.end(), streams_.begin(), streams_.end());
  return v;
}

bool Device::peer_access_enabled(int peer) const {
  std::lock_guard lk(mu_);
  return peers_.count(peer) != 0;
}

void Device::set_peer_access(int peer, bool on) {
  std::lock_guard lk(mu_);
  if (on) peers_.insert(peer);
  else peers_.erase(peer);
}

// ---------------------------------------------------------------------------------------------------
Runtime::Runtime(RuntimeOptions options)
    : options_(std::move(options)), timeline_(options_.clock, options_.record_trace) {
  KernelTable table;
  if (!options_.cost_table.empty()) {
    auto t = load_kernel_table(options_.cost_table);
    if (t.is_ok()) table = std::move(t.value());
    else GENIE_LOG_ERROR(log::kFakecuda, "{} (using the default cost rules)", t.status().message());
  }
  if (!options_.cost_params.empty()) {
    auto p = load_cost_params(options_.cost_params);
    if (p.is_ok()) cost_ = std::make_unique<FamilyCostModel>(options_.spec, std::move(table), std::move(p.value()));
    else GENIE_LOG_ERROR(log::kFakecuda, "{} (using the preset's cost parameters)", p.status().message());
  }
  if (!cost_) cost_ = make_cost_model(options_.spec, std::move(table));
  for (int i = 0; i < options_.device_count; ++i)
    devices_.push_back(std::make_unique<Device>(i, options_.spec, timeline_));
  GENIE_LOG_INFO(log::kFakecuda, "{} x {} ({}), clock {}", options_.device_count, options_.spec.name,
                 options_.spec.preset, sched::clock_mode_name(options_.clock.mode));
}

Runtime::~Runtime() = default;

namespace {
struct InstanceState {
  std::once_flag once;
  std::atomic<Runtime*> ready{nullptr};
  Runtime* rt = nullptr;
  Status status;
};
InstanceState& instance_state() {
  // Never destroyed (threads may still ask at exit), and made without the heap: the interposed clock_gettime
  // (app_clock.cpp) asks for the runtime from inside malloc, whose allocator may read the clock with its own
  // lock held (ASan's does): a heap allocation here deadlocked every process of an ASan build.
  alignas(InstanceState) static unsigned char storage[sizeof(InstanceState)];
  static InstanceState* s = new (storage) InstanceState();
  return *s;
}
}  // namespace

Runtime* Runtime::existing() { return instance_state().ready.load(std::memory_order_acquire); }

Runtime* Runtime::instance() {
  InstanceState& s = instance_state();
  // Fast path without std::call_once, which writes libstdc++ thread-locals on every call.
  if (Runtime* r = s.ready.load(std::memory_order_acquire)) return r;
  std::call_once(s.once, [&] {
    auto o = options_from_config();
    if (!o.is_ok()) {
      s.status = o.status();
      GENIE_LOG_ERROR(log::kFakecuda, "CUDA emulation cannot start: {}", s.status.message());
      return;
    }
    s.rt = new Runtime(std::move(o.value()));  // never destroyed: see header
    ModuleRegistry::instance().attach(&s.rt->memory());
    log::set_virtual_time_source([]() noexcept -> int64_t {
      Runtime* r = instance_state().rt;
      return r ? r->clock().peek().count_ns() : -1;
    });
    // The effective configuration, where it differs from the defaults (NCCL's set_by= lines).
    const config::Config& cfg = config::global();
    for (const config::ParamInfo& p : config::Registry::instance().all())
      if (cfg.source(p.key) != config::Source::kDefault)
        GENIE_LOG_INFO(log::kFakecuda, "config {}={} (set by {})", p.key, cfg.text(p.key),
                       config::source_name(cfg.source(p.key)));
    if (!s.rt->options().move_data)
      GENIE_LOG_WARN(log::kFakecuda,
                     "GENIE_DATA=none: timing-only run: copies, memsets and collectives of more than {} KiB keep "
                     "their modelled time but move no bytes; values read from device memory are garbage "
                     "(docs/timing-only.md)",
                     kControlDataMaxBytes >> 10);
    s.ready.store(s.rt, std::memory_order_release);
    // Under genie run the process publishes its devices' state for genie smi and its peers' NVML (docs/nvml.md).
    start_status_publisher(*s.rt);
    // Under a coordinator (genie run, GENIE_COORDINATOR) every rank process reports its stream records, also
    // one that never calls NCCL (a single-GPU job): the report then shows its compute and NVTX ranges. Only
    // processes that are ranks (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID set) connect here: a
    // launcher that touches CUDA (torchrun's agent imports torch) is not one; others connect at their first
    // NCCL call. No coordinator configured: nothing.
    if (sched::process_rank_from_environment() >= 0) (void)sched::CoordClient::get(s.rt->timeline());
  });
  return s.rt;
}

const Status& Runtime::instance_status() {
  instance();
  return instance_state().status;
}

int Runtime::current_device() const { return t_current_device; }
void Runtime::set_current_device(int d) { t_current_device = d; }

// --- streams -----------------------------------------------------------------------------------------
Stream* Runtime::resolve_stream(const void* handle, bool per_thread_default, int device) {
  uintptr_t h = reinterpret_cast<uintptr_t>(handle);
  if (h <= 2) {
    Device& dev = *devices_[device >= 0 ? device : current_device()];
    if (h == 0) return per_thread_default ? &dev.per_thread_stream() : &dev.legacy_stream();
    return h == 1 ? &dev.legacy_stream() : &dev.per_thread_stream();
  }
  // One-entry per-thread cache: programs launch many ops on the same stream in a row.
  struct Cache {
    const Runtime* rt = nullptr;
    const void* handle = nullptr;
    Stream* stream = nullptr;
    uint64_t generation = 0;
  };
  GENIE_TLS_FAST thread_local Cache cache;
  uint64_t gen = stream_generation_.load(std::memory_order_acquire);
  if (cache.rt == this && cache.handle == handle && cache.generation == gen) return cache.stream;
  std::shared_lock lk(handles_mu_);
  auto it = streams_.find(handle);
  Stream* found = it == streams_.end() ? nullptr : it->second.get();
  if (found) cache = {this, handle, found, gen};
  return found;
}

Stream* Runtime::create_stream(int device, unsigned flags, int priority) {
  auto s = std::make_unique<Stream>(*devices_[device], Stream::Kind::kUser, flags, priority, timeline_);
  Stream* p = s.get();
  devices_[device]->add_stream(p);
  std::unique_lock lk(handles_mu_);
  streams_.emplace(p, std::move(s));
  return p;
}

Status Runtime::destroy_stream(Stream* s) {
  std::unique_ptr<Stream> owned;
  {
    std::unique_lock lk(handles_mu_);
    auto it = streams_.find(s);
    if (it == streams_.end()) return invalid_argument("unknown stream");
    owned = std::move(it->second);
    streams_.erase(it);
    stream_generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  owned->device().remove_stream(owned.get());
  // ~Lane returns at once; queued work completes on the lane's worker, as cudaStreamDestroy promises.
  return Status::ok();
}

Result<sched::Dep> Runtime::submit(Stream& s, sched::OpSpec spec) { return submit(s, std::move(spec), clock().now()); }

Result<sched::Dep> Runtime::submit(Stream& s, sched::OpSpec spec, SimTime host_now, const KernelShape* shape) {
  // Every op the runtime, NCCL and the libraries put on a stream passes here: the one place a profiler sees it.
  ActivitySink* sink = activity_sink_.load(std::memory_order_acquire);
  if (s.capturing.load(std::memory_order_acquire)) {
    std::lock_guard lk(capture_mu_);
    if (s.capture) {
      if (sink != nullptr) spec.activity = sink->op_submitted(s, spec, host_now, shape, true);
      Graph& g = *s.capture->graph;
      GraphNode node;
      node.spec = std::move(spec);
      node.spec.deps.clear();
      node.deps = s.capture_frontier;
      s.capture_frontier = {g.append(std::move(node))};
      return sched::Dep();
    }
  }
  if (sink != nullptr) spec.activity = sink->op_submitted(s, spec, host_now, shape, false);
  s.device().legacy_deps(s, &spec.deps);
  return s.lane().submit(std::move(spec), host_now);
}

Status Runtime::wait_point(const sched::Dep& d) {
  // The program's CPU time up to the wait counts; the CPU this thread burns while blocked (wake-ups on
  // every op completion of the timeline) does not: a blocked host thread's time is the completion time.
  const SimTime before = clock().now();
  Result<SimTime> waited = SimTime::zero();
  if (d.resolved()) {
    waited = timeline_.wait(d);
  } else {
    GilRelease unlocked;  // what it waits for may be Python code that needs the GIL (python_gil.hpp)
    waited = timeline_.wait(d);
  }
  GENIE_ASSIGN_OR_RETURN(SimTime t, std::move(waited));
  clock().discard_cpu_time();
  clock().wait_until(t);
  const SimTime after = clock().api_call(options_.api_overhead);
  if (t > before) timeline_.record_host("wait", before, after, sched::OpKind::kHostWait);
  return Status::ok();
}

Status Runtime::query_point(const sched::Dep& d) {
  if (!clock().is_virtual()) {
    if (!d.resolved()) return Status(Errc::kNotReady, "work pending");
    GENIE_TRY(d.status());
    clock().api_call(options_.api_overhead);
    return Status::ok();
  }
  // Virtual time: the answer is whether the work has ended by the host time of the query, `now`.
  const SimTime now = clock().api_call(options_.api_overhead);
  if (!d.resolved()) {
    // Unresolved work may still end before `now`. A thread that polls it (asks again within kPollWindow) waits a
    // little in wall time, without charging itself, rather than spin; so does a thread that injects traffic (it
    // enqueues collectives), whose answer must then come from virtual time only (the caching allocator's
    // cudaEventQuery decides what the program does next): it waits until the work has resolved or cannot end by
    // `now`, promising `now` meanwhile (Timeline::wait_until_known; the coordinator tells when it has resolved
    // everything before it). Any other thread's first query answers at once, as CUDA's does: PyTorch's watchdog
    // queries each pending work once per sweep while it holds the process group's lock, which the threads that
    // enqueue work need (waiting there made a pipeline-parallel test take 381 s instead of 27 s). A thread may poll
    // several streams in turn (nccl-tests -g N polls one per device): the last few works it asked about count.
    constexpr auto kPollWindow = std::chrono::milliseconds(20);
    struct Polled {
      uint64_t id = 0;
      std::chrono::steady_clock::time_point at;
    };
    constexpr size_t kPolledKept = 16;
    thread_local std::array<Polled, kPolledKept> t_polled{};
    thread_local size_t t_polled_next = 0;
    const auto wall = std::chrono::steady_clock::now();
    const uint64_t id = d.identity();
    Polled* seen = nullptr;
    for (Polled& p : t_polled)
      if (p.id == id) seen = &p;
    const bool polling = seen && wall - seen->at < kPollWindow;
    const bool wait = polling || timeline_.is_injector();
    auto known = sched::Timeline::Known::kUnknown;
    if (wait) {
      known = timeline_.wait_until_known(d, now, std::chrono::milliseconds(options_.query_wait.count_ns() / 1000000));
      clock().discard_cpu_time();
    }
    if (!seen) seen = &t_polled[t_polled_next++ % kPolledKept];
    seen->id = id;
    seen->at = wait ? std::chrono::steady_clock::now() : wall;
    // Not-ready once known so, even if the work resolves right after: the answer comes from virtual time.
    if (known == sched::Timeline::Known::kNotBy || !d.resolved()) return Status(Errc::kNotReady, "work pending");
  }
  GENIE_TRY(d.status());
  if (d.time() > now) return Status(Errc::kNotReady, "work pending");
  return Status::ok();
}

Status Runtime::synchronize(Stream& s) {
  if (s.capturing.load(std::memory_order_acquire)) return invalid_usage("stream is capturing");
  return wait_point(s.lane().tail());
}

Status Runtime::query(Stream& s) { return query_point(s.lane().tail()); }

Status Runtime::synchronize_device(int device) {
  for (Stream* s : devices_[device]->streams()) GENIE_TRY(wait_point(s->lane().tail()));
  return Status::ok();
}

// --- events --------------------------------------------------------------------------------------------
Event* Runtime::create_event(unsigned flags) {
  auto e = std::make_unique<Event>();
  e->flags = flags;
  e->device = current_device();
  if ((flags & kEventInterprocess) && !make_ipc_event(*e).is_ok()) return nullptr;
  Event* p = e.get();
  std::unique_lock lk(handles_mu_);
  events_.emplace(p, std::move(e));
  return p;
}

Status Runtime::destroy_event(Event* e) {
  std::unique_lock lk(handles_mu_);
  auto it = events_.find(e);
  if (it == events_.end()) return invalid_argument("unknown event");
  release_ipc_event(*e);
  events_.erase(it);
  return Status::ok();
}

Event* Runtime::resolve_event(const void* handle) {
  std::shared_lock lk(handles_mu_);
  auto it = events_.find(handle);
  return it == events_.end() ? nullptr : it->second.get();
}

Status Runtime::record_event(Event& e, Stream& s) {
  if (s.capturing.load(std::memory_order_acquire)) {
    std::lock_guard lk(capture_mu_);
    if (s.capture) {
      std::lock_guard ek(e.mu);
      e.capture = s.capture;
      e.capture_frontier = s.capture_frontier;
      return Status::ok();
    }
  }
  if (e.ipc != nullptr) return record_ipc_event(e, s);
  sched::OpSpec spec;
  spec.label = "event";
  SimTime now = clock().api_call(options_.api_overhead);
  GENIE_ASSIGN_OR_RETURN(sched::Dep d, submit(s, std::move(spec), now));
  std::lock_guard ek(e.mu);
  e.capture.reset();
  e.point = std::move(d);
  e.recorded = true;
  return Status::ok();
}

Status Runtime::wait_event(Stream& s, Event& e) {
  if (e.ipc != nullptr) return wait_ipc_event(s, e);  // `ipc` is set at creation and never changes
  // Lock order: capture_mu_ before an event's mutex (as record_event); copy the event's state first.
  sched::Dep point;
  std::shared_ptr<CaptureSession> capture;
  std::vector<int> frontier;
  {
    std::lock_guard ek(e.mu);
    if (!e.capture && !e.recorded) return Status::ok();  // waiting on a never-recorded event is a no-op
    capture = e.capture;
    frontier = e.capture_frontier;
    point = e.point;
  }
  if (capture) {
    // Fork/join during capture: `s` joins the capture of the event's stream.
    std::lock_guard lk(capture_mu_);
    if (!s.capture) {
      s.capture = capture;
      s.capture_frontier = frontier;
      s.capturing.store(true, std::memory_order_release);
    } else if (s.capture == capture) {
      for (int n : frontier)
        if (std::find(s.capture_frontier.begin(), s.capture_frontier.end(), n) == s.capture_frontier.end())
          s.capture_frontier.push_back(n);
    } else {
      return invalid_usage("event belongs to a different stream capture");
    }
    return Status::ok();
  }
  sched::OpSpec spec;
  spec.label = "wait";
  spec.deps.push_back(std::move(point));
  SimTime now = clock().api_call(options_.api_overhead);
  GENIE_TRY(submit(s, std::move(spec), now));
  return Status::ok();
}

Status Runtime::query_event(Event& e) {
  if (e.ipc != nullptr) return query_ipc_event(e);
  sched::Dep point;
  {
    std::lock_guard ek(e.mu);
    if (!e.recorded) return Status::ok();
    point = e.point;
  }
  return query_point(point);
}

Status Runtime::synchronize_event(Event& e) {
  if (e.ipc != nullptr) return synchronize_ipc_event(e);
  sched::Dep point;
  {
    std::lock_guard ek(e.mu);
    if (!e.recorded) return Status::ok();
    point = e.point;
  }
  return wait_point(point);
}

Result<float> Runtime::elapsed_ms(Event& start, Event& end) {
  sched::Dep a, b;
  // One event may be both arguments (elapsed 0): lock each mutex once.
  auto read = [](Event& e, sched::Dep* point) -> Status {
    std::lock_guard lk(e.mu);
    if (e.flags & kEventDisableTiming) return invalid_usage("an event was created with cudaEventDisableTiming");
    if (!e.recorded) return invalid_usage("an event has not been recorded");
    *point = e.point;
    return Status::ok();
  };
  GENIE_TRY(read(start, &a));
  GENIE_TRY(read(end, &b));
  GENIE_TRY(query_point(a));
  GENIE_TRY(query_point(b));
  return static_cast<float>(static_cast<double>((b.time() - a.time()).count_ns()) / 1e6);
}

}  // namespace genie::fakecuda
