# SPDX-License-Identifier: Apache-2.0
# Convolutional models on Genie's cuDNN (torchvision ResNets, examples/pytorch/resnet.py, checked by
# tests/e2e/torch_resnet.py): every convolution of the last step on a cuDNN engine (forward, data and weight
# gradient), counted as compute. Small shapes (ResNet-18, batch 8, 64x64 images): the point is coverage; the
# ResNet-50 step times are in docs/validation.md. Included from CMakeLists.txt after torch.cmake, and like it not in
# the sanitizer builds (torch's own libraries are not instrumented; torch.cmake defines genie_torch_venv).
if(GENIE_SANITIZE)
  return()
endif()
function(genie_add_resnet name ranks)
  cmake_parse_arguments(R "NEWEST;NATIVE" "" "ENV;ARGS" ${ARGN})
  genie_torch_venv(R_NEWEST)
  set(extra "")
  if(R_NATIVE)
    set(extra --compare-native)
  endif()
  add_test(NAME ${name}
    COMMAND env ${R_ENV} ${GENIE_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/torch_resnet.py --genie ${GENIE_BIN}
            --python ${py} --ranks ${ranks} ${extra} -- --model resnet18 --batch 8 --image 64 --steps 3 ${R_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "e2e;torch" TIMEOUT 600 PROCESSORS 2
    FIXTURES_REQUIRED ${fixture} PASS_REGULAR_EXPRESSION "torch_resnet: 0 failed" FAIL_REGULAR_EXPRESSION "^FAIL ")
endfunction()

# bf16 autocast, NCHW (tensor-core engines behind layout transforms), against cudnn.enabled = False.
genie_add_resnet(e2e_torch_resnet18_single 1 NATIVE)
# DDP on 2 ranks, channels-last.
genie_add_resnet(e2e_torch_resnet18_ddp_2 2 ARGS --ddp --channels-last)
# fp32 with cudnn.benchmark: cuDNN's Find times every engine plan; batch norm runs through cuDNN too.
genie_add_resnet(e2e_torch_resnet18_fp32_benchmark 1 ARGS --amp none --benchmark)
# fp16 on the legacy v7 API (TORCH_CUDNN_V8_API_DISABLED=1: Get*_v7, workspace sizes, cudnnConvolution*).
genie_add_resnet(e2e_torch_resnet18_fp16_v7 1 ENV TORCH_CUDNN_V8_API_DISABLED=1 ARGS --amp fp16)
# torch 2.15 (cuDNN 9.26's frontend in libtorch_cuda) with DDP.
genie_add_resnet(e2e_torch_newest_resnet18_ddp_2 2 NEWEST ARGS --ddp --channels-last)
# torch.compile (default mode) with DDP on 2 ranks: convolutions stay on cuDNN, batch norm and activations become
# Triton kernels (compiles afresh: ~2 min of the 2-core VM).
genie_add_resnet(e2e_torch_resnet18_compile_ddp_2 2 ARGS --ddp --channels-last --compile default)
