// SPDX-License-Identifier: Apache-2.0
// `genie cost`: what-if queries of the cost model. Each subcommand prints how it read the question, then the
// predicted GPU time in microseconds alone on the last line (scripts take `| tail -1`).
#include <cstdio>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/device_spec.hpp"
#include "genie/fakecuda/family_cost_model.hpp"

namespace genie::cli {
namespace {

/// Parses "X[,Y[,Z]]" into out (missing dimensions are 1). False on anything else.
bool parse_dim3(const std::string& text, uint32_t out[3]) {
  std::stringstream ss(text);
  std::string item;
  int i = 0;
  while (std::getline(ss, item, ',')) {
    if (i == 3 || item.empty()) return false;
    size_t pos = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(item, &pos);
    } catch (const std::exception&) {
      return false;
    }
    if (pos != item.size() || v == 0 || v > 0xffffffffu) return false;
    out[i++] = static_cast<uint32_t>(v);
  }
  if (i == 0) return false;
  for (; i < 3; ++i) out[i] = 1;
  return true;
}

/// The model for `device` (a preset or a device JSON file) with an optional measured table.
std::unique_ptr<fakecuda::FamilyCostModel> model_for(const std::string& device, const std::string& table,
                                                     const std::string& params, fakecuda::DeviceSpec* spec_out) {
  auto spec = fakecuda::load_device_spec(device);
  if (!spec.is_ok()) {
    std::fprintf(stderr, "genie cost: --device: %s\n", spec.status().message().c_str());
    return nullptr;
  }
  fakecuda::KernelTable t;
  if (!table.empty()) {
    auto loaded = fakecuda::load_kernel_table(table);
    if (!loaded.is_ok()) {
      std::fprintf(stderr, "genie cost: --table: %s\n", loaded.status().message().c_str());
      return nullptr;
    }
    t = std::move(loaded.value());
  }
  fakecuda::CostParams p = fakecuda::cost_params_for(spec.value());
  if (!params.empty()) {
    auto loaded = fakecuda::load_cost_params(params);
    if (!loaded.is_ok()) {
      std::fprintf(stderr, "genie cost: --params: %s\n", loaded.status().message().c_str());
      return nullptr;
    }
    p = std::move(loaded.value());
  }
  *spec_out = spec.value();
  return std::make_unique<fakecuda::FamilyCostModel>(spec.value(), std::move(t), std::move(p));
}

/// Element sizes of a GEMM's operands and output for a math type (the common cuBLAS configurations: fp8 and int8
/// inputs produce bf16 and int32 outputs).
void element_sizes(fakecuda::GemmMath m, uint8_t* ab, uint8_t* c) {
  using fakecuda::GemmMath;
  switch (m) {
    case GemmMath::kFp64: *ab = *c = 8; break;
    case GemmMath::kFp32: case GemmMath::kTf32: *ab = *c = 4; break;
    case GemmMath::kBf16: case GemmMath::kFp16: *ab = *c = 2; break;
    case GemmMath::kFp8: *ab = 1; *c = 2; break;
    case GemmMath::kInt8: *ab = 1; *c = 4; break;
  }
}

}  // namespace

void register_cost_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("cost", "Predicted GPU time of a GEMM or a kernel launch (last line: microseconds)");
  cmd->require_subcommand(1);

  // --- gemm ---
  struct GemmOpts {
    std::string device = "h200", dtype = "bf16", params;
    int64_t m = 0, n = 0, k = 0, batch = 1;
    bool trans_a = false, trans_b = false, accumulate = false;
  };
  static GemmOpts g;
  auto* gemm = cmd->add_subcommand("gemm", "D[m,n] = A[m,k] B[k,n] as cuBLAS runs it");
  gemm->add_option("--device", g.device, "Device preset or device JSON file")->capture_default_str();
  gemm->add_option("--dtype", g.dtype, "Math: bf16, fp16, fp32, tf32, fp64, fp8, int8")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32", "tf32", "fp64", "fp8", "int8"}))
      ->capture_default_str();
  gemm->add_option("--m", g.m, "Rows of D")->required()->check(CLI::NonNegativeNumber);
  gemm->add_option("--n", g.n, "Columns of D")->required()->check(CLI::NonNegativeNumber);
  gemm->add_option("--k", g.k, "Reduction dimension")->required()->check(CLI::NonNegativeNumber);
  gemm->add_option("--batch", g.batch, "Batch count (strided batched GEMM)")->check(CLI::NonNegativeNumber);
  gemm->add_flag("--trans-a", g.trans_a, "op(A) = A^T");
  gemm->add_flag("--trans-b", g.trans_b, "op(B) = B^T");
  gemm->add_flag("--accumulate", g.accumulate, "beta != 0: C is read");
  gemm->add_option("--params", g.params, "Cost-model parameter file (genie calibrate --fit output)");
  gemm->callback([exit_code] {
    fakecuda::DeviceSpec spec;
    auto model = model_for(g.device, "", g.params, &spec);
    if (!model) {
      *exit_code = 2;
      return;
    }
    fakecuda::GemmShape s;
    fakecuda::parse_gemm_math(g.dtype, &s.math);
    element_sizes(s.math, &s.ab_bytes, &s.c_bytes);
    s.m = g.m;
    s.n = g.n;
    s.k = g.k;
    s.batch = g.batch;
    s.trans_a = g.trans_a;
    s.trans_b = g.trans_b;
    s.reads_c = g.accumulate;
    double us = (s.m == 0 || s.n == 0 || s.batch == 0) ? 0.0 : model->gemm(s).to_us();
    std::printf("%s: %s GEMM m=%lld n=%lld k=%lld batch=%lld: %.3f TFLOP/s\n", spec.name.c_str(), g.dtype.c_str(),
                static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                static_cast<long long>(s.batch), us > 0 ? s.flops() / (us * 1e-6) / 1e12 : 0.0);
    std::printf("%.3f\n", us);
    *exit_code = 0;
  });

  // --- kernel ---
  struct KernelOpts {
    std::string device = "h200", name, grid = "1", block = "1", table, params;
    size_t shared_mem = 0;
  };
  static KernelOpts kopt;
  auto* kernel = cmd->add_subcommand("kernel", "A kernel launch: name (mangled or plain), grid, block");
  kernel->add_option("--device", kopt.device, "Device preset or device JSON file")->capture_default_str();
  kernel->add_option("--name", kopt.name, "Kernel name as registered (mangled) or as a profiler shows it")->required();
  kernel->add_option("--grid", kopt.grid, "Grid dimensions X[,Y[,Z]]")->required();
  kernel->add_option("--block", kopt.block, "Block dimensions X[,Y[,Z]]")->required();
  kernel->add_option("--shared-mem", kopt.shared_mem, "Dynamic shared memory in bytes");
  kernel->add_option("--table", kopt.table, "Measured table (genie calibrate output) to consult first");
  kernel->add_option("--params", kopt.params, "Cost-model parameter file (genie calibrate --fit output)");
  kernel->callback([exit_code] {
    fakecuda::KernelShape shape;
    if (!parse_dim3(kopt.grid, shape.grid)) {
      std::fprintf(stderr, "genie cost kernel: --grid '%s': expected X[,Y[,Z]] of positive integers\n",
                   kopt.grid.c_str());
      *exit_code = 2;
      return;
    }
    if (!parse_dim3(kopt.block, shape.block)) {
      std::fprintf(stderr, "genie cost kernel: --block '%s': expected X[,Y[,Z]] of positive integers\n",
                   kopt.block.c_str());
      *exit_code = 2;
      return;
    }
    shape.shared_mem = kopt.shared_mem;
    fakecuda::DeviceSpec spec;
    auto model = model_for(kopt.device, kopt.table, kopt.params, &spec);
    if (!model) {
      *exit_code = 2;
      return;
    }
    fakecuda::KernelEstimate e = model->explain_kernel(kopt.name, shape);
    double us = e.duration.to_us();
    std::printf("%s: kernel %s grid (%u,%u,%u) block (%u,%u,%u)\n", spec.name.c_str(), kopt.name.c_str(),
                shape.grid[0], shape.grid[1], shape.grid[2], shape.block[0], shape.block[1], shape.block[2]);
    std::printf("family %s, from %s", e.family.c_str(), e.source.c_str());
    if (e.bytes > 0) std::printf(", %.0f bytes of HBM traffic", e.bytes);
    if (e.flops > 0) std::printf(", %.4g flops", e.flops);
    std::printf("\n");
    std::printf("%.3f\n", us);
    *exit_code = 0;
  });
}

}  // namespace genie::cli
