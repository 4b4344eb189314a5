// SPDX-License-Identifier: Apache-2.0
// Executing calls: the rendezvous through the control segment, cross-rank checks, zero-copy data movement
// and reduction on the CPU, and the netsim-timed completion of collectives and point-to-point batches.
#include <emmintrin.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "communicator.hpp"
#include "genie/common/block_pool.hpp"
#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "nccl_debug.hpp"
#include "peer_memory.hpp"
#include "reduce/float_formats.hpp"

namespace genie::shim {
namespace {

const config::Param<double> kHangTimeoutS{
    "hang_timeout",
    300.0,
    "Seconds a rank waits for its peers to reach the same collective or message before it reports the missing "
    "ranks and fails the communicator with ncclRemoteError (0: wait forever).",
    {},
    0.0,
    1e7};
const config::Param<std::string> kData{"data",
                                       "copy",
                                       "copy: collectives move and reduce real bytes; none: timing only (buffers "
                                       "are left untouched), for very large runs.",
                                       {"copy", "none"}};

}  // namespace

double hang_timeout_s() {
  static const double v = config::global().get(kHangTimeoutS);
  return v;
}

namespace {
bool move_bytes() {
  static const bool v = [] {
    bool copy = config::global().get(kData) != "none";
    if (!copy) GENIE_LOG_WARN("shim", "GENIE_DATA=none: collectives are timed but move no data; results are garbage");
    return copy;
  }();
  return v;
}

// Reads a PreMulSum scalar stored in the collective's datatype.
double scalar_value(const void* p, netsim::DataType dt) {
  switch (dt) {
    case netsim::DataType::kInt8:
      return *static_cast<const int8_t*>(p);
    case netsim::DataType::kUint8:
      return *static_cast<const uint8_t*>(p);
    case netsim::DataType::kInt32:
      return *static_cast<const int32_t*>(p);
    case netsim::DataType::kUint32:
      return *static_cast<const uint32_t*>(p);
    case netsim::DataType::kInt64:
      return static_cast<double>(*static_cast<const int64_t*>(p));
    case netsim::DataType::kUint64:
      return static_cast<double>(*static_cast<const uint64_t*>(p));
    case netsim::DataType::kFloat16:
      return half_to_float(*static_cast<const uint16_t*>(p));
    case netsim::DataType::kFloat32:
      return *static_cast<const float*>(p);
    case netsim::DataType::kFloat64:
      return *static_cast<const double*>(p);
    case netsim::DataType::kBfloat16:
      return bfloat16_to_float(*static_cast<const uint16_t*>(p));
    case netsim::DataType::kFp8E4M3:
      return fp8_e4m3_to_float(*static_cast<const uint8_t*>(p));
    case netsim::DataType::kFp8E5M2:
      return fp8_e5m2_to_float(*static_cast<const uint8_t*>(p));
  }
  return 1.0;
}

// All-reduce block: reduced once, then copied to every peer from cache (fits L2 with 8 sources).
constexpr uint64_t kFusedBlockBytes = 64 * 1024;

// Copies with non-temporal stores (SSE2, baseline x86-64): the destination is an output this rank never
// reads again, so skipping the read-for-ownership of each line saves a third of the traffic.
void copy_streaming(char* dst, const char* src, size_t n) {
  const size_t head = std::min(n, (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16);
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  const size_t body = n / 16;
  auto* d = reinterpret_cast<__m128i*>(dst);
  auto* s = reinterpret_cast<const __m128i*>(src);
  for (size_t i = 0; i < body; ++i) _mm_stream_si128(d + i, _mm_loadu_si128(s + i));
  std::memcpy(dst + body * 16, src + body * 16, n - body * 16);
}

// [lo, hi) of n elements for part `i` of `parts`.
inline uint64_t part_lo(uint64_t n, int parts, int i) {
  return n * static_cast<uint64_t>(i) / static_cast<uint64_t>(parts);
}

}  // namespace

double scalar_from_bytes(const void* p, netsim::DataType dt) { return scalar_value(p, dt); }

std::string Communicator::describe(const CallDesc& d) const {
  auto c = static_cast<netsim::Collective>(d.collective);
  std::string s = std::string(collective_api_name(c)) + "(count=" + std::to_string(d.count) +
                  ", datatype=" + netsim::datatype_name(static_cast<netsim::DataType>(d.datatype));
  if (netsim::collective_reduces(c)) s += std::string(", op=") + redop_api_name(static_cast<ReduceOp>(d.redop));
  if (c == netsim::Collective::kBroadcast || c == netsim::Collective::kReduce || c == netsim::Collective::kGather ||
      c == netsim::Collective::kScatter)
    s += ", root=" + std::to_string(d.root);
  return s + ")";
}

std::string Communicator::what_string(const WaitWhat& w) const {
  if (w.desc) return describe(*w.desc) + " #" + std::to_string(w.seq);
  return w.text;
}

Status Communicator::wait_check(const std::function<std::vector<int>()>& missing, const WaitWhat& what_in,
                                std::chrono::steady_clock::time_point& since) {
  // The hang timeout counts from the first check (after a short spin), not from the call: most waits end before it,
  // and reading the clock per wait was a fifth of a stream worker's time per call (docs/BENCHMARKS.md).
  if (since == std::chrono::steady_clock::time_point{}) since = std::chrono::steady_clock::now();
  const auto what = [&] { return what_string(what_in); };
  if (aborted()) return Status(Errc::kRemote, "communicator aborted");
  const std::vector<int> waiting_for = missing();
  auto names = [&] {
    std::string m;
    for (int r : waiting_for) m += (m.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r);
    return m.empty() ? std::string("no one") : m;
  };
  if (int b = seg_->header().broken.load(std::memory_order_acquire); b != 0) {
    // Another rank gave up first; say what this one was still waiting for, so every rank's log names the culprit.
    GENIE_LOG_ERROR("shim",
                    "comm {:#x} rank {}: {} stopped: the communicator failed on another rank (still missing: {})", id_,
                    rank_, what(), names());
    return Status(static_cast<Errc>(b), "communicator failed on another rank");
  }
  // A peer we still wait for has exited: its pidfd turns readable (even while a zombie). Peers that left
  // after their part was done (a finished p2p partner) do not matter.
  std::vector<pollfd> pfds;
  std::vector<int> who;
  for (int r : waiting_for)
    if (pidfds_[static_cast<size_t>(r)] >= 0) {
      pfds.push_back({pidfds_[static_cast<size_t>(r)], POLLIN, 0});
      who.push_back(r);
    }
  if (!pfds.empty() && ::poll(pfds.data(), pfds.size(), 0) > 0) {
    for (size_t i = 0; i < pfds.size(); ++i)
      if (pfds[i].revents & POLLIN) {
        int r = who[i];
        std::string msg = "peer rank " + std::to_string(r) + " (pid " +
                          std::to_string(peers_[static_cast<size_t>(r)].pid) + ") exited during " + what();
        GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}; the communicator fails with ncclRemoteError", id_, rank_, msg);
        fail_all(Status(Errc::kRemote, msg));
        return Status(Errc::kRemote, msg);
      }
  }
  const double limit = hang_timeout_s();
  if (limit > 0) {
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
    if (waited >= limit) {
      std::string msg =
          what() + " has waited " + fmt::format("{:.1f}", waited) + " s (GENIE_HANG_TIMEOUT) for missing " + names();
      GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}; the communicator fails with ncclRemoteError", id_, rank_, msg);
      fail_all(Status(Errc::kRemote, msg));
      return Status(Errc::kRemote, msg);
    }
  }
  return Status::ok();
}

Status Communicator::wait_all_reach(std::atomic<uint64_t> RankSlot::*counter, uint64_t target,
                                    const std::vector<int>* members, const WaitWhat& what) {
  auto below = [&](int r) { return (seg_->slot(r).*counter).load(std::memory_order_acquire) < target; };
  auto for_each = [&](auto&& fn) {
    if (members) {
      for (int r : *members) fn(r);
    } else {
      for (int r = 0; r < nranks_; ++r) fn(r);
    }
  };
  std::chrono::steady_clock::time_point since{};  // started by the first wait_check
  return seg_->wait(
      [&] {
        bool all = true;
        for_each([&](int r) { all = all && !below(r); });
        return all;
      },
      [&] {
        return wait_check(
            [&] {
              std::vector<int> m;
              for_each([&](int r) {
                if (below(r)) m.push_back(r);
              });
              return m;
            },
            what, since);
      });
}

Status Communicator::barrier(uint64_t seq, int phase, const WaitWhat& what) {
  const uint64_t target = seq * kPhasesPerCall + static_cast<uint64_t>(phase);
  seg_->slot(rank_).progress.store(target, std::memory_order_release);
  seg_->ring();
  return wait_all_reach(&RankSlot::progress, target, nullptr, what);
}

SimTime Communicator::finish_time(SimTime start, SimTime duration) {
  sched::Clock& clock = rt_->clock();
  if (clock.is_virtual()) return start + duration;
  // Realtime: the call ends `duration` after every rank arrived (now, or the planned start if later),
  // unless moving the bytes took longer than the modelled fabric would.
  SimTime end = max(start, clock.wall_now()) + duration;
  clock.sleep_until(end);
  return max(end, clock.wall_now());
}

template <class Run>
Status Communicator::enqueue(const char* label, Run run, fakecuda::Stream& s, sched::OpKind kind, uint64_t bytes) {
  sched::OpSpec spec;
  spec.label = label;
  spec.may_run_inline = false;  // it waits for peers: never on the calling thread (-g N drives several ranks)
  spec.kind = kind;
  spec.bytes = bytes;
  spec.comm = key_;
  spec.seq = call_seq_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (coord_) {
    // Timed by the coordinator: this lane's floor holds the op's ready time until the coordinator has it.
    spec.external = true;
    rt_->timeline().register_injector();
  }
  // A captured op runs at every graph replay, not once: only direct submissions count as outstanding, and
  // only they take a place in the issue order (a replayed op runs when its graph reaches it).
  const bool counted = !s.capturing.load(std::memory_order_acquire);
  const uint64_t order = counted ? issued_.fetch_add(1, std::memory_order_relaxed) + 1 : 0;
  // The closure is freed by the stream's worker: pooled (genie/common/block_pool.hpp). It holds the communicator by
  // a plain pointer when the op is counted (let_go keeps the communicator until counted ops have finished); a
  // captured op holds a reference, since its graph may be replayed at any time.
  spec.run = pooled([ref = OpCommRef(this, counted ? nullptr : shared_from_this()), run = std::move(run),
                     order](SimTime ready) mutable -> Result<SimTime> {
    Result<SimTime> r = run(*ref.comm, order, ready);
    if (ref.counted()) ref.comm->op_finished();  // the last use of the communicator (it may be gone after it)
    return r;
  });
  auto r = rt_->submit(s, std::move(spec));
  if (!r.is_ok() && counted) {
    {
      std::lock_guard lk(exec_mu_);
      end_turn(order);  // it will never run: do not hold up the ops issued after it
    }
    op_finished();  // the handle, which holds the communicator, is in this call: it cannot be let go yet
  }
  return r.status();
}

Status Communicator::wait_turn(std::unique_lock<std::mutex>& lk, uint64_t order) {
  if (order == 0) return Status::ok();
  // While it waits for an op issued before it (on another stream), this op cannot inject: that op's lane
  // bounds when the communicator next puts traffic on the network, so this lane holds no floor meanwhile
  // (holding its own ready time would stop the coordinator's clock before the time the earlier op needs).
  // The caller holds the floor again at its new ready time.
  if (executed_ + 1 < order) sched::ExternalOp::current().gate();
  while (executed_ + 1 < order) {
    if (aborted()) return Status(Errc::kRemote, "communicator aborted");
    if (async_error() != Errc::kOk) return Status(Errc::kRemote, "communicator failed");
    // Bounded waits: an abort from another thread is seen without a notification.
    exec_cv_.wait_for(lk, std::chrono::milliseconds(20));
  }
  return Status::ok();
}

void Communicator::end_turn(uint64_t order) {
  if (order == 0 || order <= executed_) return;
  executed_ = order;
  exec_cv_.notify_all();
}

Status Communicator::enqueue_collective(CollCall call, fakecuda::Stream& s) {
  const char* label = collective_api_name(call.collective);
  const uint64_t bytes = call.count * netsim::datatype_size(call.datatype);
  return enqueue(
      label,
      [call = std::move(call)](Communicator& c, uint64_t order, SimTime ready) {
        return c.run_collective(call, order, ready);
      },
      s, sched::OpKind::kCollective, bytes);
}

Status Communicator::enqueue_p2p(std::vector<P2PCall> calls, fakecuda::Stream& s) {
  uint64_t bytes = 0;
  for (const auto& c : calls) bytes += c.is_send ? c.bytes : 0;
  return enqueue(
      "SendRecv",
      [calls = std::move(calls)](Communicator& c, uint64_t order, SimTime ready) mutable {
        return c.run_p2p(calls, order, ready);
      },
      s, sched::OpKind::kP2p, bytes);
}

namespace {
netsim::RedOp timing_redop(ReduceOp op) {
  switch (op) {
    case ReduceOp::kProd: return netsim::RedOp::kProd;
    case ReduceOp::kMax: return netsim::RedOp::kMax;
    case ReduceOp::kMin: return netsim::RedOp::kMin;
    case ReduceOp::kAvg: return netsim::RedOp::kAvg;
    default: return netsim::RedOp::kSum;  // sum and PreMulSum move the same bytes
  }
}
}  // namespace

Result<SimTime> Communicator::wait_coordinator(const sched::CoordClient::Batch& batch, const WaitWhat& what) {
  const auto since = std::chrono::steady_clock::now();
  auto res = coord_->wait(batch, [&]() -> Status {
    if (aborted()) return Status(Errc::kRemote, "communicator aborted");
    const double limit = hang_timeout_s();
    if (limit > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count() >= limit)
      return Status(Errc::kRemote, what_string(what) + " has waited " + fmt::format("{:.1f}", limit) +
                                       " s (GENIE_HANG_TIMEOUT) for the coordinator to resolve it");
    return Status::ok();
  });
  if (!res.is_ok()) return res.status();
  int64_t end = 0;
  for (const auto& r : res.value()) {
    if (r.status != 0) return Status(Errc::kRemote, "the coordinator failed " + what_string(what) + ": " + r.error);
    end = std::max(end, r.end_ns);
  }
  if (!res->empty() && !res->front().is_p2p && nccl_debug_level() >= NcclDebugLevel::kInfo) {
    const auto& r = res->front();
    nccl_debug(NcclDebugLevel::kInfo, cuda_dev_, "%s -> %s/%s, %d channels, %.2f us (coordinator, global clock)",
               what_string(what).c_str(), netsim::algorithm_name(static_cast<netsim::Algorithm>(r.algorithm)),
               netsim::protocol_name(static_cast<netsim::Protocol>(r.protocol)), r.nchannels,
               (r.end_ns - r.start_ns) / 1e3);
  }
  return SimTime::ns(end);
}

// After a failure the stream op stays pending, as a GPU kernel waiting on a dead peer would, until the
// program aborts the communicator (nccl-tests and PyTorch's watchdog poll ncclCommGetAsyncError and then
// call ncclCommAbort); a program that never does is released after one more hang timeout.
Result<SimTime> hold_after_failure(Communicator& c, SimTime ready, const Status& why) {
  const double limit = hang_timeout_s() > 0 ? hang_timeout_s() : 60.0;
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  while (!c.aborted() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (c.aborted()) return ready;
  return why;
}

Result<SimTime> Communicator::run_collective(const CollCall& c, uint64_t order, SimTime ready) {
  if (fab_) return run_collective_fabric(c, order, ready);
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};  // declared after lk: ends the turn with exec_mu_ held
  if (Status t = wait_turn(lk, order); !t.is_ok()) return hold_after_failure(*this, ready, t);
  ready = max(ready, last_end_);
  sched::ExternalOp::current().hold(ready);
  const uint64_t seq = ++exec_seq_;
  RankSlot& my = seg_->slot(rank_);
  my.ready_ns = ready.count_ns();
  my.desc = CallDesc{static_cast<uint32_t>(c.collective), static_cast<uint32_t>(c.datatype),
                     static_cast<uint32_t>(c.op.kind), c.root, c.count};
  my.send = c.send_ref;
  my.recv = c.recv_ref;
  my.scalar = c.op.device_scalar ? scalar_value(c.op.device_scalar, c.op.scalar_type) : c.op.host_scalar;
  my.in_place = c.sendbuff == c.recvbuff ? 1u : 0u;
  my.arrived.store(seq, std::memory_order_release);
  seg_->ring();

  // With a coordinator the call is timed on the job's global clock: it learns this rank's ready time now.
  sched::CoordClient::Batch batch;
  if (coord_) {
    sched::coord::Coll m;
    m.comm = key_;
    m.seq = seq;
    m.comm_rank = rank_;
    m.ready_ns = ready.count_ns();
    m.collective = static_cast<uint8_t>(c.collective);
    m.datatype = static_cast<uint8_t>(c.datatype);
    m.redop = static_cast<uint8_t>(timing_redop(c.op.kind));
    m.root = c.root;
    m.count = c.count;
    auto b = coord_->submit({sched::coord::Message{m}}, sched::ExternalOp::current());
    if (!b.is_ok()) {
      set_async_error(b.status());
      return hold_after_failure(*this, ready, b.status());
    }
    batch = b.value();
  }

  const WaitWhat what{&my.desc, "", seq};
  Status st = wait_all_reach(&RankSlot::arrived, seq, nullptr, what);
  if (!st.is_ok()) {
    set_async_error(st);
    return hold_after_failure(*this, ready, st);
  }

  // Every rank compares every call with rank 0's: all ranks reach the same verdict.
  for (int r = 1; r < nranks_; ++r) {
    const CallDesc& d0 = seg_->slot(0).desc;
    const CallDesc& dr = seg_->slot(r).desc;
    if (dr == d0) continue;
    std::string msg = "collective mismatch on comm " + fmt::format("{:#x}", id_) + " (call #" + std::to_string(seq) +
                      "): rank 0 called " + describe(d0) + " but rank " + std::to_string(r) + " called " + describe(dr);
    GENIE_LOG_ERROR("shim", "{}; the call fails with ncclInvalidUsage", msg);
    const Status mismatch(Errc::kInvalidUsage, msg);
    set_async_error(mismatch);
    // Everyone must have read the descriptors before anyone posts its next call.
    (void)barrier(seq, kPhasesPerCall - 1, what);
    int expected = 0;
    seg_->header().broken.compare_exchange_strong(expected, static_cast<int>(Errc::kInvalidUsage));
    return hold_after_failure(*this, ready, mismatch);
  }

  SimTime start = ready;
  for (int r = 0; r < nranks_; ++r) start = max(start, SimTime::ns(seg_->slot(r).ready_ns));
  if (move_bytes()) {
    st = move_data(c, seq);
    if (!st.is_ok()) {
      set_async_error(st);
      return hold_after_failure(*this, ready, st);
    }
  } else {
    st = barrier(seq, kPhasesPerCall - 1, what);
    if (!st.is_ok()) {
      set_async_error(st);
      return hold_after_failure(*this, ready, st);
    }
  }
  if (coord_) {
    auto end = wait_coordinator(batch, what);
    if (!end.is_ok()) {
      GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", id_, rank_, end.status().message());
      set_async_error(end.status());
      return hold_after_failure(*this, ready, end.status());
    }
    last_end_ = end.value();
    return last_end_;
  }
  auto cost = timing_->collective(c.collective, c.count, c.datatype, c.root);
  if (!cost.is_ok()) {
    GENIE_LOG_ERROR("shim", "netsim cannot time {}: {}", what_string(what), cost.status().message());
    set_async_error(Status(Errc::kInternal, "netsim cannot time " + what_string(what) + ": " + cost.status().message()));
    return cost.status();
  }
  last_end_ = finish_time(start, cost->duration);
  return last_end_;
}

Status Communicator::move_data(const CollCall& c, uint64_t seq) {
  const int n = nranks_;
  const int me = rank_;
  const size_t es = netsim::datatype_size(c.datatype);
  const uint64_t count = c.count;
  const WaitWhat what{&seg_->slot(me).desc, "", seq};
  PeerMemory& pm = PeerMemory::instance();
  auto send_of = [&](int r) { return pm.resolve(seg_->slot(r).send); };
  auto recv_of = [&](int r) { return pm.resolve(seg_->slot(r).recv); };
  std::vector<const void*> srcs(static_cast<size_t>(n));
  std::vector<double> scalars(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) scalars[static_cast<size_t>(r)] = seg_->slot(r).scalar;
  const ReduceOp op = c.op.kind;
  const int last = kPhasesPerCall - 1;

  switch (c.collective) {
    case netsim::Collective::kAllReduce: {
      // Each rank reduces its 1/n part and writes the result straight into every rank's output, block by
      // block while the block is still in cache: every input byte is read once and every output byte written
      // once (the minimum traffic), with one barrier. In place is safe: part `me` of any rank's buffer is
      // read only by this rank, and before it is overwritten.
      const uint64_t lo = part_lo(count, n, me), hi = part_lo(count, n, me + 1);
      std::vector<char*> outs(static_cast<size_t>(n));
      std::vector<char*> ins(static_cast<size_t>(n));
      for (int r = 0; r < n; ++r) {
        GENIE_ASSIGN_OR_RETURN(ins[static_cast<size_t>(r)], send_of(r));
        GENIE_ASSIGN_OR_RETURN(outs[static_cast<size_t>(r)], recv_of(r));
      }
      const uint64_t block = std::max<uint64_t>(1, kFusedBlockBytes / es);
      // The reduced block stays in a cache-resident scratch buffer; outputs are written once, streamed.
      thread_local std::vector<char> scratch_buf(kFusedBlockBytes);
      char* scratch = scratch_buf.data();
      for (uint64_t b = lo; b < hi; b += block) {
        const uint64_t m = std::min(block, hi - b);
        for (int r = 0; r < n; ++r) srcs[static_cast<size_t>(r)] = ins[static_cast<size_t>(r)] + b * es;
        reduce_arrays(scratch, srcs.data(), scalars.data(), n, m, c.datatype, op);
        for (int r = 0; r < n; ++r) copy_streaming(outs[static_cast<size_t>(r)] + b * es, scratch, m * es);
      }
      _mm_sfence();  // streamed stores are visible to peers before the barrier's release
      break;
    }
    case netsim::Collective::kReduceScatter: {
      for (int r = 0; r < n; ++r) {
        GENIE_ASSIGN_OR_RETURN(char* p, send_of(r));
        srcs[static_cast<size_t>(r)] = p + static_cast<uint64_t>(me) * count * es;
      }
      GENIE_ASSIGN_OR_RETURN(char* mine, recv_of(me));
      reduce_arrays(mine, srcs.data(), scalars.data(), n, count, c.datatype, op);
      break;
    }
    case netsim::Collective::kReduce: {
      // Each rank reduces its part straight into the root's buffer.
      const uint64_t lo = part_lo(count, n, me), hi = part_lo(count, n, me + 1);
      for (int r = 0; r < n; ++r) {
        GENIE_ASSIGN_OR_RETURN(char* p, send_of(r));
        srcs[static_cast<size_t>(r)] = p + lo * es;
      }
      GENIE_ASSIGN_OR_RETURN(char* root, recv_of(c.root));
      if (hi > lo) reduce_arrays(root + lo * es, srcs.data(), scalars.data(), n, hi - lo, c.datatype, op);
      break;
    }
    case netsim::Collective::kBroadcast: {
      GENIE_ASSIGN_OR_RETURN(char* src, send_of(c.root));
      GENIE_ASSIGN_OR_RETURN(char* mine, recv_of(me));
      if (mine != src) std::memcpy(mine, src, count * es);
      break;
    }
    case netsim::Collective::kAllGather: {
      GENIE_ASSIGN_OR_RETURN(char* mine, recv_of(me));
      for (int r = 0; r < n; ++r) {
        GENIE_ASSIGN_OR_RETURN(char* src, send_of(r));
        char* dst = mine + static_cast<uint64_t>(r) * count * es;
        if (dst != src && !(r != me && seg_->slot(r).in_place && src == nullptr)) std::memmove(dst, src, count * es);
      }
      break;
    }
    case netsim::Collective::kGather: {
      GENIE_ASSIGN_OR_RETURN(char* root, recv_of(c.root));
      GENIE_ASSIGN_OR_RETURN(char* src, send_of(me));
      char* dst = root + static_cast<uint64_t>(me) * count * es;
      if (dst != src) std::memmove(dst, src, count * es);
      break;
    }
    case netsim::Collective::kScatter: {
      GENIE_ASSIGN_OR_RETURN(char* root, send_of(c.root));
      GENIE_ASSIGN_OR_RETURN(char* mine, recv_of(me));
      const char* src = root + static_cast<uint64_t>(me) * count * es;
      if (mine != src) std::memmove(mine, src, count * es);
      break;
    }
    case netsim::Collective::kAllToAll: {
      GENIE_ASSIGN_OR_RETURN(char* mine, recv_of(me));
      bool any_in_place = false;
      for (int r = 0; r < n; ++r) any_in_place |= seg_->slot(r).in_place != 0;
      const uint64_t block = count * es;
      if (!any_in_place) {
        for (int r = 0; r < n; ++r) {
          GENIE_ASSIGN_OR_RETURN(char* src, send_of(r));
          std::memcpy(mine + static_cast<uint64_t>(r) * block, src + static_cast<uint64_t>(me) * block, block);
        }
      } else {
        // Someone overwrites its own input: read every block first, write after everyone has read.
        std::vector<char> tmp(block * static_cast<uint64_t>(n));
        for (int r = 0; r < n; ++r) {
          GENIE_ASSIGN_OR_RETURN(char* src, send_of(r));
          std::memcpy(tmp.data() + static_cast<uint64_t>(r) * block, src + static_cast<uint64_t>(me) * block, block);
        }
        GENIE_TRY(barrier(seq, 1, what));
        std::memcpy(mine, tmp.data(), tmp.size());
      }
      break;
    }
    case netsim::Collective::kSendRecv:
      return internal_error("SendRecv is not a collective call");
  }
  // Nobody may reuse or free its buffers before every peer has finished reading them.
  return barrier(seq, last, what);
}

Result<SimTime> Communicator::run_p2p(std::vector<P2PCall>& calls, uint64_t order, SimTime ready) {
  if (fab_) return run_p2p_fabric(calls, order, ready);
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};  // declared after lk: ends the turn with exec_mu_ held
  if (Status t = wait_turn(lk, order); !t.is_ok()) return hold_after_failure(*this, ready, t);
  ready = max(ready, last_end_);
  sched::ExternalOp::current().hold(ready);
  struct State {
    uint64_t index = 0;  // message number on its (src, dst) pair, from 1
    bool posted = false;
    bool done = false;
  };
  std::vector<State> st(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    auto& c = calls[i];
    st[i].index = c.is_send ? ++sent_[static_cast<size_t>(c.peer)] : ++received_[static_cast<size_t>(c.peer)];
  }
  sched::CoordClient::Batch batch;
  if (coord_) {
    std::vector<sched::coord::Message> msgs;
    for (size_t i = 0; i < calls.size(); ++i) {
      const auto& c = calls[i];
      sched::coord::P2p m;
      m.comm = key_;
      m.src = c.is_send ? rank_ : c.peer;
      m.dst = c.is_send ? c.peer : rank_;
      m.index = st[i].index;
      m.bytes = c.bytes;
      m.count = c.count;
      m.datatype = static_cast<uint8_t>(c.datatype);
      m.ready_ns = ready.count_ns();
      m.is_send = c.is_send ? 1 : 0;
      m.comm_rank = rank_;
      msgs.emplace_back(m);
    }
    auto b = coord_->submit(msgs, sched::ExternalOp::current());
    if (!b.is_ok()) {
      set_async_error(b.status());
      return hold_after_failure(*this, ready, b.status());
    }
    batch = b.value();
  }
  SimTime end = ready;
  Status failure;
  const bool copy = move_bytes();
  // One pass: post what can be posted, consume what arrived, collect acknowledgements. Never blocks on one
  // message, so sends and receives of one group in any order cannot deadlock.
  auto step = [&](bool* progressed) -> Status {
    for (size_t i = 0; i < calls.size(); ++i) {
      auto& c = calls[i];
      auto& s = st[i];
      if (s.done) continue;
      if (c.is_send) {
        Mailbox& mb = seg_->mailbox(rank_, c.peer);
        if (!s.posted) {
          if (mb.posted.load(std::memory_order_relaxed) != s.index - 1) continue;  // an earlier send goes first
          if (mb.consumed.load(std::memory_order_acquire) + kMailboxDepth < s.index) continue;  // ring full
          MailEntry& e = mb.ring[(s.index - 1) % kMailboxDepth];
          e.bytes = c.bytes;
          e.buf = c.ref;
          e.send_ready_ns = ready.count_ns();
          e.recv_ready_ns = 0;
          mb.posted.store(s.index, std::memory_order_release);
          seg_->ring();
          s.posted = true;
          *progressed = true;
        }
        if (mb.consumed.load(std::memory_order_acquire) >= s.index) {
          const MailEntry& e = mb.ring[(s.index - 1) % kMailboxDepth];
          if (!coord_) {
            SimTime start = max(ready, SimTime::ns(e.recv_ready_ns));
            GENIE_ASSIGN_OR_RETURN(SimTime d, timing_->p2p(rank_, c.peer, c.bytes));
            end = max(end, start + d);
          }
          s.done = true;
          *progressed = true;
        }
      } else {
        Mailbox& mb = seg_->mailbox(c.peer, rank_);
        if (mb.consumed.load(std::memory_order_relaxed) != s.index - 1) continue;
        if (mb.posted.load(std::memory_order_acquire) < s.index) continue;
        MailEntry& e = mb.ring[(s.index - 1) % kMailboxDepth];
        if (e.bytes > c.bytes)
          return invalid_usage("rank " + std::to_string(c.peer) + " sent " + std::to_string(e.bytes) +
                               " bytes but rank " + std::to_string(rank_) + " posted a receive of only " +
                               std::to_string(c.bytes) + " bytes");
        if (copy && e.bytes > 0) {
          GENIE_ASSIGN_OR_RETURN(char* src, PeerMemory::instance().resolve(e.buf));
          if (src != c.buf) std::memmove(c.buf, src, e.bytes);
        }
        if (!coord_) {
          SimTime start = max(ready, SimTime::ns(e.send_ready_ns));
          GENIE_ASSIGN_OR_RETURN(SimTime d, timing_->p2p(c.peer, rank_, e.bytes));
          end = max(end, start + d);
        }
        e.recv_ready_ns = ready.count_ns();
        mb.consumed.store(s.index, std::memory_order_release);
        seg_->ring();
        s.done = true;
        *progressed = true;
      }
    }
    return Status::ok();
  };
  auto all_done = [&] {
    for (const auto& s : st)
      if (!s.done) return false;
    return true;
  };
  std::chrono::steady_clock::time_point since{};  // started by the first wait_check
  while (!all_done()) {
    bool progressed = false;
    Status s = step(&progressed);
    if (!s.is_ok()) {
      failure = s;
      break;
    }
    if (progressed || all_done()) continue;
    s = seg_->wait(
        [&] {
          // Ready when any pending call can move.
          for (size_t i = 0; i < calls.size(); ++i) {
            if (st[i].done) continue;
            const auto& c = calls[i];
            if (c.is_send) {
              const Mailbox& mb = seg_->mailbox(rank_, c.peer);
              if (!st[i].posted ? mb.consumed.load(std::memory_order_acquire) + kMailboxDepth >= st[i].index &&
                                      mb.posted.load(std::memory_order_relaxed) == st[i].index - 1
                                : mb.consumed.load(std::memory_order_acquire) >= st[i].index)
                return true;
            } else {
              const Mailbox& mb = seg_->mailbox(c.peer, rank_);
              if (mb.posted.load(std::memory_order_acquire) >= st[i].index &&
                  mb.consumed.load(std::memory_order_relaxed) == st[i].index - 1)
                return true;
            }
          }
          return false;
        },
        [&] {
          return wait_check(
              [&] {
                std::vector<int> m;
                for (size_t i = 0; i < calls.size(); ++i)
                  if (!st[i].done && std::find(m.begin(), m.end(), calls[i].peer) == m.end())
                    m.push_back(calls[i].peer);
                return m;
              },
              WaitWhat{nullptr, "point-to-point", 0}, since);
        });
    if (!s.is_ok()) {
      failure = s;
      break;
    }
  }
  if (!failure.is_ok()) {
    if (failure.code() == Errc::kInvalidUsage)
      GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", id_, rank_, failure.message());
    set_async_error(failure);
    return hold_after_failure(*this, ready, failure);
  }
  if (coord_) {
    auto e = wait_coordinator(batch, WaitWhat{nullptr, "point-to-point", 0});
    if (!e.is_ok()) {
      GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", id_, rank_, e.status().message());
      set_async_error(e.status());
      return hold_after_failure(*this, ready, e.status());
    }
    last_end_ = max(e.value(), ready);
    return last_end_;
  }
  last_end_ = finish_time(end, SimTime::zero());
  return last_end_;
}

}  // namespace genie::shim
