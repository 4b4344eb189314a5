// SPDX-License-Identifier: Apache-2.0
// Executing a communicator's calls as stream ops, in the order they were issued: each meets its peers and moves its
// bytes through the Transport, and ends when the CallTimer says; a failed call holds its stream as a GPU would.
#include <algorithm>
#include <thread>

#include "communicator.hpp"
#include "genie/common/block_pool.hpp"
#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "nccl_debug.hpp"
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
}  // namespace

double hang_timeout_s() {
  static const double v = config::global().get(kHangTimeoutS);
  return v;
}

uint64_t span_bytes(const CollCall& c, int nranks) {
  const uint64_t one = c.count * netsim::datatype_size(c.datatype);
  switch (c.collective) {
    case netsim::Collective::kAllGather:      // receive: nranks blocks
    case netsim::Collective::kReduceScatter:  // send: nranks blocks
    case netsim::Collective::kAllToAll:       // both: nranks blocks
    case netsim::Collective::kGather:         // the root's receive buffer
    case netsim::Collective::kScatter:        // the root's send buffer
      return one * static_cast<uint64_t>(std::max(nranks, 1));
    default:
      return one;
  }
}

namespace {
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

}  // namespace

double scalar_from_bytes(const void* p, netsim::DataType dt) { return scalar_value(p, dt); }

double CollCall::scalar() const {
  return op.device_scalar ? scalar_value(op.device_scalar, op.scalar_type) : op.host_scalar;
}

std::string describe_call(const CallDesc& d) {
  auto c = static_cast<netsim::Collective>(d.collective);
  std::string s = std::string(netsim::collective_api_name(c)) + "(count=" + std::to_string(d.count) +
                  ", datatype=" + netsim::datatype_name(static_cast<netsim::DataType>(d.datatype));
  if (netsim::collective_reduces(c)) s += std::string(", op=") + netsim::redop_name(static_cast<netsim::RedOp>(d.redop));
  if (c == netsim::Collective::kBroadcast || c == netsim::Collective::kReduce || c == netsim::Collective::kGather ||
      c == netsim::Collective::kScatter)
    s += ", root=" + std::to_string(d.root);
  return s + ")";
}

std::string what_string(const WaitWhat& w) {
  if (w.desc) return describe_call(*w.desc) + " #" + std::to_string(w.seq);
  return w.text;
}

template <class Run>
Status Communicator::enqueue(const char* label, Run run, fakecuda::Stream& s, sched::OpKind kind, uint64_t bytes) {
  if (suspended()) return invalid_usage(std::string(label) + " on a suspended communicator (ncclCommSuspend)");
  sched::OpSpec spec;
  spec.label = label;
  spec.may_run_inline = false;  // it waits for peers: never on the calling thread (-g N drives several ranks)
  spec.kind = kind;
  spec.bytes = bytes;
  spec.comm = key_;
  spec.seq = call_seq_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (timer_->external()) {
    // Timed outside this process: this lane's floor holds the op's ready time until the timer has it.
    spec.external = true;
    rt_.timeline().register_injector();
  }
  // A captured op runs at every graph replay, not once: only direct submissions count as outstanding, and
  // only they take a place in the issue order (a replayed op runs when its graph reaches it).
  const bool counted = !s.capturing.load(std::memory_order_acquire);
  const uint64_t order = counted ? issued_.fetch_add(1, std::memory_order_relaxed) + 1 : 0;
  // The closure is freed by the stream's worker: pooled (genie/common/block_pool.hpp). It holds the communicator by
  // a plain pointer when the op is counted (let_go keeps the communicator until counted ops have finished); a
  // captured op holds a reference, since its graph may be replayed at any time.
  spec.run = pooled([ref = OpCommRef(this, counted ? nullptr : shared_from_this()), run = std::move(run),
                     order](SimTime ready, const sched::ExternalOp& lane) mutable -> Result<SimTime> {
    Result<SimTime> r = run(*ref.comm, order, ready, lane);
    if (ref.counted()) ref.comm->op_finished();  // the last use of the communicator (it may be gone after it)
    return r;
  });
  auto r = rt_.submit(s, std::move(spec));
  if (!r.is_ok() && counted) {
    {
      std::lock_guard lk(exec_mu_);
      end_turn(order);  // it will never run: do not hold up the ops issued after it
    }
    op_finished();  // the handle, which holds the communicator, is in this call: it cannot be let go yet
  }
  return r.status();
}

Status Communicator::wait_turn(std::unique_lock<std::mutex>& lk, uint64_t order, const sched::ExternalOp& lane) {
  if (order == 0) return Status::ok();
  // While it waits for an op issued before it (on another stream), this op cannot inject: that op's lane
  // bounds when the communicator next puts traffic on the network, so this lane holds no floor meanwhile
  // (holding its own ready time would stop the coordinator's clock before the time the earlier op needs).
  // The caller holds the floor again at its new ready time.
  if (executed_ + 1 < order) lane.gate();
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
  const char* label = netsim::collective_api_name(call.collective);
  const uint64_t bytes = call.count * netsim::datatype_size(call.datatype);
  return enqueue(
      label,
      [call = std::move(call)](Communicator& c, uint64_t order, SimTime ready, const sched::ExternalOp& lane) {
        return c.run_collective(call, order, ready, lane);
      },
      s, sched::OpKind::kCollective, bytes);
}

Status Communicator::enqueue_p2p(std::vector<P2PCall> calls, fakecuda::Stream& s) {
  uint64_t bytes = 0;
  for (const auto& c : calls) bytes += c.is_send ? c.bytes : 0;
  return enqueue(
      "SendRecv",
      [calls = std::move(calls)](Communicator& c, uint64_t order, SimTime ready, const sched::ExternalOp& lane) mutable {
        return c.run_p2p(calls, order, ready, lane);
      },
      s, sched::OpKind::kP2p, bytes);
}

Status Communicator::enqueue_put(PutCall call, fakecuda::Stream& s) {
  const uint64_t bytes = call.bytes;
  return enqueue(
      call.win ? "PutSignal" : "Signal",
      [call](Communicator& c, uint64_t order, SimTime ready, const sched::ExternalOp& lane) {
        return c.run_put(call, order, ready, lane);
      },
      s, sched::OpKind::kP2p, bytes);
}

Status Communicator::enqueue_wait_signal(std::vector<SignalWait> waits, fakecuda::Stream& s) {
  return enqueue(
      "WaitSignal",
      [waits = std::move(waits)](Communicator& c, uint64_t order, SimTime ready, const sched::ExternalOp& lane) {
        return c.run_wait_signal(waits, order, ready, lane);
      },
      s, sched::OpKind::kP2p, 0);
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

Result<SimTime> Communicator::fail_call(SimTime ready, const Status& why) {
  set_async_error(why);  // unless the transport or timer set a more precise one first
  return hold_after_failure(*this, ready, why);
}

Result<SimTime> Communicator::run_collective(const CollCall& c, uint64_t order, SimTime ready,
                                             const sched::ExternalOp& lane) {
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};  // declared after lk: ends the turn with exec_mu_ held
  if (Status t = wait_turn(lk, order, lane); !t.is_ok()) return hold_after_failure(*this, ready, t);
  ready = max(ready, last_end_);
  lane.hold(ready);
  const uint64_t seq = ++exec_seq_;
  const CallDesc desc = c.desc();
  const WaitWhat what{&desc, "", seq};
  if (Status st = timer_->begin_collective(c, seq, ready, lane); !st.is_ok()) return fail_call(ready, st);
  Result<SimTime> start = transport_->collective(c, seq, ready);
  if (!start.is_ok()) return fail_call(ready, start.status());
  Result<SimTime> end = timer_->end_collective(c, ready, start.value(), what);
  if (!end.is_ok()) return fail_call(ready, end.status());
  last_end_ = end.value();
  return last_end_;
}

Result<SimTime> Communicator::run_p2p(std::vector<P2PCall>& calls, uint64_t order, SimTime ready,
                                      const sched::ExternalOp& lane) {
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};  // declared after lk: ends the turn with exec_mu_ held
  if (Status t = wait_turn(lk, order, lane); !t.is_ok()) return hold_after_failure(*this, ready, t);
  ready = max(ready, last_end_);
  lane.hold(ready);
  // Message k of each ordered pair of ranks is the k-th send of its sender to that receiver: NCCL's per-pair order.
  std::vector<P2PMessage> msgs(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    const P2PCall& c = calls[i];
    msgs[i].call = c;
    msgs[i].index = c.is_send ? ++sent_[static_cast<size_t>(c.peer)] : ++received_[static_cast<size_t>(c.peer)];
  }
  if (Status st = timer_->begin_p2p(msgs, ready, lane); !st.is_ok()) return fail_call(ready, st);
  if (Status st = transport_->p2p(msgs, ready); !st.is_ok()) return fail_call(ready, st);
  Result<SimTime> end = timer_->end_p2p(msgs, ready);
  if (!end.is_ok()) return fail_call(ready, end.status());
  last_end_ = end.value();
  return last_end_;
}

}  // namespace genie::shim
