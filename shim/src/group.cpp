// SPDX-License-Identifier: Apache-2.0
// Groups: pending inits run concurrently (one thread may init several ranks, nccl-tests -g N), then each
// communicator's calls are enqueued; sends and receives of one (communicator, stream) become one batch, so
// matching pairs inside a group never deadlock.
#include "group.hpp"

#include <map>
#include <optional>
#include <thread>

#include "genie/fakecuda/runtime.hpp"

namespace genie::shim {
namespace {

struct Task {
  std::shared_ptr<Communicator> comm;
  fakecuda::Stream* stream = nullptr;
  bool is_p2p = false;
  CollCall coll;
  std::vector<P2PCall> p2p;  // the whole batch of its (comm, stream), in the first task of that pair
  bool merged = false;       // a p2p call folded into an earlier task's batch
};
struct InitTask {
  ncclComm* handle;
  std::function<Result<std::shared_ptr<Communicator>>()> init;
};
struct GroupState {
  int depth = 0;
  std::vector<InitTask> inits;
  std::vector<Task> tasks;
  Status error;  // first error of a call inside the group; reported by ncclGroupEnd
};
thread_local GroupState t_group;

Status launch(std::vector<Task>& tasks, SimTime launch_overhead) {
  Status first;
  for (auto& t : tasks) {
    if (t.merged) continue;
    // Each launch is charged before it is enqueued: the op becomes ready when the host has issued it.
    if (launch_overhead > SimTime::zero()) t.comm->runtime().clock().api_call(launch_overhead);
    Status s = t.is_p2p ? t.comm->enqueue_p2p(std::move(t.p2p), *t.stream)
                        : t.comm->enqueue_collective(std::move(t.coll), *t.stream);
    if (!s.is_ok() && first.is_ok()) first = s;
  }
  return first;
}

// NCCL's estimate of a group: each communicator's calls run one after another, and ranks of one
// communicator driven from this thread run in parallel: the time is the slowest communicator's sum. A one-rank
// communicator's calls are local copies that NCCL does not plan (ncclLaunchOneRank), so they add nothing; a group
// of only those has no estimate (NCCL leaves estimatedTime at NCCL_UNDEF_FLOAT: -1 measured with NCCL 2.28.9 on an
// H200, docs/validation.md).
Result<std::optional<float>> estimate_us(std::vector<Task>& tasks) {
  std::map<const Communicator*, double> per_comm_us;
  for (auto& t : tasks) {
    if (t.merged || t.comm->nranks() == 1) continue;
    double us = 0;
    if (!t.is_p2p) {
      GENIE_ASSIGN_OR_RETURN(
          CallCost c, t.comm->timing().collective(t.coll.collective, t.coll.count, t.coll.datatype, t.coll.root));
      us = c.duration.count_ns() / 1e3;
    } else {
      for (const auto& p : t.p2p) {
        int src = p.is_send ? t.comm->rank() : p.peer, dst = p.is_send ? p.peer : t.comm->rank();
        GENIE_ASSIGN_OR_RETURN(SimTime d, t.comm->timing().p2p(src, dst, p.bytes));
        us = std::max(us, d.count_ns() / 1e3);
      }
    }
    per_comm_us[t.comm.get()] += us;
  }
  if (per_comm_us.empty()) return std::optional<float>();
  double worst = 0;
  for (const auto& [c, us] : per_comm_us) worst = std::max(worst, us);
  return std::optional<float>(static_cast<float>(worst));
}

}  // namespace

bool in_group() { return t_group.depth > 0; }

Status note_call_error(Status st) {
  if (t_group.depth > 0 && !st.is_ok() && st.code() != Errc::kNotReady && t_group.error.is_ok()) t_group.error = st;
  return st;
}

Status group_start() {
  ++t_group.depth;
  return Status::ok();
}

Status group_end(float* sim_us, SimTime launch_overhead) {
  GroupState& g = t_group;
  if (g.depth == 0) return invalid_usage("ncclGroupEnd without a matching ncclGroupStart");
  if (--g.depth > 0) return Status::ok();
  std::vector<InitTask> inits = std::move(g.inits);
  std::vector<Task> tasks = std::move(g.tasks);
  Status error = std::move(g.error);
  g = GroupState{};
  // Inits first, concurrently: each blocks until all its peers joined, and they may be our own devices.
  bool pending_nonblocking = false;
  if (!inits.empty()) {
    std::vector<std::thread> threads;
    for (auto& it : inits) {
      if (!it.handle->blocking) {
        pending_nonblocking = true;
        it.handle->init_thread = std::thread([h = it.handle, f = std::move(it.init)] { h->finish(f()); });
      } else {
        threads.emplace_back([h = it.handle, f = std::move(it.init)] { h->finish(f()); });
      }
    }
    for (auto& t : threads) t.join();
    for (auto& it : inits) {
      if (!it.handle->blocking) continue;
      auto r = it.handle->wait_ready();
      if (!r.is_ok() && error.is_ok()) error = r.status();
      // A failed init, or a split with NCCL_SPLIT_NOCOLOR, leaves the caller no communicator.
      if (!r.is_ok() || !r.value()) {
        if (it.handle->out) *it.handle->out = nullptr;
        HandleRegistry::instance().remove(it.handle);
        delete it.handle;
      }
    }
  }
  if (!error.is_ok()) return error;
  if (sim_us) {
    GENIE_ASSIGN_OR_RETURN(std::optional<float> us, estimate_us(tasks));
    if (us) *sim_us = *us;
    return Status::ok();
  }
  GENIE_TRY(launch(tasks, launch_overhead));
  return pending_nonblocking ? Status(Errc::kNotReady, "non-blocking init in progress") : Status::ok();
}

void defer_init(ncclComm* handle, std::function<Result<std::shared_ptr<Communicator>>()> init) {
  t_group.inits.push_back({handle, std::move(init)});
}

Status submit_collective(Communicator& comm, CollCall call, fakecuda::Stream& s) {
  if (!in_group()) return comm.enqueue_collective(std::move(call), s);
  Task t;
  t.comm = comm.shared_from_this();
  t.stream = &s;
  t.coll = std::move(call);
  t_group.tasks.push_back(std::move(t));
  return Status::ok();
}

Status submit_p2p(Communicator& comm, P2PCall call, fakecuda::Stream& s) {
  if (!in_group()) return comm.enqueue_p2p({call}, s);
  for (auto& t : t_group.tasks)
    if (t.is_p2p && !t.merged && t.comm.get() == &comm && t.stream == &s) {
      t.p2p.push_back(call);
      return Status::ok();
    }
  Task t;
  t.comm = comm.shared_from_this();
  t.stream = &s;
  t.is_p2p = true;
  t.p2p.push_back(call);
  t_group.tasks.push_back(std::move(t));
  return Status::ok();
}

}  // namespace genie::shim
