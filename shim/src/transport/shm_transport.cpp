// SPDX-License-Identifier: Apache-2.0
// ShmTransport: the rendezvous through the control segment, cross-rank checks, zero-copy data movement and
// reduction on the CPU, point-to-point mailboxes, and the small all-gathers of split and shrink.
#include "transport/shm_transport.hpp"

#include <emmintrin.h>
#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "genie/common/log.hpp"
#include "peer_memory.hpp"

namespace genie::shim {
namespace {

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

uint64_t random_u64() {
  uint64_t v = 0;
  while (getrandom(&v, sizeof(v), 0) != sizeof(v)) {
  }
  return v | 1;
}

// How a sub-communicator's rank 0 tells the other members where its control segment is.
struct SegmentEntry {
  int32_t pid;
  int32_t fd;
  uint64_t id;
};

}  // namespace

ShmTransport::ShmTransport(std::unique_ptr<SharedSegment> seg, std::vector<RankInfo> peers, int rank)
    : seg_(std::move(seg)), peers_(std::move(peers)), rank_(rank), nranks_(static_cast<int>(peers_.size())) {
  pidfds_ = open_peer_pidfds(peers_, rank_);
  const int me = static_cast<int>(getpid());
  for (const RankInfo& p : peers_) cross_process_ |= p.pid != me;  // every rank of this transport is on this host
}

ShmTransport::~ShmTransport() { close_peer_pidfds(pidfds_); }

void ShmTransport::fail_all(const Status& why) {
  owner_->set_async_error(why);
  int expected = 0;
  seg_->header().broken.compare_exchange_strong(expected, static_cast<int>(why.code()), std::memory_order_acq_rel);
  seg_->ring();
}

Status ShmTransport::wait_check(const std::function<std::vector<int>()>& missing, const WaitWhat& what_in,
                                std::chrono::steady_clock::time_point& since) {
  // The hang timeout counts from the first check (after a short spin), not from the call: most waits end before it,
  // and reading the clock per wait was a fifth of a stream worker's time per call (docs/BENCHMARKS.md).
  if (since == std::chrono::steady_clock::time_point{}) since = std::chrono::steady_clock::now();
  const auto what = [&] { return what_string(what_in); };
  const uint64_t id = this->id();
  if (owner_->aborted()) return Status(Errc::kRemote, "communicator aborted");
  const std::vector<int> waiting_for = missing();
  auto names = [&] {
    std::string m;
    for (int r : waiting_for) m += (m.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r);
    return m.empty() ? std::string("no one") : m;
  };
  if (int b = seg_->header().broken.load(std::memory_order_acquire); b != 0) {
    // Another rank gave up first; say what this one was still waiting for, so every rank's log names the culprit.
    GENIE_LOG_ERROR("shim",
                    "comm {:#x} rank {}: {} stopped: the communicator failed on another rank (still missing: {})", id,
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
        GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}; the communicator fails with ncclRemoteError", id, rank_, msg);
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
      GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}; the communicator fails with ncclRemoteError", id, rank_, msg);
      fail_all(Status(Errc::kRemote, msg));
      return Status(Errc::kRemote, msg);
    }
  }
  return Status::ok();
}

Status ShmTransport::wait_all_reach(std::atomic<uint64_t> RankSlot::*counter, uint64_t target,
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

Status ShmTransport::barrier(uint64_t seq, int phase, const WaitWhat& what) {
  const uint64_t target = seq * kPhasesPerCall + static_cast<uint64_t>(phase);
  seg_->slot(rank_).progress.store(target, std::memory_order_release);
  seg_->ring();
  return wait_all_reach(&RankSlot::progress, target, nullptr, what);
}

Result<SimTime> ShmTransport::collective(const CollCall& c, uint64_t seq, SimTime ready) {
  RankSlot& my = seg_->slot(rank_);
  my.ready_ns = ready.count_ns();
  my.desc = c.desc();
  my.send = c.send_ref;
  my.recv = c.recv_ref;
  my.scalar = c.scalar();
  my.in_place = c.sendbuff == c.recvbuff ? 1u : 0u;
  my.arrived.store(seq, std::memory_order_release);
  seg_->ring();

  const WaitWhat what{&my.desc, "", seq};
  GENIE_TRY(wait_all_reach(&RankSlot::arrived, seq, nullptr, what));

  // Every rank compares every call with rank 0's: all ranks reach the same verdict.
  for (int r = 1; r < nranks_; ++r) {
    const CallDesc& d0 = seg_->slot(0).desc;
    const CallDesc& dr = seg_->slot(r).desc;
    if (dr == d0) continue;
    std::string msg = "collective mismatch on comm " + fmt::format("{:#x}", id()) + " (call #" + std::to_string(seq) +
                      "): rank 0 called " + describe_call(d0) + " but rank " + std::to_string(r) + " called " +
                      describe_call(dr);
    GENIE_LOG_ERROR("shim", "{}; the call fails with ncclInvalidUsage", msg);
    const Status mismatch(Errc::kInvalidUsage, msg);
    owner_->set_async_error(mismatch);
    // Everyone must have read the descriptors before anyone posts its next call.
    (void)barrier(seq, kPhasesPerCall - 1, what);
    int expected = 0;
    seg_->header().broken.compare_exchange_strong(expected, static_cast<int>(Errc::kInvalidUsage));
    return mismatch;
  }

  SimTime start = ready;
  for (int r = 0; r < nranks_; ++r) start = max(start, SimTime::ns(seg_->slot(r).ready_ns));
  // GENIE_DATA=none: only control data moves; every rank reaches the same verdict (same call, same span).
  if (owner_->moves_bytes(span_bytes(c, nranks_))) {
    GENIE_TRY(move_data(c, seq));
  } else {
    GENIE_TRY(barrier(seq, kPhasesPerCall - 1, what));
  }
  return start;
}

Status ShmTransport::move_data(const CollCall& c, uint64_t seq) {
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

Status ShmTransport::p2p(std::vector<P2PMessage>& msgs, SimTime ready) {
  struct State {
    bool posted = false;
    bool done = false;
  };
  std::vector<State> st(msgs.size());
  // One pass: post what can be posted, consume what arrived, collect acknowledgements. Never blocks on one
  // message, so sends and receives of one group in any order cannot deadlock.
  auto step = [&](bool* progressed) -> Status {
    for (size_t i = 0; i < msgs.size(); ++i) {
      P2PMessage& m = msgs[i];
      const P2PCall& c = m.call;
      auto& s = st[i];
      if (s.done) continue;
      if (c.is_send) {
        Mailbox& mb = seg_->mailbox(rank_, c.peer);
        if (!s.posted) {
          if (mb.posted.load(std::memory_order_relaxed) != m.index - 1) continue;  // an earlier send goes first
          if (mb.consumed.load(std::memory_order_acquire) + kMailboxDepth < m.index) continue;  // ring full
          MailEntry& e = mb.ring[(m.index - 1) % kMailboxDepth];
          e.bytes = c.bytes;
          e.buf = c.ref;
          e.send_ready_ns = ready.count_ns();
          e.recv_ready_ns = 0;
          mb.posted.store(m.index, std::memory_order_release);
          seg_->ring();
          s.posted = true;
          *progressed = true;
        }
        if (mb.consumed.load(std::memory_order_acquire) >= m.index) {
          const MailEntry& e = mb.ring[(m.index - 1) % kMailboxDepth];
          m.moved = c.bytes;
          m.peer_ready = SimTime::ns(e.recv_ready_ns);
          s.done = true;
          *progressed = true;
        }
      } else {
        Mailbox& mb = seg_->mailbox(c.peer, rank_);
        if (mb.consumed.load(std::memory_order_relaxed) != m.index - 1) continue;
        if (mb.posted.load(std::memory_order_acquire) < m.index) continue;
        MailEntry& e = mb.ring[(m.index - 1) % kMailboxDepth];
        if (e.bytes > c.bytes) {
          Status st =
              invalid_usage("rank " + std::to_string(c.peer) + " sent " + std::to_string(e.bytes) + " bytes but rank " +
                            std::to_string(rank_) + " posted a receive of only " + std::to_string(c.bytes) + " bytes");
          GENIE_LOG_ERROR("shim", "comm {:#x} rank {}: {}", id(), rank_, st.message());
          return st;
        }
        if (e.bytes > 0 && owner_->moves_bytes(e.bytes)) {  // the receiver moves the bytes (GENIE_DATA)
          GENIE_ASSIGN_OR_RETURN(char* src, PeerMemory::instance().resolve(e.buf));
          if (src != c.buf) std::memmove(c.buf, src, e.bytes);
        }
        m.moved = e.bytes;
        m.peer_ready = SimTime::ns(e.send_ready_ns);
        e.recv_ready_ns = ready.count_ns();
        mb.consumed.store(m.index, std::memory_order_release);
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
    GENIE_TRY(step(&progressed));
    if (progressed || all_done()) continue;
    GENIE_TRY(seg_->wait(
        [&] {
          // Ready when any pending message can move.
          for (size_t i = 0; i < msgs.size(); ++i) {
            if (st[i].done) continue;
            const P2PCall& c = msgs[i].call;
            const uint64_t index = msgs[i].index;
            if (c.is_send) {
              const Mailbox& mb = seg_->mailbox(rank_, c.peer);
              if (!st[i].posted ? mb.consumed.load(std::memory_order_acquire) + kMailboxDepth >= index &&
                                      mb.posted.load(std::memory_order_relaxed) == index - 1
                                : mb.consumed.load(std::memory_order_acquire) >= index)
                return true;
            } else {
              const Mailbox& mb = seg_->mailbox(c.peer, rank_);
              if (mb.posted.load(std::memory_order_acquire) >= index &&
                  mb.consumed.load(std::memory_order_relaxed) == index - 1)
                return true;
            }
          }
          return false;
        },
        [&] {
          return wait_check(
              [&] {
                std::vector<int> m;
                for (size_t i = 0; i < msgs.size(); ++i)
                  if (!st[i].done && std::find(m.begin(), m.end(), msgs[i].call.peer) == m.end())
                    m.push_back(msgs[i].call.peer);
                return m;
              },
              WaitWhat{nullptr, "point-to-point", 0}, since);
        }));
  }
  return Status::ok();
}

Result<std::vector<std::vector<uint8_t>>> ShmTransport::gather(const std::vector<int>& members, const void* mine,
                                                               size_t len) {
  return gather_on(main_lane_, members, mine, len);
}

Result<std::vector<std::vector<uint8_t>>> ShmTransport::gather_on(GatherLane& lane, const std::vector<int>& members,
                                                                  const void* mine, size_t len) {
  GENIE_ASSERT(len <= kGatherBytes, "gather payload too large");
  const uint64_t seq = ++lane.seq;
  RankSlot& my = seg_->slot(rank_);
  const WaitWhat what{nullptr, "communicator split/shrink", 0};
  // Everyone who took part in this rank's previous exchange must have read that payload before it is
  // overwritten; after a split that is every rank of the parent, not only this colour's members.
  const std::vector<int> prev = lane.prev_members.empty() ? members : lane.prev_members;
  GENIE_TRY(wait_all_reach(lane.done_field, seq - 1, &prev, what));
  lane.prev_members = members;
  std::memcpy(my.*lane.payload, mine, len);
  (my.*lane.seq_field).store(seq, std::memory_order_release);
  seg_->ring();
  GENIE_TRY(wait_all_reach(lane.seq_field, seq, &members, what));
  std::vector<std::vector<uint8_t>> out;
  for (int r : members) {
    const uint8_t* p = seg_->slot(r).*lane.payload;
    out.emplace_back(p, p + len);
  }
  (my.*lane.done_field).store(seq, std::memory_order_release);
  seg_->ring();
  return out;
}

void ShmTransport::skip_sub_exchanges() {
  sub_lane_.seq += 2;
  seg_->slot(rank_).sub_gather_done.store(sub_lane_.seq, std::memory_order_release);
  seg_->ring();
}

Result<std::unique_ptr<Transport>> ShmTransport::sub(const std::vector<int>& members, int my_index) {
  // The new rank 0 creates the segment; the others learn its fd through this one.
  SegmentEntry mine{};
  std::unique_ptr<SharedSegment> seg;
  if (my_index == 0) {
    uint64_t sid = random_u64();
    GENIE_ASSIGN_OR_RETURN(SharedSegment * s, SharedSegment::create(static_cast<int>(members.size()), sid));
    seg.reset(s);
    mine = {static_cast<int32_t>(getpid()), s->fd(), sid};
  }
  GENIE_ASSIGN_OR_RETURN(auto all, gather_on(sub_lane_, members, &mine, sizeof(mine)));
  if (my_index != 0) {
    SegmentEntry root{};
    std::memcpy(&root, all[0].data(), sizeof(root));
    GENIE_ASSIGN_OR_RETURN(SharedSegment * s,
                           SharedSegment::open(root.pid, root.fd, root.id, static_cast<int>(members.size())));
    seg.reset(s);
  }
  // Keep rank 0's fd valid until every member has mapped the segment.
  GENIE_TRY(gather_on(sub_lane_, members, &mine, 1).status());
  std::vector<RankInfo> table;
  for (size_t i = 0; i < members.size(); ++i) {
    RankInfo ri = peers_[static_cast<size_t>(members[i])];
    ri.rank = static_cast<int32_t>(i);
    table.push_back(ri);
  }
  return std::unique_ptr<Transport>(std::make_unique<ShmTransport>(std::move(seg), std::move(table), my_index));
}

}  // namespace genie::shim
