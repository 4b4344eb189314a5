// SPDX-License-Identifier: Apache-2.0
// ScheduleExecutor: data layout of each transfer (which elements it carries, from where, into where), the
// dependency-driven posting of sends and receives, and the CPU reduction of received chunks.
#include "transport/schedule_executor.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <type_traits>

#include "genie/common/config.hpp"
#include "genie/common/huge_pages.hpp"
#include "genie/common/log.hpp"
#include "peer_memory.hpp"
#include "reduce/float_formats.hpp"

namespace genie::shim {
namespace {

const config::Param<int64_t> kPieceBytes{
    "shim.fabric_piece_bytes", 512 * 1024,
    "Real fabric: largest message a chunk of the Schedule is sent in; each piece that arrives is reduced and "
    "forwarded at once (default: NCCL's Simple FIFO step, NCCL_BUFFSIZE / NCCL_STEPS at the default buffer size).",
    {}, 4096.0, 1073741824.0};

uint64_t fabric_piece_bytes() {
  static const uint64_t v = static_cast<uint64_t>(config::global().get(kPieceBytes));
  return v;
}

// Tag index of a piece: the transfer's index above kPieceBits, the piece below; with bit 39 set, a direct call's
// release (the releasing rank below).
constexpr int kPieceBits = 12;
constexpr uint64_t kMaxPieces = uint64_t{1} << kPieceBits;
constexpr uint64_t kReleaseIndex = uint64_t{1} << 39;
constexpr uint64_t kMaxOps = kReleaseIndex >> kPieceBits;

// A piece of `bytes` at `ref` would run past the mapping a peer announced.
bool direct_out_of_range(const BufferRef& ref, uint64_t bytes) {
  return ref.offset > ref.map_size || bytes > ref.map_size - ref.offset;
}

using netsim::Algorithm;
using netsim::Collective;
using netsim::DataType;
using netsim::Step;

// Start of part i of `total` split into `parts` (the first total % parts parts are one longer), as
// netsim's split_part splits bytes; here in elements, so no chunk cuts an element.
uint64_t part_begin(uint64_t total, uint64_t parts, uint64_t i) {
  return i * (total / parts) + std::min<uint64_t>(i, total % parts);
}
uint64_t part_len(uint64_t total, uint64_t parts, uint64_t i) {
  return total / parts + (i < total % parts ? 1 : 0);
}

// Where one transfer's elements live. Offsets are in elements.
struct OpData {
  uint64_t n = 0;          // elements carried (0: skipped on both sides)
  uint64_t src_off = 0;    // sender: offset in its input when it sends its own data
  uint64_t dst_off = 0;    // receiver: offset in its output (copies and final reductions)
  uint64_t in_off = 0;     // receiver: offset of its own input combined with the chunk (reductions)
  int64_t fwd = -1;        // the dependency whose received data the sender forwards (-1: its own input)
  bool reduce = false;     // receiver combines the chunk with its own input
  bool final_ = false;     // reduction complete: the result goes to the output, not to staging
  uint64_t stage_off = 0;  // receiver: byte offset of the chunk in staging (reductions)
};

// Ring position of every rank on each channel, from the channel's first-step edges.
std::vector<std::vector<int>> ring_positions(const netsim::Schedule& s, int n, int nch) {
  std::vector<std::vector<int>> next(static_cast<size_t>(nch), std::vector<int>(static_cast<size_t>(n), -1));
  std::vector<int> first(static_cast<size_t>(nch), -1);
  for (const Step& op : s.ops) {
    if (op.kind != Step::Kind::kTransfer || op.step != 0 || op.slice != 0) continue;
    next[op.channel][static_cast<size_t>(op.src)] = op.dst;
    if (first[op.channel] < 0) first[op.channel] = op.src;
  }
  std::vector<std::vector<int>> pos(static_cast<size_t>(nch), std::vector<int>(static_cast<size_t>(n), 0));
  for (int c = 0; c < nch; ++c) {
    int r = first[static_cast<size_t>(c)] < 0 ? 0 : first[static_cast<size_t>(c)];
    for (int p = 0; p < n && r >= 0; ++p) {
      pos[static_cast<size_t>(c)][static_cast<size_t>(r)] = p;
      r = next[static_cast<size_t>(c)][static_cast<size_t>(r)];
    }
  }
  return pos;
}

// The rank at ring position p of channel c (inverse of ring_positions).
int rank_at(const std::vector<int>& pos, int p) {
  for (size_t r = 0; r < pos.size(); ++r)
    if (pos[r] == p) return static_cast<int>(r);
  return 0;
}

Result<std::vector<OpData>> layout(const netsim::Schedule& s, const ExecCall& call, int n) {
  std::vector<OpData> d(s.ops.size());
  const Algorithm algo = s.tuning.algorithm;
  const Collective coll = call.collective;
  const uint64_t count = call.count;
  int nch = 1;
  for (const Step& op : s.ops) nch = std::max(nch, static_cast<int>(op.channel) + 1);
  std::vector<uint32_t> nslices(static_cast<size_t>(nch), 1);
  for (const Step& op : s.ops) nslices[op.channel] = std::max(nslices[op.channel], op.slice + 1);
  const bool ring_rs = algo == Algorithm::kRing &&
                       (coll == Collective::kAllReduce || coll == Collective::kAllGather ||
                        coll == Collective::kReduceScatter);
  std::vector<std::vector<int>> pos;
  if (ring_rs) pos = ring_positions(s, n, nch);
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const Step& op = s.ops[i];
    if (op.kind != Step::Kind::kTransfer) continue;
    if (op.src < 0 || op.dst < 0 || op.src >= n || op.dst >= n)
      return unsupported("the real fabric cannot run a transfer to a multicast endpoint (NVLS)");
    OpData& o = d[i];
    for (uint32_t dep : s.deps_of(i))
      if (s.ops[dep].kind == Step::Kind::kTransfer && s.ops[dep].dst == op.src) o.fwd = dep;
    o.reduce = op.reduce;
    const uint64_t c = op.channel, l = op.slice;
    if (algo == Algorithm::kRing) {
      // Channel, then slice, then (all-reduce family) ring block: the Schedule's split, in elements.
      const uint64_t ch0 = part_begin(count, static_cast<uint64_t>(nch), c);
      const uint64_t chn = part_len(count, static_cast<uint64_t>(nch), c);
      const uint64_t sl0 = ch0 + part_begin(chn, nslices[c], l);
      const uint64_t sln = part_len(chn, nslices[c], l);
      if (ring_rs) {
        const auto& pc = pos[c];
        const int p = pc[static_cast<size_t>(op.src)];
        const int b = ((p - static_cast<int>(op.step % static_cast<uint32_t>(n))) % n + n) % n;
        // The rank that ends up owning ring block b after the reduce-scatter steps.
        const int owner = rank_at(pc, (b + n - 1) % n);
        if (coll == Collective::kAllReduce) {
          o.n = part_len(sln, static_cast<uint64_t>(n), static_cast<uint64_t>(b));
          const uint64_t lo = sl0 + part_begin(sln, static_cast<uint64_t>(n), static_cast<uint64_t>(b));
          o.src_off = o.dst_off = o.in_off = lo;
          o.final_ = o.reduce && op.dst == owner;
        } else if (coll == Collective::kAllGather) {
          const int j = rank_at(pc, b);  // block b starts at position b: that rank's data
          o.n = sln;
          o.src_off = sl0;
          o.dst_off = static_cast<uint64_t>(j) * count + sl0;
        } else {  // reduce-scatter
          o.n = sln;
          o.src_off = o.in_off = static_cast<uint64_t>(owner) * count + sl0;
          o.final_ = op.dst == owner;
          o.dst_off = sl0;
        }
      } else if (coll == Collective::kBroadcast || coll == Collective::kReduce) {
        o.n = sln;
        o.src_off = o.dst_off = o.in_off = sl0;
        o.final_ = o.reduce && op.dst == call.root;
      } else {
        return unsupported(std::string("the real fabric runs no Ring schedule of ") + netsim::collective_name(coll));
      }
    } else if (algo == Algorithm::kDirect) {
      o.n = count;
      if (coll == Collective::kAllToAll) {
        o.src_off = static_cast<uint64_t>(op.dst) * count;
        o.dst_off = static_cast<uint64_t>(op.src) * count;
      } else if (coll == Collective::kGather) {
        o.src_off = 0;
        o.dst_off = static_cast<uint64_t>(op.src) * count;
      } else if (coll == Collective::kScatter) {
        o.src_off = static_cast<uint64_t>(op.dst) * count;
        o.dst_off = 0;
      } else {
        return unsupported(std::string("the real fabric runs no Direct schedule of ") +
                           netsim::collective_name(coll));
      }
      if (o.reduce) return unsupported("the real fabric runs no reducing Direct schedule");
    } else {
      return unsupported(std::string("the real fabric cannot run the ") + netsim::algorithm_name(algo) +
                         " algorithm (Ring and Direct only)");
    }
  }
  return d;
}

// Integer average: NCCL's SumPostDiv, truncating toward zero.
template <class T>
void divide_all(void* p, uint64_t n, uint64_t by) {
  T* x = static_cast<T*>(p);
  const T d = static_cast<T>(by);
  for (uint64_t i = 0; i < n; ++i) x[i] = static_cast<T>(x[i] / d);
}
void divide_integers(void* p, uint64_t n, DataType dt, uint64_t by) {
  switch (dt) {
    case DataType::kInt8: return divide_all<int8_t>(p, n, by);
    case DataType::kUint8: return divide_all<uint8_t>(p, n, by);
    case DataType::kInt32: return divide_all<int32_t>(p, n, by);
    case DataType::kUint32: return divide_all<uint32_t>(p, n, by);
    case DataType::kInt64: return divide_all<int64_t>(p, n, by);
    case DataType::kUint64: return divide_all<uint64_t>(p, n, by);
    default: return;
  }
}

bool is_integer(DataType dt) {
  return dt == DataType::kInt8 || dt == DataType::kUint8 || dt == DataType::kInt32 || dt == DataType::kUint32 ||
         dt == DataType::kInt64 || dt == DataType::kUint64;
}

// Local part of a call on one rank (n == 1, or the rank's own block of a data-moving collective).
void local_copy(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes > 0) std::memmove(dst, src, bytes);
}

}  // namespace

bool executor_supports(Collective c, Algorithm a) noexcept {
  switch (c) {
    case Collective::kAllReduce:
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kBroadcast:
    case Collective::kReduce:
      return a == Algorithm::kRing;
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter:
      return a == Algorithm::kDirect;
    case Collective::kSendRecv:
      return false;
  }
  return false;
}

Algorithm executor_algorithm(Collective c) noexcept {
  return c == Collective::kAllToAll || c == Collective::kGather || c == Collective::kScatter ? Algorithm::kDirect
                                                                                             : Algorithm::kRing;
}

ScheduleExecutor::~ScheduleExecutor() {
  if (staging_.p) munmap(staging_.p, staging_.bytes);
  if (staging_.fd >= 0) ::close(staging_.fd);
}

Status ScheduleExecutor::reserve_staging(size_t bytes) {
  if (bytes <= staging_.bytes) return Status::ok();
  // At least doubling, in whole MiB: few areas are ever made (peers let go of their mapping of an area this rank closed
  // only when they next map a new buffer, PeerMemory::resolve).
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t size = (std::max(bytes, 2 * staging_.bytes) + kMiB - 1) / kMiB * kMiB;
  const int fd = memfd_create("genie-fabric-staging", MFD_CLOEXEC);
  if (fd < 0) return system_error(std::string("memfd_create for the fabric's staging area: ") + std::strerror(errno));
  struct stat sb {};
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 || fstat(fd, &sb) != 0) {
    const int err = errno;
    ::close(fd);
    return system_error("sizing the fabric's staging area to " + std::to_string(size) + " bytes: " + std::strerror(err));
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return system_error(std::string("mapping the fabric's staging area: ") + std::strerror(err));
  }
  advise_huge_pages(p, size);
  if (staging_.p) munmap(staging_.p, staging_.bytes);
  if (staging_.fd >= 0) ::close(staging_.fd);
  staging_ = Staging{static_cast<char*>(p), size, fd, static_cast<uint64_t>(sb.st_ino)};
  return Status::ok();
}

Status ScheduleExecutor::run(FabricComm& fc, const netsim::Schedule& s, const ExecCall& call, const FabricWait& w) {
  const int n = fc.nranks();
  const int me = fc.rank();
  const size_t es = netsim::datatype_size(call.datatype);
  const uint64_t count = call.count;
  const char* in = static_cast<const char*>(call.sendbuff);
  char* out = static_cast<char*>(call.recvbuff);
  const Collective coll = call.collective;
  // Avg: floating types scale every input by 1/n (PreMulSum), integers sum and divide once at the end.
  ReduceOp op = call.op;
  std::vector<double> scalars = call.scalars;
  scalars.resize(static_cast<size_t>(n), 1.0);
  const bool int_avg = op == ReduceOp::kAvg && is_integer(call.datatype);
  if (op == ReduceOp::kAvg) {
    if (int_avg) {
      op = ReduceOp::kSum;
    } else {
      op = ReduceOp::kPreMulSum;
      std::fill(scalars.begin(), scalars.end(), 1.0 / n);
    }
  }

  if (n == 1) {
    if (netsim::collective_reduces(coll)) {
      const void* srcs[1] = {in};
      reduce_arrays(out, srcs, call.scalars.empty() ? nullptr : call.scalars.data(), 1, count, call.datatype,
                    call.op);
    } else {
      local_copy(out, in, count * es);
    }
    return Status::ok();
  }

  const bool direct = call.direct;
  GENIE_ASSIGN_OR_RETURN(std::vector<OpData> d, layout(s, call, n));
  // An in-place all-to-all sends from a copy of its input (the blocks for the peers must be read before theirs
  // overwrite them); in direct mode the copy is in the staging area, where peers can read it.
  const bool a2a_copy = coll == Collective::kAllToAll && in == out;
  const size_t a2a_bytes = a2a_copy ? static_cast<size_t>(n) * count * es : 0;
  // This rank's receives (in DAG order) and sends; staging for the chunks it reduces.
  std::vector<uint32_t> recvs, sends;
  size_t stage = direct ? (a2a_bytes + 63) / 64 * 64 : 0;
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const Step& op_i = s.ops[i];
    if (op_i.kind != Step::Kind::kTransfer || d[i].n == 0) continue;
    if (op_i.dst == me) {
      recvs.push_back(static_cast<uint32_t>(i));
      if (d[i].reduce) {
        d[i].stage_off = stage;
        stage += (d[i].n * es + 63) / 64 * 64;
      }
    }
    if (op_i.src == me) sends.push_back(static_cast<uint32_t>(i));
  }
  GENIE_TRY(reserve_staging(stage));
  char* st = staging_.p;

  // The rank's own block, which no transfer carries.
  switch (coll) {
    case Collective::kAllGather:
      local_copy(out + static_cast<uint64_t>(me) * count * es, in, count * es);
      break;
    case Collective::kBroadcast:
      if (me == call.root) local_copy(out, in, count * es);
      break;
    case Collective::kGather:
      if (me == call.root) local_copy(out + static_cast<uint64_t>(me) * count * es, in, count * es);
      break;
    case Collective::kScatter:
      if (me == call.root) local_copy(out, in + static_cast<uint64_t>(me) * count * es, count * es);
      break;
    case Collective::kAllToAll:
      if (a2a_copy && direct) {
        std::memcpy(st, in, a2a_bytes);
        in = st;
      } else if (a2a_copy) {
        alltoall_copy_.assign(in, in + a2a_bytes);
        in = alltoall_copy_.data();
      }
      local_copy(out + static_cast<uint64_t>(me) * count * es, in + static_cast<uint64_t>(me) * count * es,
                 count * es);
      break;
    default:
      break;
  }

  // Each transfer moves in pieces of at most GENIE_SHIM_FABRIC_PIECE_BYTES, as NCCL's FIFO moves a chunk step by step: a piece
  // that has arrived (and been reduced) is forwarded while the rest of its chunk is still on the wire, instead
  // of every hop storing and forwarding whole chunks (2 MiB with NCCL's Simple chunking: 17 ms per hop at
  // 1 Gbit/s). A unit is one piece of one transfer; unit_base[i] is transfer i's first.
  // Elements per piece of transfer i: the configured size, larger where a transfer would need more than
  // kMaxPieces (the same on both ends, which see the same Schedule).
  const uint64_t pe_min = std::max<uint64_t>(1, (piece_bytes_ ? piece_bytes_ : fabric_piece_bytes()) / es);
  auto pe_of = [&](uint32_t i) { return std::max(pe_min, (d[i].n + kMaxPieces - 1) / kMaxPieces); };
  if (s.ops.size() >= kMaxOps) return unsupported("the real fabric runs Schedules of fewer than 2^27 operations");
  std::vector<uint32_t> unit_base(s.ops.size() + 1, 0);
  std::vector<uint32_t> unit_op;
  for (size_t i = 0; i < s.ops.size(); ++i) {
    unit_base[i] = static_cast<uint32_t>(unit_op.size());
    const bool mine =
        s.ops[i].kind == Step::Kind::kTransfer && d[i].n > 0 && (s.ops[i].src == me || s.ops[i].dst == me);
    const uint64_t pe = pe_of(static_cast<uint32_t>(i));
    const uint64_t pieces = mine ? (d[i].n + pe - 1) / pe : 0;
    for (uint64_t k = 0; k < pieces; ++k) unit_op.push_back(static_cast<uint32_t>(i));
  }
  unit_base[s.ops.size()] = static_cast<uint32_t>(unit_op.size());
  auto pieces_of = [&](uint32_t i) { return unit_base[i + 1] - unit_base[i]; };
  auto piece_len = [&](uint32_t i, uint32_t k) {
    const uint64_t pe = pe_of(i);
    return std::min<uint64_t>(pe, d[i].n - k * pe);
  };
  auto tag_of = [&](uint32_t u) {
    const uint32_t i = unit_op[u];
    return make_tag(TagKind::kData, call.seq, (static_cast<uint64_t>(i) << kPieceBits) | (u - unit_base[i]));
  };

  // Direct mode: where this rank's regions are as peers map them. `ref_at(r, base, p)`: region `r`, whose first
  // byte is at `base` here, moved to the byte at `p`.
  BufferRef stage_ref;
  if (direct) {
    stage_ref.addr = reinterpret_cast<uint64_t>(st);
    stage_ref.pid = static_cast<int32_t>(getpid());
    stage_ref.fd = staging_.fd;
    stage_ref.fd_id = staging_.inode;
    stage_ref.map_size = staging_.bytes;
  }
  auto ref_at = [](BufferRef r, const char* base, const char* p) {
    const auto delta = static_cast<uint64_t>(p - base);
    r.addr += delta;
    r.offset += delta;
    return r;
  };
  // Piece k of send i as it lies on this rank (and, in direct mode, as peers map it into *ref): received data it
  // forwards (staged, or in the output) or its own input.
  auto send_source = [&](uint32_t i, uint32_t k, BufferRef* ref) -> const char* {
    const OpData& o = d[i];
    const uint64_t at = k * pe_of(i) * es;
    if (o.fwd >= 0 && d[static_cast<size_t>(o.fwd)].n > 0) {
      const OpData& f = d[static_cast<size_t>(o.fwd)];
      const bool staged = f.reduce && !f.final_;
      const char* p = (staged ? st + f.stage_off : out + f.dst_off * es) + at;
      if (ref) *ref = staged ? ref_at(stage_ref, st, p) : ref_at(call.out_ref, out, p);
      return p;
    }
    const char* p = in + o.src_off * es + at;
    if (ref)
      *ref = a2a_copy ? ref_at(stage_ref, st, p) : ref_at(call.in_ref, static_cast<const char*>(call.sendbuff), p);
    return p;
  };

  // Direct mode: the peers that read this rank's data (the call ends only once each has released it: until then it
  // may still be reading) and those it reads from (released once it has read everything it receives).
  std::vector<int> readers, sources;
  if (direct) {
    for (uint32_t i : sends) readers.push_back(s.ops[i].dst);
    for (uint32_t i : recvs) sources.push_back(s.ops[i].src);
    for (auto* v : {&readers, &sources}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
  }
  auto release_tag = [&](int from) { return make_tag(TagKind::kData, call.seq, kReleaseIndex | static_cast<uint64_t>(from)); };
  // Completion ids: units, then the releases this rank awaits (one per reader), then those it sends (one per source).
  const size_t nunits = unit_op.size();
  const size_t total = nunits + readers.size() + sources.size();
  std::vector<FabricOpContext> ctx(total);
  std::vector<uint8_t> done(total, 0);
  std::vector<BufferRef> notice(direct ? nunits : 0);  // direct mode: what each unit's message carries
  std::vector<uint64_t> release_in(readers.size(), 0);
  const uint64_t release_word = call.seq;
  std::vector<std::vector<uint32_t>> waiting(s.ops.size());  // sends that forward op i's data
  std::deque<uint32_t> ready;                                // send units whose data is here
  size_t left = total;
  for (uint32_t i : sends) {
    const int64_t f = d[i].fwd;
    if (f >= 0 && d[static_cast<size_t>(f)].n > 0) {
      // A send forwards exactly the elements it received (layout() gives both the same ring block or slice), so
      // piece k of the one is piece k of the other.
      if (d[static_cast<size_t>(f)].n != d[i].n)
        return internal_error("the Schedule forwards " + std::to_string(d[static_cast<size_t>(f)].n) +
                              " received elements as " + std::to_string(d[i].n));
      waiting[static_cast<size_t>(f)].push_back(i);
    } else {
      for (uint32_t k = 0; k < pieces_of(i); ++k) ready.push_back(unit_base[i] + k);
    }
  }
  for (size_t u = 0; u < ctx.size(); ++u) ctx[u].user = u;
  std::vector<uint32_t> recv_units;
  for (uint32_t i : recvs)
    for (uint32_t k = 0; k < pieces_of(i); ++k) recv_units.push_back(unit_base[i] + k);
  size_t next_recv = 0, recv_left = recv_units.size(), next_release_in = 0, next_release_out = 0;

  auto kick = [&]() -> Result<bool> {
    while (next_release_in < readers.size()) {
      const size_t j = next_release_in;
      const int r = readers[j];
      GENIE_ASSIGN_OR_RETURN(bool ok, fc.data().recv(fc.data_addr(r), &release_in[j], sizeof(uint64_t),
                                                     release_tag(r), &ctx[nunits + j]));
      if (!ok) return true;
      ++next_release_in;
    }
    while (next_recv < recv_units.size()) {
      const uint32_t u = recv_units[next_recv];
      const uint32_t i = unit_op[u], k = u - unit_base[i];
      const OpData& o = d[i];
      void* buf = direct ? static_cast<void*>(&notice[u])
                         : (o.reduce ? st + o.stage_off : out + o.dst_off * es) + k * pe_of(i) * es;
      const size_t len = direct ? sizeof(BufferRef) : piece_len(i, k) * es;
      GENIE_ASSIGN_OR_RETURN(bool ok, fc.data().recv(fc.data_addr(s.ops[i].src), buf, len, tag_of(u), &ctx[u]));
      if (!ok) return true;
      ++next_recv;
    }
    while (!ready.empty()) {
      const uint32_t u = ready.front();
      const uint32_t i = unit_op[u], k = u - unit_base[i];
      const char* data = send_source(i, k, direct ? &notice[u] : nullptr);
      const void* buf = direct ? static_cast<const void*>(&notice[u]) : data;
      const size_t len = direct ? sizeof(BufferRef) : piece_len(i, k) * es;
      GENIE_ASSIGN_OR_RETURN(bool ok, fc.data().send(fc.data_addr(s.ops[i].dst), buf, len, tag_of(u), &ctx[u]));
      if (!ok) return true;
      ready.pop_front();
    }
    while (recv_left == 0 && next_release_out < sources.size()) {
      const size_t j = next_release_out;
      GENIE_ASSIGN_OR_RETURN(bool ok, fc.data().send(fc.data_addr(sources[j]), &release_word, sizeof(uint64_t),
                                                     release_tag(me), &ctx[nunits + readers.size() + j]));
      if (!ok) return true;
      ++next_release_out;
    }
    return false;
  };
  auto on = [&](uint64_t unit, const FabricCompletion& c) -> Status {
    if (unit >= total) return Status::ok();
    if (unit >= nunits) {  // a release
      const bool awaited = unit < nunits + readers.size();
      const int peer = awaited ? readers[unit - nunits] : sources[unit - nunits - readers.size()];
      if (!c.status.is_ok())
        return Status(c.status.code(), w.what + ": " + (awaited ? "waiting for " : "releasing ") + fc.peer_name(peer) +
                                           (awaited ? " to finish reading" : "") + " failed: " + c.status.message());
      if (!done[unit]) {
        done[unit] = 1;
        --left;
      }
      return Status::ok();
    }
    const uint32_t user = unit_op[unit], k = static_cast<uint32_t>(unit) - unit_base[user];
    const Step& op_u = s.ops[user];
    const bool is_recv = op_u.dst == me;
    if (!c.status.is_ok())
      return Status(c.status.code(), w.what + ": " + (is_recv ? "receiving from " : "sending to ") +
                                         fc.peer_name(is_recv ? op_u.src : op_u.dst) + " failed: " + c.status.message());
    if (done[unit]) return Status::ok();
    const OpData& o = d[user];
    if (is_recv) {
      const uint64_t len = piece_len(user, k);
      const uint64_t at = k * pe_of(user);  // first element of the piece
      const char* chunk = nullptr;  // the piece to reduce: where the sender has it (direct), else in staging
      if (direct) {
        if (c.len != sizeof(BufferRef))
          return Status(Errc::kRemote, w.what + ": " + fc.peer_name(op_u.src) + " sent a " + std::to_string(c.len) +
                                           "-byte notice of a piece");
        const BufferRef& ref = notice[unit];
        Result<char*> p = PeerMemory::instance().resolve(ref);
        if (!p.is_ok())
          return Status(Errc::kRemote, w.what + ": reading from " + fc.peer_name(op_u.src) + ": " + p.status().message());
        const bool outside = ref.pid != stage_ref.pid && direct_out_of_range(ref, len * es);
        if (p.value() == nullptr || outside)
          return Status(Errc::kRemote, w.what + ": " + fc.peer_name(op_u.src) + " announced a " +
                                           std::to_string(len * es) + "-byte piece outside its buffer");
        chunk = p.value();
        if (!o.reduce) std::memcpy(out + (o.dst_off + at) * es, chunk, len * es);
      } else if (c.len != len * es) {
        return Status(Errc::kRemote, w.what + ": " + fc.peer_name(op_u.src) + " sent " + std::to_string(c.len) +
                                         " bytes of a " + std::to_string(len * es) + "-byte piece");
      } else if (o.reduce) {
        chunk = st + o.stage_off + at * es;
      }
      if (o.reduce) {
        const void* srcs[2] = {chunk, in + (o.in_off + at) * es};
        // The chunk is the sender's raw input on its first hop (its PreMulSum scalar applies), else a
        // partial result (scalar 1).
        const double sc[2] = {o.fwd < 0 ? scalars[static_cast<size_t>(op_u.src)] : 1.0,
                              scalars[static_cast<size_t>(me)]};
        char* dst = o.final_ ? out + (o.dst_off + at) * es : st + o.stage_off + at * es;
        reduce_arrays(dst, srcs, sc, 2, len, call.datatype, op);
        if (o.final_ && int_avg) divide_integers(dst, len, call.datatype, static_cast<uint64_t>(n));
      }
      for (uint32_t j : waiting[user]) ready.push_back(unit_base[j] + k);
      --recv_left;
    }
    done[unit] = 1;
    --left;
    return Status::ok();
  };
  auto waiting_peers = [&] {
    std::vector<int> peers;
    for (size_t u = 0; u < total; ++u) {
      if (done[u]) continue;
      if (u >= nunits) {
        peers.push_back(u < nunits + readers.size() ? readers[u - nunits] : sources[u - nunits - readers.size()]);
        continue;
      }
      const Step& op_u = s.ops[unit_op[u]];
      peers.push_back(op_u.dst == me ? op_u.src : op_u.dst);
    }
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    return peers;
  };
  Status result = drive_completions(fc, fc.data(), w, [&] { return left == 0; }, on, kick, waiting_peers);
  if (!result.is_ok()) {
    for (size_t u = 0; u < total; ++u)
      if (!done[u]) fc.data().cancel(&ctx[u]);
    fc.retire(std::move(ctx));
    fc.retire(std::move(notice));
    fc.retire(std::move(release_in));
    abandon_staging();  // posted receives (and, direct, peers) may still use it: leaked with the failed call
  }
  return result;
}

}  // namespace genie::shim
