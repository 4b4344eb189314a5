// SPDX-License-Identifier: Apache-2.0
// Example: point-to-point ncclSend/ncclRecv: ring shift, neighbour exchange, all-to-all, self, zero-count, ungrouped.
// Usage: p2p [proc|threads|devices|devices-null|env] [nranks=4] (env: one rank of a genie run / torchrun job)
#include <cstdint>
#include <string>
#include <vector>

#include "nccl_check.cuh"

// Payload element i of a message from `src` to `dst` with a tag, as an int32 (distinct for every message).
static int32_t payload(int src, int dst, int tag, size_t i) {
  return int32_t(src * 10000000 + dst * 1000000 + tag * 100000 + int(i % 100000));
}

struct Buf {
  int32_t* d = nullptr;
  size_t n = 0;
};

static Buf device_alloc(const RankCtx& c, size_t n) {
  Buf b;
  b.n = n;
  CHECK_CUDA(cudaSetDevice(c.device));
  CHECK_CUDA(cudaMalloc(&b.d, (n ? n : 1) * sizeof(int32_t)));
  return b;
}

static void upload(const RankCtx& c, Buf& b, const std::vector<int32_t>& h) {
  CHECK_CUDA(cudaSetDevice(c.device));
  CHECK_CUDA(cudaMemcpy(b.d, h.data(), h.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
}

static std::vector<int32_t> download(const RankCtx& c, const int32_t* d, size_t n) {
  std::vector<int32_t> h(n);
  CHECK_CUDA(cudaSetDevice(c.device));
  if (n) CHECK_CUDA(cudaMemcpy(h.data(), d, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
  return h;
}

static std::vector<int32_t> message(int src, int dst, int tag, size_t n) {
  std::vector<int32_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = payload(src, dst, tag, i);
  return h;
}

// Elements of got[0, n) that differ from the message src -> dst with the tag.
static long differing(const std::vector<int32_t>& got, size_t off, size_t n, int src, int dst, int tag) {
  long bad = 0;
  for (size_t i = 0; i < n; ++i) bad += got[off + i] != payload(src, dst, tag, i);
  return bad;
}

static const int32_t kSentinel = -7;

// Send to rank+1 and receive from rank-1 in one group (the group lets both progress: no deadlock).
static void ring_shift(Ranks& ranks, int n) {
  const size_t counts[] = {1, 1001, 65536};
  for (size_t count : counts) {
    std::vector<Buf> sb, rb;
    for (auto& c : ranks) {
      sb.push_back(device_alloc(c, count));
      rb.push_back(device_alloc(c, count));
      upload(c, sb.back(), message(c.rank, (c.rank + 1) % n, 0, count));
      upload(c, rb.back(), std::vector<int32_t>(count, kSentinel));
    }
    CHECK_NCCL(ncclGroupStart());
    for (size_t l = 0; l < ranks.size(); ++l) {
      RankCtx& c = ranks[l];
      CHECK_NCCL(ncclSend(sb[l].d, count, ncclInt32, (c.rank + 1) % n, c.comm, c.stream));
      CHECK_NCCL(ncclRecv(rb[l].d, count, ncclInt32, (c.rank + n - 1) % n, c.comm, c.stream));
    }
    CHECK_NCCL(ncclGroupEnd());
    sync_all(ranks);
    for (size_t l = 0; l < ranks.size(); ++l) {
      RankCtx& c = ranks[l];
      const auto got = download(c, rb[l].d, count);
      expect_eq(c.rank, "ring shift of " + std::to_string(count) + " int32: elements differing", 0,
                differing(got, 0, count, (c.rank + n - 1) % n, c.rank, 0));
      CHECK_CUDA(cudaFree(sb[l].d));
      CHECK_CUDA(cudaFree(rb[l].d));
    }
  }
}

// Both neighbours at once: two sends and two receives per rank in one group, with different payloads.
static void bidirectional(Ranks& ranks, int n) {
  const size_t count = 4096;
  std::vector<Buf> to_right, to_left, from_left, from_right;
  for (auto& c : ranks) {
    const int right = (c.rank + 1) % n, left = (c.rank + n - 1) % n;
    to_right.push_back(device_alloc(c, count));
    to_left.push_back(device_alloc(c, count));
    from_left.push_back(device_alloc(c, count));
    from_right.push_back(device_alloc(c, count));
    upload(c, to_right.back(), message(c.rank, right, 1, count));
    upload(c, to_left.back(), message(c.rank, left, 2, count));
    upload(c, from_left.back(), std::vector<int32_t>(count, kSentinel));
    upload(c, from_right.back(), std::vector<int32_t>(count, kSentinel));
  }
  // With two ranks both neighbours are the same peer: sends and receives to one peer match in issue order.
  CHECK_NCCL(ncclGroupStart());
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    const int right = (c.rank + 1) % n, left = (c.rank + n - 1) % n;
    CHECK_NCCL(ncclSend(to_right[l].d, count, ncclInt32, right, c.comm, c.stream));
    CHECK_NCCL(ncclSend(to_left[l].d, count, ncclInt32, left, c.comm, c.stream));
    CHECK_NCCL(ncclRecv(from_left[l].d, count, ncclInt32, left, c.comm, c.stream));
    CHECK_NCCL(ncclRecv(from_right[l].d, count, ncclInt32, right, c.comm, c.stream));
  }
  CHECK_NCCL(ncclGroupEnd());
  sync_all(ranks);
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    const int right = (c.rank + 1) % n, left = (c.rank + n - 1) % n;
    expect_eq(c.rank, "bidirectional: from the left neighbour, elements differing", 0,
              differing(download(c, from_left[l].d, count), 0, count, left, c.rank, 1));
    expect_eq(c.rank, "bidirectional: from the right neighbour, elements differing", 0,
              differing(download(c, from_right[l].d, count), 0, count, right, c.rank, 2));
    for (Buf* b : {&to_right[l], &to_left[l], &from_left[l], &from_right[l]}) CHECK_CUDA(cudaFree(b->d));
  }
}

// All-to-all from send/recv pairs in one group; every (src, dst) pair has its own count, self included.
static size_t a2a_count(int src, int dst) { return 50 + 31 * size_t(src) + 7 * size_t(dst); }

static void alltoallv(Ranks& ranks, int n) {
  std::vector<Buf> sb, rb;
  std::vector<std::vector<size_t>> soff(ranks.size()), roff(ranks.size());
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    std::vector<int32_t> hs;
    size_t rtotal = 0;
    for (int p = 0; p < n; ++p) {
      soff[l].push_back(hs.size());
      const auto m = message(c.rank, p, 3, a2a_count(c.rank, p));
      hs.insert(hs.end(), m.begin(), m.end());
      roff[l].push_back(rtotal);
      rtotal += a2a_count(p, c.rank);
    }
    sb.push_back(device_alloc(c, hs.size()));
    rb.push_back(device_alloc(c, rtotal));
    upload(c, sb.back(), hs);
    upload(c, rb.back(), std::vector<int32_t>(rtotal, kSentinel));
  }
  CHECK_NCCL(ncclGroupStart());
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    for (int p = 0; p < n; ++p) {
      CHECK_NCCL(ncclSend(sb[l].d + soff[l][p], a2a_count(c.rank, p), ncclInt32, p, c.comm, c.stream));
      CHECK_NCCL(ncclRecv(rb[l].d + roff[l][p], a2a_count(p, c.rank), ncclInt32, p, c.comm, c.stream));
    }
  }
  CHECK_NCCL(ncclGroupEnd());
  sync_all(ranks);
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    const auto got = download(c, rb[l].d, rb[l].n);
    long bad = 0;
    for (int p = 0; p < n; ++p) bad += differing(got, roff[l][p], a2a_count(p, c.rank), p, c.rank, 3);
    expect_eq(c.rank, "all-to-all from send/recv pairs with per-pair counts: elements differing", 0, bad);
    CHECK_CUDA(cudaFree(sb[l].d));
    CHECK_CUDA(cudaFree(rb[l].d));
  }
}

// A rank sends to itself, and a zero-count send/recv pair moves nothing.
static void self_and_zero(Ranks& ranks, int n) {
  const size_t count = 777;
  std::vector<Buf> sb, rb, zb;
  for (auto& c : ranks) {
    sb.push_back(device_alloc(c, count));
    rb.push_back(device_alloc(c, count));
    zb.push_back(device_alloc(c, 16));
    upload(c, sb.back(), message(c.rank, c.rank, 4, count));
    upload(c, rb.back(), std::vector<int32_t>(count, kSentinel));
    upload(c, zb.back(), std::vector<int32_t>(16, kSentinel));
  }
  grouped(ranks, [&](RankCtx& c) {
    const size_t l = size_t(&c - ranks.data());
    CHECK_NCCL(ncclSend(sb[l].d, count, ncclInt32, c.rank, c.comm, c.stream));
    CHECK_NCCL(ncclRecv(rb[l].d, count, ncclInt32, c.rank, c.comm, c.stream));
  });
  sync_all(ranks);
  grouped(ranks, [&](RankCtx& c) {
    const size_t l = size_t(&c - ranks.data());
    CHECK_NCCL(ncclSend(sb[l].d, 0, ncclInt32, (c.rank + 1) % n, c.comm, c.stream));
    CHECK_NCCL(ncclRecv(zb[l].d, 0, ncclInt32, (c.rank + n - 1) % n, c.comm, c.stream));
  });
  sync_all(ranks);
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    expect_eq(c.rank, "send to self: elements differing", 0,
              differing(download(c, rb[l].d, count), 0, count, c.rank, c.rank, 4));
    const auto z = download(c, zb[l].d, 16);
    long touched = 0;
    for (int32_t v : z) touched += v != kSentinel;
    expect_eq(c.rank, "zero-count send/recv: elements of the receive buffer changed", 0, touched);
    for (Buf* b : {&sb[l], &rb[l], &zb[l]}) CHECK_CUDA(cudaFree(b->d));
  }
}

// Four back-to-back ungrouped exchanges with rank^1: even ranks send first, odd ranks receive first. Stream order
// keeps them matched; one thread owning several ranks issues each half-step for all of them in a group.
static void ungrouped_pairs(Ranks& ranks, int n) {
  const int kRounds = 4;
  auto partner = [&](const RankCtx& c) { return c.rank ^ 1; };
  auto active = [&](const RankCtx& c) { return partner(c) < n; };
  auto count_of = [](int round) { return size_t(1000 + 100 * round); };
  std::vector<std::vector<Buf>> sb(ranks.size()), rb(ranks.size());
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    if (!active(c)) continue;
    for (int k = 0; k < kRounds; ++k) {
      sb[l].push_back(device_alloc(c, count_of(k)));
      rb[l].push_back(device_alloc(c, count_of(k)));
      upload(c, sb[l].back(), message(c.rank, partner(c), 5 + k, count_of(k)));
      upload(c, rb[l].back(), std::vector<int32_t>(count_of(k), kSentinel));
    }
  }
  for (int k = 0; k < kRounds; ++k) {
    for (int half = 0; half < 2; ++half) {
      ungrouped(ranks, [&](RankCtx& c) {
        if (!active(c)) return;
        const size_t l = size_t(&c - ranks.data());
        const bool sends_now = (c.rank % 2 == 0) == (half == 0);
        if (sends_now)
          CHECK_NCCL(ncclSend(sb[l][k].d, count_of(k), ncclInt32, partner(c), c.comm, c.stream));
        else
          CHECK_NCCL(ncclRecv(rb[l][k].d, count_of(k), ncclInt32, partner(c), c.comm, c.stream));
      });
    }
  }
  sync_all(ranks);
  for (size_t l = 0; l < ranks.size(); ++l) {
    RankCtx& c = ranks[l];
    if (!active(c)) {
      note(c.rank, "no partner for the ungrouped exchanges (odd rank count)");
      continue;
    }
    long bad = 0;
    for (int k = 0; k < kRounds; ++k) {
      bad += differing(download(c, rb[l][k].d, count_of(k)), 0, count_of(k), partner(c), c.rank, 5 + k);
      CHECK_CUDA(cudaFree(sb[l][k].d));
      CHECK_CUDA(cudaFree(rb[l][k].d));
    }
    expect_eq(c.rank, "4 ungrouped back-to-back exchanges with rank^1: elements differing", 0, bad);
  }
}

static void body(Ranks& ranks, int n) {
  ring_shift(ranks, n);
  bidirectional(ranks, n);
  alltoallv(ranks, n);
  self_and_zero(ranks, n);
  ungrouped_pairs(ranks, n);
}

int main(int argc, char** argv) {
  Mode mode = Mode::Proc;
  if (argc > 1 && !parse_mode(argv[1], &mode)) {
    std::fprintf(stderr, "usage: %s [proc|threads|devices|devices-null|env] [nranks=4] (env: one rank of a genie run / torchrun job)\n", argv[0]);
    return 2;
  }
  const int nranks = argc > 2 ? std::atoi(argv[2]) : 4;
  if (nranks < 1 || nranks > 64) {
    std::fprintf(stderr, "nranks must be 1..64\n");
    return 2;
  }
  return finish_ranks("p2p", run_ranks(nranks, mode, body));
}
