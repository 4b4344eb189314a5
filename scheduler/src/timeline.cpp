// SPDX-License-Identifier: Apache-2.0
// Lane and Timeline: inline completion in virtual mode, worker threads for everything that must wait.
#include "genie/sched/timeline.hpp"

#include <thread>

#include "genie/common/log.hpp"

namespace genie::sched {

struct Op {
  OpSpec spec;
  SimTime not_before;
  std::atomic<bool> done{false};
  SimTime start, end;
  Status status;
};

Dep Dep::on(std::shared_ptr<Op> op) {
  Dep d;
  d.op_ = std::move(op);
  return d;
}

bool Dep::resolved() const { return !op_ || op_->done.load(std::memory_order_acquire); }
SimTime Dep::time() const { return op_ ? op_->end : time_; }
Status Dep::status() const { return op_ && resolved() ? op_->status : Status::ok(); }

struct Timeline::Core {
  Core(ClockOptions o, bool trace) : clock(o), record_trace(trace) {}
  Clock clock;
  bool record_trace;
  std::mutex mu;
  std::condition_variable cv;

  void wait_for(const std::function<bool()>& pred) {
    std::unique_lock lk(mu);
    cv.wait(lk, pred);
  }
  // Called by workers after an op completes. Notifying under the lock means a waiter that saw the op's
  // done flag under the lock returns only after this call has let go of the core.
  void notify_completion() {
    std::lock_guard lk(mu);
    cv.notify_all();
  }
};

struct Lane::State {
  std::shared_ptr<Timeline::Core> core;
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Op>> queue;
  std::shared_ptr<Op> pending_tail;  // last queued op, while not done
  SimTime last_end = SimTime::zero();  // end of the last completed op
  Status error;                        // first error seen on this lane
  bool worker_started = false;
  bool stop = false;
  std::vector<OpRecord> records;
};

namespace {

// Runs `spec` at planned start `ready`; writes start, end and status (the shared core of the inline
// path, which has no Op object, and of the worker).
void run_spec(Timeline::Core& tl, OpSpec& spec, SimTime ready, SimTime* start, SimTime* end, Status* status) {
  // `ready` is the planned start: the previous op's planned end, the host's enqueue time and the
  // dependencies. In realtime mode the worker sleeps until the planned end, so a late wake-up does not
  // push later ops back (a GPU runs queued work back to back).
  Clock& clock = tl.clock;
  *start = ready;
  if (spec.run) {
    Result<SimTime> r = spec.run(ready);
    if (r.is_ok()) {
      *end = max(r.value(), ready);
    } else {
      *status = r.status();
      *end = clock.is_virtual() ? ready : max(ready, clock.wall_now());
    }
    return;
  }
  if (spec.action) spec.action();
  *end = ready + spec.duration;
  if (!clock.is_virtual()) {
    clock.sleep_until(*end);
  }
}

Result<SimTime> wait_dep(Timeline::Core& core, const Dep& d) {
  if (!d.resolved()) core.wait_for([&] { return d.resolved(); });
  Status s = d.status();
  if (!s.is_ok()) return s;
  return d.time();
}

void worker_loop(std::shared_ptr<Lane::State> st) {
  Timeline::Core& tl = *st->core;
  for (;;) {
    std::shared_ptr<Op> op;
    SimTime prev_end;
    {
      std::unique_lock lk(st->mu);
      st->cv.wait(lk, [&] { return !st->queue.empty() || st->stop; });
      if (st->queue.empty()) return;  // stopped and drained
      op = st->queue.front();
      prev_end = st->last_end;
    }
    SimTime ready = max(prev_end, op->not_before);
    for (const Dep& d : op->spec.deps) {
      auto t = wait_dep(tl, d);
      if (t.is_ok()) ready = max(ready, t.value());
    }
    run_spec(tl, op->spec, ready, &op->start, &op->end, &op->status);
    {
      std::lock_guard lk(st->mu);
      st->last_end = op->end;
      if (!op->status.is_ok() && st->error.is_ok()) st->error = op->status;
      st->queue.pop_front();
      if (st->pending_tail == op) st->pending_tail.reset();
      if (tl.record_trace) st->records.push_back({op->spec.label, op->start, op->end});
    }
    // Release the op's closures (they may hold buffers) before signalling.
    op->spec.action = nullptr;
    op->spec.run = nullptr;
    {
      std::lock_guard lk(tl.mu);
      op->done.store(true, std::memory_order_release);
      tl.cv.notify_all();
    }
  }
}

}  // namespace

Lane::Lane(Timeline& timeline) : timeline_(timeline), state_(std::make_shared<State>()) {
  state_->core = timeline.core_;
}

Lane::~Lane() {
  {
    std::lock_guard lk(state_->mu);
    state_->stop = true;
  }
  state_->cv.notify_all();
}

Dep Lane::submit(OpSpec spec, SimTime host_now) {
  State& st = *state_;
  Clock& clock = timeline_.clock();
  std::unique_lock lk(st.mu);
  if (clock.is_virtual() && spec.may_run_inline && !st.pending_tail) {
    bool deps_known = true;
    SimTime ready = max(st.last_end, host_now);
    for (const Dep& d : spec.deps) {
      if (!d.resolved()) { deps_known = false; break; }
      ready = max(ready, d.time());
    }
    if (deps_known) {
      // Complete now: the op's start and end are known and nothing runs before it.
      SimTime start, end;
      Status status;
      // Bytes moved by the emulator are not the application's CPU time: exclude them from host time.
      bool has_work = spec.action || spec.run;
      SimTime work_start = has_work ? clock.wall_now() : SimTime::zero();
      run_spec(*st.core, spec, ready, &start, &end, &status);
      if (has_work) clock.exclude_cpu_time(clock.wall_now() - work_start);
      st.last_end = end;
      if (st.core->record_trace) st.records.push_back({spec.label, start, end});
      if (status.is_ok()) return Dep::at(end);
      if (st.error.is_ok()) st.error = status;
      auto failed = std::make_shared<Op>();
      failed->status = std::move(status);
      failed->start = start;
      failed->end = end;
      failed->done.store(true, std::memory_order_release);
      return Dep::on(std::move(failed));
    }
  }
  auto op = std::make_shared<Op>();
  op->spec = std::move(spec);
  op->not_before = host_now;
  st.queue.push_back(op);
  st.pending_tail = op;
  if (!st.worker_started) {
    st.worker_started = true;
    std::thread(worker_loop, state_).detach();
  }
  lk.unlock();
  st.cv.notify_one();
  return Dep::on(op);
}

Dep Lane::tail() const {
  std::lock_guard lk(state_->mu);
  return state_->pending_tail ? Dep::on(state_->pending_tail) : Dep::at(state_->last_end);
}

bool Lane::drained() const { return tail().resolved(); }

bool Lane::complete_by(SimTime host_now) const {
  Dep d = tail();
  if (!d.resolved()) return false;
  return !timeline_.clock().is_virtual() || d.time() <= host_now;
}

Result<SimTime> Lane::synchronize() {
  Dep d = tail();
  auto t = timeline_.wait(d);
  std::lock_guard lk(state_->mu);
  if (!state_->error.is_ok()) return state_->error;
  return t;
}

bool Lane::wait_drained_for(std::chrono::milliseconds timeout) {
  Dep d = tail();
  return timeline_.wait_for([&] { return d.resolved(); }, timeout);
}

std::vector<OpRecord> Lane::records() const {
  std::lock_guard lk(state_->mu);
  return state_->records;
}

Timeline::Timeline(ClockOptions clock_options, bool record_trace)
    : core_(std::make_shared<Core>(clock_options, record_trace)) {}

Clock& Timeline::clock() { return core_->clock; }
bool Timeline::record_trace() const { return core_->record_trace; }

void Timeline::wait_for(const std::function<bool()>& pred) { core_->wait_for(pred); }

bool Timeline::wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  std::unique_lock lk(core_->mu);
  return core_->cv.wait_for(lk, timeout, pred);
}

Result<SimTime> Timeline::wait(const Dep& d) { return wait_dep(*core_, d); }

}  // namespace genie::sched
