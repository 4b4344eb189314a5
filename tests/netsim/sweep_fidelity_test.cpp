// SPDX-License-Identifier: Apache-2.0
// Fidelity: `genie sim --topology hgx-h100 --collective all_reduce -b 1K -e 8G -f 2` against real
// nccl-tests tables (tests/data/calibration/nccl), ring (NCCL_ALGO=RING) and default (NVLS).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "genie/netsim/sweep.hpp"

namespace genie::netsim {
namespace {

/// Required agreement with the measured time at every size (issue #3).
constexpr double kFidelityTolerance = 0.10;

struct Measured {
  double out_of_place_us;
  double in_place_us;
};

/// Reads an nccl-tests table: size -> (out-of-place time, in-place time).
std::map<uint64_t, Measured> read_table(const std::string& path) {
  std::map<uint64_t, Measured> rows;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    uint64_t size, count;
    std::string type, redop, root, wrong, a, b;
    double t_oop, t_ip;
    in >> size >> count >> type >> redop >> root >> t_oop >> a >> b >> wrong >> t_ip;
    if (in) rows[size] = {t_oop, t_ip};
  }
  return rows;
}

void check(const std::string& file, const NcclEnv& env) {
  const auto measured = read_table(std::string(GENIE_CALIBRATION_DIR) + "/nccl/" + file);
  ASSERT_GE(measured.size(), 24u) << "calibration table missing: " << file;
  SweepOptions o;
  o.topology = "hgx-h100";
  o.collective = Collective::kAllReduce;
  o.min_bytes = 1024;
  o.max_bytes = 8ull << 30;
  o.step_factor = 2;
  o.env = env;
  const SweepResult r = run_sweep(o).value();
  ASSERT_EQ(r.rows.size(), 24u);
  for (const SweepRow& row : r.rows) {
    auto it = measured.find(row.size_bytes);
    ASSERT_NE(it, measured.end()) << row.size_bytes;
    // The two columns are two measurements of the same operation; compare with their mean.
    const double ref = (it->second.out_of_place_us + it->second.in_place_us) / 2;
    const double err = (row.time_us - ref) / ref;
    std::printf("%-40s %12lu  measured %9.2f us  simulated %9.2f us  %+6.1f%%  %s/%s/%d\n", file.c_str(),
                static_cast<unsigned long>(row.size_bytes), ref, row.time_us, 100 * err,
                algorithm_name(row.tuning.algorithm), protocol_name(row.tuning.protocol), row.tuning.nchannels);
    EXPECT_LE(std::fabs(err), kFidelityTolerance)
        << file << " size " << row.size_bytes << ": simulated " << row.time_us << " us vs measured " << ref << " us";
  }
}

TEST(SweepFidelity, HgxH100RingMatchesNcclTests) {
  // Expectation: every size from 1 KB to 8 GB within 10% of the measured time (NCCL_ALGO=RING,
  // NCCL_NVLS_ENABLE=0).
  NcclEnv env;
  env.algo = "RING";
  env.nvls_enable = 0;
  check("h100x8_allreduce_ring_together.txt", env);
}

TEST(SweepFidelity, HgxH100DefaultNvlsMatchesNcclTests) {
  // Expectation: with NCCL's own choice (NVLS for large sizes) every size within 10% of the measurement.
  NcclEnv env;
  env.nvls_enable = 1;
  check("h100x8_allreduce_nvls_together.txt", env);
}

}  // namespace
}  // namespace genie::netsim
