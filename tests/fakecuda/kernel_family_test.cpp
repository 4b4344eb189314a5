// SPDX-License-Identifier: Apache-2.0
// Tests of kernel classification: the families, scalar types, operand counts and per-thread work read from the
// names of PyTorch, FlashAttention, memory-efficient attention and Triton kernels.
#include "cost/kernel_family.hpp"

#include <gtest/gtest.h>

namespace genie::fakecuda::cost {
namespace {

KernelShape launch(uint32_t gx, uint32_t bx, uint32_t gy = 1, uint32_t gz = 1, uint32_t by = 1) {
  KernelShape s;
  s.grid[0] = gx;
  s.grid[1] = gy;
  s.grid[2] = gz;
  s.block[0] = bx;
  s.block[1] = by;
  return s;
}

TEST(KernelFamily, VectorizedElementwiseMangledAndDemangled) {
  // Expectations (CUDALoops.cuh): 8 elements per thread, std::array<char*, 3> = two inputs and one output,
  // float operands; the mangled and demangled spellings classify alike.
  const char* mangled =
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_";
  for (const char* name : {mangled,
                           "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                           "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"}) {
    KernelInfo k = classify_kernel(name);
    EXPECT_EQ(k.family, KernelFamily::kElementwise) << name;
    EXPECT_EQ(k.elem_bytes, 4);
    EXPECT_EQ(k.streams, 3);
    EXPECT_EQ(k.elems_per_thread, 8);
    // grid 1024 x 128 threads x 8 elements x 3 tensors x 4 bytes
    EXPECT_DOUBLE_EQ(kernel_bytes(k, launch(1024, 128)), 1024.0 * 128 * 8 * 3 * 4);
  }
}

TEST(KernelFamily, FillAndCopyVariants) {
  KernelInfo fill = classify_kernel(
      "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_11FillFunctorIN3c108BFloat16EEESt5arrayIPcLm1EEEEviT0_T1_");
  EXPECT_EQ(fill.family, KernelFamily::kElementwise);
  EXPECT_EQ(fill.elem_bytes, 2);
  EXPECT_EQ(fill.streams, 1);
  KernelInfo copy = classify_kernel(
      "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
      "{lambda()#3}::operator()() const::{lambda()#10}::operator()() const::{lambda(c10::BFloat16)#1}, "
      "std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
      "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, ...)");
  EXPECT_EQ(copy.family, KernelFamily::kCopy);
  EXPECT_EQ(copy.elem_bytes, 2);
  EXPECT_EQ(copy.streams, 2);
  EXPECT_EQ(copy.elems_per_thread, 4);
  KernelInfo legacy = classify_kernel(
      "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<"
      "float> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, ...)");
  EXPECT_EQ(legacy.family, KernelFamily::kElementwise);
  EXPECT_EQ(legacy.elems_per_thread, 2);
}

TEST(KernelFamily, ReductionNormalizationSoftmaxOptimizer) {
  KernelInfo r = classify_kernel(
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, "
      "at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, "
      "float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<...>)");
  EXPECT_EQ(r.family, KernelFamily::kReduction);
  EXPECT_EQ(r.elem_bytes, 2);
  EXPECT_EQ(r.elems_per_thread, 16);

  KernelInfo ln = classify_kernel(
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
      "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)");
  EXPECT_EQ(ln.family, KernelFamily::kNormalization);
  EXPECT_EQ(ln.streams, 2);
  KernelInfo lnb = classify_kernel(
      "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float>(float const*, ...)");
  EXPECT_EQ(lnb.family, KernelFamily::kNormalization);
  EXPECT_EQ(lnb.streams, 3);

  // softmax_warp_forward<bf16, bf16, float, log2_elements = 11>: rows of 2048; 4 warps per block, one row per
  // warp (rows > 128): grid 256 -> 1024 rows x 2048 elements x (read + write) x 2 bytes.
  KernelInfo sm = classify_kernel(
      "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11, false, false>("
      "c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)");
  EXPECT_EQ(sm.family, KernelFamily::kSoftmax);
  EXPECT_EQ(sm.block_n, 2048);
  EXPECT_DOUBLE_EQ(kernel_bytes(sm, launch(256, 32, 1, 1, 4)), 1024.0 * 2048 * 2 * 2);

  KernelInfo adam = classify_kernel(
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
      "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
      "(at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, double, float*, float*>("
      "at::native::(anonymous namespace)::TensorListMetadata<4>, ...)");
  EXPECT_EQ(adam.family, KernelFamily::kOptimizer);
  EXPECT_EQ(adam.streams, 7);  // p, g, m, v read; p, m, v written
  EXPECT_DOUBLE_EQ(kernel_bytes(adam, launch(320, 512)), 320.0 * 65536 * 7 * 4);
}

// cunn_SoftMax over rows longer than a block (the GPT loss: 8192 rows of a 50304-entry vocabulary, one block per
// row): the row length is the kernel's last parameter, read at launch (KernelShape::row_length).
TEST(KernelFamily, SoftmaxRowLengthIsTheLastParameter) {
  KernelInfo fwd = classify_kernel(
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
      "namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)");
  EXPECT_EQ(fwd.family, KernelFamily::kSoftmax);
  EXPECT_EQ(fwd.row_arg_index, 2);
  EXPECT_EQ(fwd.row_arg_bytes, 4);
  KernelInfo bwd = classify_kernel(
      "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous "
      "namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)");
  EXPECT_EQ(bwd.row_arg_index, 3);
  EXPECT_EQ(bwd.row_arg_bytes, 8);
  KernelShape s = launch(8192, 1024);
  const double without = kernel_bytes(fwd, s);  // the launch shape alone: threads x ILP
  EXPECT_DOUBLE_EQ(without, 8192.0 * 1024 * 4 * 2 * 4);
  s.row_length = 50304;  // three passes over each row and the write: 4 streams of fp32
  EXPECT_DOUBLE_EQ(kernel_bytes(fwd, s), 8192.0 * 50304 * 4 * 4);
  EXPECT_DOUBLE_EQ(kernel_bytes(bwd, s), 8192.0 * 50304 * 4 * 4);
  // A signature without a trailing integer reads no argument.
  KernelInfo other = classify_kernel("void at::native::cunn_SoftMaxForwardSmem<4, float, float, float, E>(float*, float const*)");
  EXPECT_EQ(other.row_arg_index, -1);
  s.row_length = 50304;
  EXPECT_DOUBLE_EQ(kernel_bytes(other, s), kernel_bytes(other, launch(8192, 1024)));
}

TEST(KernelFamily, FlashAttentionForwardAndBackward) {
  KernelInfo f = classify_kernel(
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
      "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, "
      "false, true, true, false>(pytorch_flash::Flash_fwd_params)");
  EXPECT_EQ(f.family, KernelFamily::kAttentionForward);
  EXPECT_EQ(f.head_dim, 128);
  EXPECT_EQ(f.block_m, 128);
  EXPECT_TRUE(f.causal);
  AttentionShape a = attention_shape(f, launch(16, 128, 8, 32));
  EXPECT_EQ(a.seq_q, 2048);
  EXPECT_EQ(a.batch, 8);
  EXPECT_EQ(a.heads_q, 32);
  EXPECT_FALSE(a.backward);

  KernelInfo b = classify_kernel(
      "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, "
      "128, 128, 8, 4, 4, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, "
      "cutlass::bfloat16_t> >, false, false, false, false, true, true>(pytorch_flash::Flash_bwd_params)");
  EXPECT_EQ(b.family, KernelFamily::kAttentionBackward);
  EXPECT_EQ(b.head_dim, 64);
  EXPECT_FALSE(b.causal);
  AttentionShape ab = attention_shape(b, launch(8, 256, 2, 16));
  EXPECT_TRUE(ab.backward);
  EXPECT_EQ(ab.seq_kv, 1024);  // 8 key blocks of kBlockN = 128

  KernelInfo aux = classify_kernel("void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::"
                                   "Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
                                   "cutlass::half_t> >(pytorch_flash::Flash_bwd_params)");
  EXPECT_EQ(aux.family, KernelFamily::kAttentionBackward);
  EXPECT_TRUE(aux.aux);
}

TEST(KernelFamily, MemoryEfficientAttentionAndTriton) {
  KernelInfo f = classify_kernel(
      "fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
      "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)");
  EXPECT_EQ(f.family, KernelFamily::kAttentionForward);
  EXPECT_EQ(f.block_m, 64);
  EXPECT_EQ(f.head_dim, 128);
  AttentionShape a = attention_shape(f, launch(32, 128, 16, 4));  // grid (query blocks, heads, batch)
  EXPECT_EQ(a.seq_q, 2048);
  EXPECT_EQ(a.heads_q, 16);
  EXPECT_EQ(a.batch, 4);

  EXPECT_EQ(classify_kernel("triton_poi_fused_add_mul_0").family, KernelFamily::kElementwise);
  EXPECT_EQ(classify_kernel("triton_red_fused_sum_1").family, KernelFamily::kReduction);
  KernelInfo unknown = classify_kernel("_Z4spinv");
  EXPECT_EQ(unknown.family, KernelFamily::kUnknown);
  EXPECT_EQ(unknown.demangled, "spin()");
}

}  // namespace
}  // namespace genie::fakecuda::cost
