// SPDX-License-Identifier: Apache-2.0
// Example: every NCCL collective x every datatype x every reduction op, in and out of place, checked on the CPU.
// Usage: collectives [proc|threads|devices|devices-null|env] [nranks=4] (env: one rank of a genie run / torchrun job)   (nranks <= 8 keeps every fp8/bf16 sum exact)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nccl_check.cuh"

// ---- datatypes: host-side encoding of small exact values into each type's bits ----

struct MiniFloat {
  int ebits, mbits, bias;
  bool fn;  // e4m3 "fn": no infinities, only S.1111.111 is NaN
};

static double mf_decode(uint32_t bits, const MiniFloat& f) {
  const uint32_t man = bits & ((1u << f.mbits) - 1);
  const uint32_t exp = (bits >> f.mbits) & ((1u << f.ebits) - 1);
  const bool neg = (bits >> (f.ebits + f.mbits)) & 1;
  const uint32_t emax = (1u << f.ebits) - 1;
  double v;
  if (exp == emax && !f.fn)
    v = man ? NAN : INFINITY;
  else if (exp == emax && f.fn && man == (1u << f.mbits) - 1)
    v = NAN;
  else if (exp == 0)
    v = std::ldexp(double(man), 1 - f.bias - f.mbits);
  else
    v = std::ldexp(1.0 + std::ldexp(double(man), -f.mbits), int(exp) - f.bias);
  return neg ? -v : v;
}

// Round to nearest even; the values used here are all exactly representable and far from overflow.
static uint32_t mf_encode(double v, const MiniFloat& f) {
  const uint32_t sign = std::signbit(v) ? 1u << (f.ebits + f.mbits) : 0u;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  int e2 = 0;
  std::frexp(a, &e2);  // a = m * 2^e2, m in [0.5, 1)
  int exp = e2 - 1 + f.bias;
  uint32_t man;
  if (exp >= 1) {
    man = uint32_t(std::nearbyint((std::ldexp(a, -(e2 - 1)) - 1.0) * double(1u << f.mbits)));
    if (man == (1u << f.mbits)) {
      man = 0;
      ++exp;
    }
  } else {
    man = uint32_t(std::nearbyint(std::ldexp(a, f.bias - 1 + f.mbits)));
    exp = 0;
    if (man == (1u << f.mbits)) {
      man = 0;
      exp = 1;
    }
  }
  return sign | uint32_t(exp) << f.mbits | man;
}

static const MiniFloat kHalf{5, 10, 15, false}, kBf16{8, 7, 127, false}, kE4m3{4, 3, 7, true}, kE5m2{5, 2, 15, false};

enum class Kind { Int, Uint, Float32, Float64, Mini };

struct Dt {
  ncclDataType_t t;
  const char* name;
  size_t size;
  Kind kind;
  const MiniFloat* mf;  // for Kind::Mini
  double limit;         // every integer of magnitude <= limit is exact in this type
  double eps;           // unit roundoff-ish, for the non-power-of-two average tolerance
};

static const Dt kTypes[] = {
    {ncclInt8, "int8", 1, Kind::Int, nullptr, 127, 0},
    {ncclUint8, "uint8", 1, Kind::Uint, nullptr, 255, 0},
    {ncclInt32, "int32", 4, Kind::Int, nullptr, 1e6, 0},
    {ncclUint32, "uint32", 4, Kind::Uint, nullptr, 1e6, 0},
    {ncclInt64, "int64", 8, Kind::Int, nullptr, 1e6, 0},
    {ncclUint64, "uint64", 8, Kind::Uint, nullptr, 1e6, 0},
    {ncclFloat16, "half", 2, Kind::Mini, &kHalf, 2048, 0x1p-10},
    {ncclFloat32, "float", 4, Kind::Float32, nullptr, 1e6, 0x1p-23},
    {ncclFloat64, "double", 8, Kind::Float64, nullptr, 1e6, 0x1p-52},
    {ncclBfloat16, "bfloat16", 2, Kind::Mini, &kBf16, 256, 0x1p-7},
    {ncclFloat8e4m3, "fp8_e4m3", 1, Kind::Mini, &kE4m3, 16, 0x1p-3},
    {ncclFloat8e5m2, "fp8_e5m2", 1, Kind::Mini, &kE5m2, 8, 0x1p-2},
};

static bool is_float(const Dt& d) { return d.kind != Kind::Int && d.kind != Kind::Uint; }

static void put(const Dt& d, uint8_t* p, double v) {
  switch (d.kind) {
    case Kind::Int:
    case Kind::Uint: {
      const int64_t x = int64_t(v);
      std::memcpy(p, &x, d.size);  // little endian: the low bytes
      break;
    }
    case Kind::Float32: {
      const float x = float(v);
      std::memcpy(p, &x, 4);
      break;
    }
    case Kind::Float64:
      std::memcpy(p, &v, 8);
      break;
    case Kind::Mini: {
      const uint32_t bits = mf_encode(v, *d.mf);
      std::memcpy(p, &bits, d.size);
      break;
    }
  }
}

static double get(const Dt& d, const uint8_t* p) {
  switch (d.kind) {
    case Kind::Int: {
      if (d.size == 1) return double(int8_t(p[0]));
      if (d.size == 4) {
        int32_t x;
        std::memcpy(&x, p, 4);
        return double(x);
      }
      int64_t x;
      std::memcpy(&x, p, 8);
      return double(x);
    }
    case Kind::Uint: {
      uint64_t x = 0;
      std::memcpy(&x, p, d.size);
      return double(x);
    }
    case Kind::Float32: {
      float x;
      std::memcpy(&x, p, 4);
      return double(x);
    }
    case Kind::Float64: {
      double x;
      std::memcpy(&x, p, 8);
      return x;
    }
    case Kind::Mini: {
      uint32_t bits = 0;
      std::memcpy(&bits, p, d.size);
      return mf_decode(bits, *d.mf);
    }
  }
  return 0;
}

// ---- reduction ops and the values that keep them exact ----

enum class OpKind { Sum, Prod, Max, Min, Avg, PreMulHost, PreMulDevice };
static const OpKind kOps[] = {OpKind::Sum, OpKind::Prod,       OpKind::Max,         OpKind::Min,
                              OpKind::Avg, OpKind::PreMulHost, OpKind::PreMulDevice};
static const char* op_name(OpKind k) {
  static const char* names[] = {
      "sum", "prod", "max", "min", "avg", "premulsum(host scalar)", "premulsum(device scalar)"};
  return names[int(k)];
}

// PreMulSum scalars: powers of two for floating types (scaling keeps every sum exact), small integers otherwise.
static double premul_scalar(const Dt& d, OpKind k) {
  if (k == OpKind::PreMulHost) return 2;
  return is_float(d) ? 0.5 : 3;
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// Value of element i of rank r's send buffer for a reducing collective. Any partial sum (in any order) stays an
// integer of magnitude <= limit, so every type reduces exactly; products stay in {+-1, +-2, +-4}.
static double value(const Dt& d, OpKind k, int n, int r, size_t i) {
  const bool is_signed = d.kind != Kind::Uint;
  const uint64_t h = mix(uint64_t(r) * 1000003 + i * 7919 + uint64_t(k) * 31 + 1);
  switch (k) {
    case OpKind::Prod:
      if (r < 10 && (i + r) % 5 == 0) return 2;  // at most two ranks hold a 2, whatever n
      return is_signed && (i * 3 + r) % 4 == 0 ? -1 : 1;
    case OpKind::Avg: {
      // One rank holds b + (n-1)k, the others b - k: the sum is n*b, an exact multiple of n.
      const int64_t bound = std::max<int64_t>(1, int64_t(d.limit) / (2 * n));
      const int64_t b = int64_t(mix(i + 77) % uint64_t(bound + 1));
      int64_t kk = int64_t(mix(i + 99) % uint64_t(bound + 1));
      if (!is_signed) kk = std::min(kk, b);
      return double(size_t(r) == i % size_t(n) ? b + (n - 1) * kk : b - kk);
    }
    default: {
      double s = 1;
      if ((k == OpKind::PreMulHost || k == OpKind::PreMulDevice) && !is_float(d)) s = premul_scalar(d, k);
      const int64_t bound = std::max<int64_t>(1, int64_t(d.limit / (n * s)));
      if (!is_signed) return double(h % uint64_t(bound + 1));
      return double(int64_t(h % uint64_t(2 * bound + 1)) - bound);
    }
  }
}

static double reduce_ref(const Dt& d, OpKind k, int n, size_t i, double* maxabs) {
  double acc = value(d, k, n, 0, i);
  *maxabs = std::fabs(acc);
  for (int r = 1; r < n; ++r) {
    const double v = value(d, k, n, r, i);
    *maxabs = std::max(*maxabs, std::fabs(v));
    switch (k) {
      case OpKind::Prod:
        acc *= v;
        break;
      case OpKind::Max:
        acc = std::max(acc, v);
        break;
      case OpKind::Min:
        acc = std::min(acc, v);
        break;
      default:
        acc += v;
        break;
    }
  }
  if (k == OpKind::Avg) acc /= n;
  if (k == OpKind::PreMulHost || k == OpKind::PreMulDevice) acc *= premul_scalar(d, k);
  return acc;
}

// Bytes of element i of rank r's send buffer for a collective that only moves data: arbitrary bit patterns.
static void moved_bytes(const Dt& d, int r, size_t i, uint8_t* out) {
  const uint64_t h = mix((uint64_t(r) << 40 ^ i * 2654435761ULL ^ uint64_t(d.t) << 56) + 0x9e3779b97f4a7c15ULL);
  std::memcpy(out, &h, d.size);
}

// ---- one collective call on every local rank ----

enum class Coll { AllReduce, Broadcast, Bcast, Reduce, AllGather, ReduceScatter, AlltoAll, Gather, Scatter };
static const char* coll_name(Coll c) {
  static const char* names[] = {"AllReduce",     "Broadcast", "Bcast",  "Reduce", "AllGather",
                                "ReduceScatter", "AlltoAll",  "Gather", "Scatter"};
  return names[int(c)];
}
static bool reduces(Coll c) { return c == Coll::AllReduce || c == Coll::Reduce || c == Coll::ReduceScatter; }

struct Case {
  Coll coll;
  OpKind op;
  size_t count;  // per rank for AllGather/ReduceScatter/AlltoAll/Gather/Scatter
  int root;
  bool in_place;
};

static const size_t kMaxCount = 1031;

struct Local {
  RankCtx* ctx;
  uint8_t* arena;  // device: [0, half) out-of-place send buffer, [half, 2 half) receive buffer
  void* scalar;    // device: the PreMulSum scalar
  size_t half;
  std::vector<uint8_t> host;
};

struct Tally {
  long bad = 0;
  int calls = 0;
  int reported = 0;
};

// Element counts of the send and receive buffers, and the in-place send offset inside the receive buffer.
static void layout(const Case& c, int n, int rank, size_t* send_n, size_t* recv_n, long* send_off, long* recv_off) {
  const size_t k = c.count;
  const bool gathers = c.coll == Coll::AllGather || c.coll == Coll::Gather;
  const bool scatters = c.coll == Coll::ReduceScatter || c.coll == Coll::Scatter;
  *send_n = scatters || c.coll == Coll::AlltoAll ? k * n : k;
  *recv_n = gathers || c.coll == Coll::AlltoAll ? k * n : k;
  // In place: AllGather sendbuff == recvbuff + rank * count, Gather sendbuff == recvbuff + root * count,
  // ReduceScatter recvbuff == sendbuff + rank * count, Scatter recvbuff == sendbuff + root * count.
  const int slot = c.coll == Coll::AllGather || c.coll == Coll::ReduceScatter ? rank : c.root;
  *send_off = gathers ? long(slot * k) : 0;
  *recv_off = scatters ? long(slot * k) : 0;
}

// The send buffer content of rank r.
static void fill_send(const Dt& d, const Case& c, int n, int r, size_t send_n, uint8_t* out) {
  for (size_t i = 0; i < send_n; ++i) {
    if (reduces(c.coll))
      put(d, out + i * d.size, value(d, c.op, n, r, i));
    else
      moved_bytes(d, r, i, out + i * d.size);
  }
}

// Whether `rank` has a defined result, and its expected element j (bytes for moves, a value for reductions).
static bool expected(const Dt& d, const Case& c, int n, int rank, size_t j, uint8_t* bytes, double* v, double* tol) {
  const size_t k = c.count;
  *tol = 0;
  double maxabs = 0;
  switch (c.coll) {
    case Coll::AllReduce:
      *v = reduce_ref(d, c.op, n, j, &maxabs);
      break;
    case Coll::Reduce:
      if (rank != c.root) return false;
      *v = reduce_ref(d, c.op, n, j, &maxabs);
      break;
    case Coll::ReduceScatter:
      *v = reduce_ref(d, c.op, n, size_t(rank) * k + j, &maxabs);
      break;
    case Coll::Broadcast:
    case Coll::Bcast:
      moved_bytes(d, c.root, j, bytes);
      break;
    case Coll::AllGather:
      moved_bytes(d, int(j / k), j % k, bytes);
      break;
    case Coll::Gather:
      if (rank != c.root) return false;
      moved_bytes(d, int(j / k), j % k, bytes);
      break;
    case Coll::AlltoAll:
      moved_bytes(d, int(j / k), size_t(rank) * k + j % k, bytes);
      break;
    case Coll::Scatter:
      moved_bytes(d, c.root, size_t(rank) * k + j, bytes);
      break;
  }
  // Averages over a non-power-of-two rank count round (1/n is inexact): allow a few roundings.
  if (reduces(c.coll) && c.op == OpKind::Avg && is_float(d) && (n & (n - 1)) != 0) *tol = d.eps * (n + 2) * maxabs;
  return true;
}

static ncclRedOp_t builtin(OpKind k) {
  switch (k) {
    case OpKind::Sum:
      return ncclSum;
    case OpKind::Prod:
      return ncclProd;
    case OpKind::Max:
      return ncclMax;
    case OpKind::Min:
      return ncclMin;
    default:
      return ncclAvg;
  }
}

static void run_case(std::vector<Local>& locals, int n, const Dt& d, const Case& c, std::vector<Tally>& tally) {
  const size_t es = d.size;
  size_t send_n = 0, recv_n = 0;
  long send_off = 0, recv_off = 0;
  std::vector<uint8_t*> sendp(locals.size()), recvp(locals.size());
  std::vector<ncclRedOp_t> ops(locals.size(), builtin(c.op));
  // Upload: the receive buffer gets a sentinel, then the send data goes to its (possibly in-place) location.
  for (size_t l = 0; l < locals.size(); ++l) {
    Local& L = locals[l];
    const int r = L.ctx->rank;
    layout(c, n, r, &send_n, &recv_n, &send_off, &recv_off);
    CHECK_CUDA(cudaSetDevice(L.ctx->device));
    uint8_t* recv = L.arena + L.half;
    uint8_t* send = L.arena;
    if (c.in_place || c.coll == Coll::Bcast) {
      // The in-place convention: recvbuff + send_off == sendbuff, or sendbuff + recv_off == recvbuff.
      const size_t span = std::max(send_off + send_n, recv_off + recv_n);
      send = L.arena + L.half;
      recv = send;
      if (send_off) send = recv + send_off * es;
      if (recv_off) recv = send + recv_off * es;
      uint8_t* base = std::min(send, recv);
      L.host.assign(span * es, 0xA5);
      fill_send(d, c, n, r, send_n, L.host.data() + (send - base));
      CHECK_CUDA(cudaMemcpy(base, L.host.data(), span * es, cudaMemcpyHostToDevice));
    } else {
      L.host.assign(recv_n * es, 0xA5);
      CHECK_CUDA(cudaMemcpy(recv, L.host.data(), recv_n * es, cudaMemcpyHostToDevice));
      L.host.assign(send_n * es, 0);
      fill_send(d, c, n, r, send_n, L.host.data());
      CHECK_CUDA(cudaMemcpy(send, L.host.data(), send_n * es, cudaMemcpyHostToDevice));
    }
    sendp[l] = send;
    recvp[l] = recv;
    if (reduces(c.coll) && (c.op == OpKind::PreMulHost || c.op == OpKind::PreMulDevice)) {
      uint8_t scalar[8] = {};
      put(d, scalar, premul_scalar(d, c.op));
      if (c.op == OpKind::PreMulHost) {
        CHECK_NCCL(ncclRedOpCreatePreMulSum(&ops[l], scalar, d.t, ncclScalarHostImmediate, L.ctx->comm));
      } else {
        CHECK_CUDA(cudaMemcpy(L.scalar, scalar, es, cudaMemcpyHostToDevice));
        CHECK_NCCL(ncclRedOpCreatePreMulSum(&ops[l], L.scalar, d.t, ncclScalarDevice, L.ctx->comm));
      }
    }
  }
  // One rank: NCCL copies instead of reducing, and a reduction with a scalar (avg, PreMulSum) runs a kernel it has
  // for every type but fp8, so NCCL 2.28.9 refuses those (measured on an H200; Genie answers the same).
  const bool fp8 = d.t == ncclFloat8e4m3 || d.t == ncclFloat8e5m2;
  if (n == 1 && fp8 && reduces(c.coll) &&
      (c.op == OpKind::Avg || c.op == OpKind::PreMulHost || c.op == OpKind::PreMulDevice)) {
    RankCtx& x = *locals[0].ctx;
    const ncclResult_t r =
        c.coll == Coll::AllReduce ? ncclAllReduce(sendp[0], recvp[0], c.count, d.t, ops[0], x.comm, x.stream)
        : c.coll == Coll::Reduce  ? ncclReduce(sendp[0], recvp[0], c.count, d.t, ops[0], c.root, x.comm, x.stream)
                                  : ncclReduceScatter(sendp[0], recvp[0], c.count, d.t, ops[0], x.comm, x.stream);
    expect_result(x.rank, std::string(coll_name(c.coll)) + " " + d.name + " op=" + op_name(c.op) +
                  (c.in_place ? " in-place" : " out-of-place") + " on one rank is refused",
                  ncclInvalidArgument, r);
    if (ops[0] >= ncclNumOps) CHECK_NCCL(ncclRedOpDestroy(ops[0], x.comm));
    return;
  }
  CHECK_NCCL(ncclGroupStart());
  for (size_t l = 0; l < locals.size(); ++l) {
    RankCtx& x = *locals[l].ctx;
    const void* s = sendp[l];
    void* rv = recvp[l];
    ncclResult_t r = ncclSuccess;
    switch (c.coll) {
      case Coll::AllReduce:
        r = ncclAllReduce(s, rv, c.count, d.t, ops[l], x.comm, x.stream);
        break;
      case Coll::Broadcast:
        r = ncclBroadcast(s, rv, c.count, d.t, c.root, x.comm, x.stream);
        break;
      case Coll::Bcast:
        r = ncclBcast(rv, c.count, d.t, c.root, x.comm, x.stream);
        break;
      case Coll::Reduce:
        r = ncclReduce(s, rv, c.count, d.t, ops[l], c.root, x.comm, x.stream);
        break;
      case Coll::AllGather:
        r = ncclAllGather(s, rv, c.count, d.t, x.comm, x.stream);
        break;
      case Coll::ReduceScatter:
        r = ncclReduceScatter(s, rv, c.count, d.t, ops[l], x.comm, x.stream);
        break;
      case Coll::AlltoAll:
        r = ncclAlltoAll(s, rv, c.count, d.t, x.comm, x.stream);
        break;
      case Coll::Gather:
        r = ncclGather(s, rv, c.count, d.t, c.root, x.comm, x.stream);
        break;
      case Coll::Scatter:
        r = ncclScatter(s, rv, c.count, d.t, c.root, x.comm, x.stream);
        break;
    }
    if (r != ncclSuccess) {  // which case, so a failure on a real GPU says what NCCL refused
      std::fprintf(stderr, "%s %s op=%s count=%zu root=%d %s: %s (%s)\n", coll_name(c.coll), d.name, op_name(c.op),
                   c.count, c.root, c.in_place ? "in-place" : "out-of-place", nccl_result_name(r),
                   ncclGetLastError(x.comm));
      std::fflush(stdout);
      std::exit(2);
    }
  }
  CHECK_NCCL(ncclGroupEnd());
  for (size_t l = 0; l < locals.size(); ++l) {
    Local& L = locals[l];
    const int r = L.ctx->rank;
    layout(c, n, r, &send_n, &recv_n, &send_off, &recv_off);
    CHECK_CUDA(cudaSetDevice(L.ctx->device));
    sync_nccl_stream(L.ctx->comm, L.ctx->stream, r);
    if (ops[l] >= ncclNumOps) CHECK_NCCL(ncclRedOpDestroy(ops[l], L.ctx->comm));
    Tally& t = tally[l];
    ++t.calls;
    L.host.assign(recv_n * es, 0);
    CHECK_CUDA(cudaMemcpy(L.host.data(), recvp[l], recv_n * es, cudaMemcpyDeviceToHost));
    long bad = 0;
    for (size_t j = 0; j < recv_n; ++j) {
      uint8_t want[8];
      double v = 0, tol = 0;
      if (!expected(d, c, n, r, j, want, &v, &tol)) break;
      const uint8_t* got = L.host.data() + j * es;
      bool ok;
      double gv = 0;
      if (reduces(c.coll)) {
        gv = get(d, got);
        ok = std::fabs(gv - v) <= tol;
      } else {
        ok = std::memcmp(got, want, es) == 0;
      }
      if (ok) continue;
      if (bad == 0 && t.reported < 3) {
        ++t.reported;
        uint64_t gb = 0, wb = 0;
        std::memcpy(&gb, got, es);
        std::memcpy(&wb, want, es);
        if (reduces(c.coll))
          note(r, "  %s %s op=%s count=%zu root=%d %s: element %zu expected %g got %g", coll_name(c.coll), d.name,
               op_name(c.op), c.count, c.root, c.in_place ? "in-place" : "out-of-place", j, v, gv);
        else
          note(r, "  %s %s count=%zu root=%d %s: element %zu expected bits 0x%llx got 0x%llx", coll_name(c.coll),
               d.name, c.count, c.root, c.in_place ? "in-place" : "out-of-place", j, (unsigned long long)wb,
               (unsigned long long)gb);
      }
      ++bad;
    }
    t.bad += bad;
  }
}

// The calls made for one (collective, datatype): about a hundred per datatype in all.
static std::vector<Case> cases_for(Coll coll, int n) {
  std::vector<Case> v;
  std::vector<int> roots = {0};
  if (n > 1) roots.push_back(n - 1);
  const size_t counts[] = {1, 1000, kMaxCount};
  switch (coll) {
    case Coll::AllReduce:
    case Coll::ReduceScatter:
      for (OpKind op : kOps)
        for (bool ip : {false, true}) v.push_back({coll, op, 1000, 0, ip});
      for (size_t k : {size_t(1), kMaxCount})
        for (bool ip : {false, true}) v.push_back({coll, OpKind::Sum, k, 0, ip});
      break;
    case Coll::Reduce: {
      int i = 0;
      for (OpKind op : kOps)
        for (int root : roots) v.push_back({coll, op, 1000, root, (i++ + root) % 2 == 1});
      for (size_t k : {size_t(1), kMaxCount})
        for (int root : roots) v.push_back({coll, OpKind::Sum, k, root, root == 0});
      break;
    }
    case Coll::Broadcast:
    case Coll::Gather:
    case Coll::Scatter:
      for (size_t k : counts)
        for (int root : roots)
          for (bool ip : {false, true}) v.push_back({coll, OpKind::Sum, k, root, ip});
      break;
    case Coll::Bcast:
      for (size_t k : counts)
        for (int root : roots) v.push_back({coll, OpKind::Sum, k, root, true});
      break;
    case Coll::AllGather:
      for (size_t k : counts)
        for (bool ip : {false, true}) v.push_back({coll, OpKind::Sum, k, 0, ip});
      break;
    case Coll::AlltoAll:  // no in-place form
      for (size_t k : counts) v.push_back({coll, OpKind::Sum, k, 0, false});
      break;
  }
  return v;
}

static void body(Ranks& ranks, int n) {
  std::vector<Local> locals(ranks.size());
  for (size_t l = 0; l < ranks.size(); ++l) {
    Local& L = locals[l];
    L.ctx = &ranks[l];
    L.half = size_t(n) * kMaxCount * 8;
    CHECK_CUDA(cudaSetDevice(L.ctx->device));
    CHECK_CUDA(cudaMalloc(&L.arena, 2 * L.half));
    CHECK_CUDA(cudaMalloc(&L.scalar, 8));
  }
  const Coll colls[] = {Coll::AllReduce,     Coll::Broadcast, Coll::Bcast,  Coll::Reduce, Coll::AllGather,
                        Coll::ReduceScatter, Coll::AlltoAll,  Coll::Gather, Coll::Scatter};
  for (Coll coll : colls) {
    const std::vector<Case> cases = cases_for(coll, n);
    for (const Dt& d : kTypes) {
      std::vector<Tally> tally(locals.size());
      for (const Case& c : cases) run_case(locals, n, d, c, tally);
      for (size_t l = 0; l < locals.size(); ++l) {
        const std::string what = std::string(coll_name(coll)) + " " + d.name + ": elements differing from the CPU " +
                                 "reference over " + std::to_string(tally[l].calls) + " calls";
        expect_eq(locals[l].ctx->rank, what, 0, tally[l].bad);
      }
    }
  }
  for (Local& L : locals) {
    CHECK_CUDA(cudaSetDevice(L.ctx->device));
    CHECK_CUDA(cudaFree(L.arena));
    CHECK_CUDA(cudaFree(L.scalar));
  }
}

int main(int argc, char** argv) {
  Mode mode = Mode::Proc;
  if (argc > 1 && !parse_mode(argv[1], &mode)) {
    std::fprintf(stderr, "usage: %s [proc|threads|devices|devices-null|env] [nranks=4] (env: one rank of a genie run / torchrun job)\n", argv[0]);
    return 2;
  }
  const int nranks = argc > 2 ? std::atoi(argv[2]) : 4;
  if (nranks < 1 || nranks > 8) {
    std::fprintf(stderr, "nranks must be 1..8\n");
    return 2;
  }
  return finish_ranks("collectives", run_ranks(nranks, mode, body));
}
