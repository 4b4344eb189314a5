// SPDX-License-Identifier: Apache-2.0
// NVLS (NVSwitch multicast/in-switch reduction): all-reduce, all-gather, reduce-scatter.
#include <algorithm>

#include "algorithms/dag_builder.hpp"

namespace genie::netsim {

Status build_nvls(const CollectiveSpec& spec, const Tuning& t, Schedule* s) {
  const int n = spec.nranks;
  if (n == 1) return Status::ok();
  const uint64_t ts = datatype_size(spec.datatype);
  const bool ar = spec.collective == Collective::kAllReduce;
  const bool ag = spec.collective == Collective::kAllGather;
  const bool rs = spec.collective == Collective::kReduceScatter;
  if (!ar && !ag && !rs) {
    return unsupported(std::string("NVLS implements all_reduce, all_gather and reduce_scatter, not ") +
                       collective_name(spec.collective));
  }
  const uint64_t total = ar ? spec.count * ts : spec.count * ts * static_cast<uint64_t>(n);
  const int nch = std::max(1, t.nchannels);
  // NCCL shrinks the NVLS chunk for small operations (enqueue.cc calcCollChunking): with
  // concurrentOps = nChannels * nHeads, 64K below 64 x concurrentOps x chunk, 32K below 8x, 16K below 2x.
  uint64_t chunk = t.chunk_bytes ? t.chunk_bytes : 131072;
  const uint64_t ops = static_cast<uint64_t>(nch) * static_cast<uint64_t>(n);
  if (total < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (total < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (total < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  DagBuilder b(s);
  std::vector<uint32_t> all;
  for (int c = 0; c < nch; ++c) {
    const uint64_t ch_bytes = split_part(total, static_cast<uint64_t>(nch), static_cast<uint64_t>(c));
    if (ch_bytes == 0) continue;
    const uint64_t loop = chunk * static_cast<uint64_t>(n);
    const uint64_t nslices = std::clamp<uint64_t>((ch_bytes + loop - 1) / loop, 1, kMaxNvlsSlicesPerChannel);
    // Four FIFOs per rank, as NCCL's NVLS kernel runs scatter, reduce and gather warps concurrently:
    // uploads of the reduce phase (a), reduced downloads (b), multicast uploads (c), multicast downloads (d).
    // Unlike ring and tree connections (Step::issue_dep), a stage's next chunk waits for the previous one to
    // finish, latency included: a multimem.ld_reduce needs every rank's chunk in place, a synchronisation of
    // all GPUs per chunk and stage. Letting that latency overlap makes the 4-32 MB points of the measured
    // NVLS table (tests/data/calibration/nccl/h100x8_allreduce_nvls_together.txt) 13-18% too fast.
    std::vector<uint32_t> last_a(static_cast<size_t>(n), DagBuilder::kNone);
    std::vector<uint32_t> last_b(static_cast<size_t>(n), DagBuilder::kNone);
    std::vector<uint32_t> last_c(static_cast<size_t>(n), DagBuilder::kNone);
    std::vector<uint32_t> last_d(static_cast<size_t>(n), DagBuilder::kNone);
    for (uint64_t l = 0; l < nslices; ++l) {
      const uint64_t sl = split_part(ch_bytes, nslices, l);
      const auto sl32 = static_cast<uint32_t>(l);
      std::vector<uint32_t> gathered;
      if (ar || rs) {
        // Reduce-scatter through the switch: every rank's whole slice is read by the switch
        // (multimem.ld_reduce), which returns the reduced 1/n portion to its owner.
        all.clear();
        for (int r = 0; r < n; ++r) {
          all.push_back(b.transfer(r, kNvlsEndpoint, sl, c, 0, sl32, false, {last_a[static_cast<size_t>(r)]}));
          last_a[static_cast<size_t>(r)] = all.back();
        }
        for (int r = 0; r < n; ++r) {
          std::vector<uint32_t> deps = all;
          deps.push_back(last_b[static_cast<size_t>(r)]);
          gathered.push_back(b.transfer_v(kNvlsEndpoint, r,
                                          split_part(sl, static_cast<uint64_t>(n), static_cast<uint64_t>(r)), c, 1,
                                          sl32, true, deps));
          last_b[static_cast<size_t>(r)] = gathered.back();
        }
      }
      if (ar || ag) {
        // All-gather through the switch: each rank multicasts its 1/n portion (multimem.st); every rank
        // receives all n portions.
        all.clear();
        for (int r = 0; r < n; ++r) {
          const uint32_t dep = ar ? gathered[static_cast<size_t>(r)] : DagBuilder::kNone;
          all.push_back(b.transfer(r, kNvlsEndpoint, split_part(sl, static_cast<uint64_t>(n), static_cast<uint64_t>(r)),
                                   c, ar ? 2 : 0, sl32, false, {dep, last_c[static_cast<size_t>(r)]}));
          // All-reduce: the reduce warps store (multimem.st) what they just loaded-and-reduced.
          if (ar) s->ops.back().fused = true;
          last_c[static_cast<size_t>(r)] = all.back();
        }
        for (int r = 0; r < n; ++r) {
          std::vector<uint32_t> deps = all;
          deps.push_back(last_d[static_cast<size_t>(r)]);
          last_d[static_cast<size_t>(r)] = b.transfer_v(kNvlsEndpoint, r, sl, c, ar ? 3 : 1, sl32, false, deps);
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace genie::netsim
