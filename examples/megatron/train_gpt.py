#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPT training with megatron-core's public API, unmodified library code from PyPI (megatron-core, pinned in
scripts/torch-requirements.txt): parallel_state's process groups, GPTModel with the Megatron-Core local layer spec,
MockGPTDataset through BlendedMegatronDatasetBuilder, the pipeline schedules (1F1B, interleaved), Megatron's
DistributedDataParallel with the distributed optimizer, MoE layers with expert parallelism and the all-to-all token
dispatcher, activation recomputation. It is the loop of Megatron-LM's pretrain_gpt.py without its argument parser.

    genie run -n 4 -- python examples/megatron/train_gpt.py --tp 2 --pp 2
    torchrun --nproc-per-node 4 examples/megatron/train_gpt.py --tp 2 --pp 2      (on real GPUs)

Each rank prints `iteration N time_ms X` from CUDA events (under Genie: the modelled GPUs' time) and rank 0 the
layout: `train_gpt.py: world W tp T pp P vpp V cp C ep E dp D ...`. Every iteration is an NVTX range "step", which
Genie's report breaks down per rank.
"""
from __future__ import annotations

import argparse
import os
import sys
from functools import partial

import torch
import torch.distributed as dist

MODELS = {  # layers, hidden, heads, ffn (None: 4 x hidden), vocab
    "gpt-tiny": (4, 128, 4, None, 1024),
    "gpt2-124m": (12, 768, 12, None, 50304),
    "gpt2-350m": (24, 1024, 16, None, 50304),
}


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS), default="gpt-tiny")
    p.add_argument("--layers", type=int, help="override the model's number of layers")
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--micro-batch", type=int, default=2)
    p.add_argument("--global-batch", type=int, default=0,
                   help="samples per iteration over all data-parallel ranks (default: micro-batch x dp x pp)")
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--sp", action="store_true", help="sequence parallelism (needs --tp > 1)")
    p.add_argument("--pp", type=int, default=1)
    p.add_argument("--vpp", type=int, default=0, help="layers per virtual pipeline stage (interleaved 1F1B)")
    p.add_argument("--cp", type=int, default=1)
    p.add_argument("--ep", type=int, default=1)
    p.add_argument("--etp", type=int, default=1,
                   help="expert tensor parallelism (MoE; Megatron's default is --tp, which its MoE layers with biases "
                        "refuse: 'Bias in Moe is only supported when ETP==1')")
    p.add_argument("--experts", type=int, default=0, help="MoE: experts per layer (0: dense)")
    p.add_argument("--topk", type=int, default=2)
    p.add_argument("--dist-opt", action="store_true", help="the distributed optimizer")
    p.add_argument("--overlap-grad-reduce", action="store_true")
    p.add_argument("--overlap-param-gather", action="store_true")
    p.add_argument("--recompute", choices=["none", "full", "selective"], default="none")
    p.add_argument("--fp32", action="store_true", help="fp32 instead of bf16")
    p.add_argument("--fusions", action="store_true",
                   help="pretrain_gpt.py's default fusions (bias-GeLU, bias-dropout-add, masked softmax)")
    p.add_argument("--clip-grad", type=float, default=1.0)
    return p.parse_args(argv)


class SequenceParallelLayerNorm(torch.nn.LayerNorm):
    """torch.nn.LayerNorm for megatron-core's layer spec under sequence parallelism. Each rank normalizes its slice
    of the sequence, so its parameters' gradients are partial sums: marked `sequence_parallel`, Megatron all-reduces
    them over the TP group (finalize_model_grads), as it does for apex's FusedLayerNorm and TE's LayerNorm.
    megatron-core's own fallback without either (WrappedTorchNorm) refuses sequence parallelism, and neither apex nor
    Transformer Engine's PyTorch extension installs from PyPI without a CUDA build (docs/megatron.md)."""

    def __init__(self, config, hidden_size, eps=1e-5, **_):
        super().__init__(hidden_size, eps=eps, dtype=config.params_dtype)
        for p in self.parameters():
            setattr(p, "sequence_parallel", config.sequence_parallel)


def sequence_parallel_spec(layer_spec, cfg, vp_stage):
    """The local layer spec with SequenceParallelLayerNorm for the layers' norms and the block's final norm."""
    import copy

    from megatron.core.transformer.spec_utils import ModuleSpec
    from megatron.core.transformer.transformer_block import (TransformerBlock, TransformerBlockSubmodules,
                                                             get_num_layers_to_build)
    layer = copy.deepcopy(layer_spec)
    layer.submodules.input_layernorm = SequenceParallelLayerNorm
    layer.submodules.pre_mlp_layernorm = SequenceParallelLayerNorm
    n = get_num_layers_to_build(cfg, vp_stage=vp_stage)
    return ModuleSpec(module=TransformerBlock, submodules=TransformerBlockSubmodules(
        layer_specs=[layer] * n, layer_norm=SequenceParallelLayerNorm))


def main(argv=None):
    args = parse(argv)
    from megatron.core import parallel_state as ps
    from megatron.core.datasets.blended_megatron_dataset_builder import BlendedMegatronDatasetBuilder
    from megatron.core.datasets.gpt_dataset import GPTDatasetConfig, MockGPTDataset
    from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig, finalize_model_grads
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.num_microbatches_calculator import init_num_microbatches_calculator
    from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
    from megatron.core.pipeline_parallel import get_forward_backward_func
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    from megatron.core.tokenizers.text.libraries.null_tokenizer import NullTokenizer
    from megatron.core.transformer import TransformerConfig
    from megatron.core.transformer.module import Float16Module

    from megatron.core.transformer.moe import moe_utils
    if not hasattr(moe_utils, "te_general_gemm"):
        # megatron-core 0.16.1 without Transformer Engine: moe_utils's `except ImportError` branch forgets to define
        # te_general_gemm, which its router then reads (NameError). None is what the branch means (docs/megatron.md).
        moe_utils.te_general_gemm = None

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", local))
    layers, hidden, heads, ffn, vocab = MODELS[args.model]
    layers = args.layers or layers
    vpp = None
    if args.vpp:
        if layers % (args.pp * args.vpp):
            sys.exit(f"train_gpt.py: --vpp {args.vpp}: {layers} layers do not split into {args.pp} stages of "
                     f"chunks of {args.vpp}")
        vpp = layers // (args.pp * args.vpp)
    ps.initialize_model_parallel(tensor_model_parallel_size=args.tp, pipeline_model_parallel_size=args.pp,
                                 virtual_pipeline_model_parallel_size=vpp, context_parallel_size=args.cp,
                                 expert_model_parallel_size=args.ep,
                                 expert_tensor_parallel_size=args.etp if args.experts else None)
    dp = ps.get_data_parallel_world_size()
    global_batch = args.global_batch or args.micro_batch * dp * max(args.pp, 1)
    micro_batches = global_batch // (args.micro_batch * dp)
    if micro_batches < 1 or global_batch % (args.micro_batch * dp):
        sys.exit(f"train_gpt.py: --global-batch {global_batch} is not a multiple of micro-batch x dp "
                 f"({args.micro_batch} x {dp})")
    init_num_microbatches_calculator(rank, None, global_batch, args.micro_batch, dp)
    model_parallel_cuda_manual_seed(1234)
    dtype = torch.float32 if args.fp32 else torch.bfloat16

    cfg = TransformerConfig(
        num_layers=layers, hidden_size=hidden, num_attention_heads=heads, ffn_hidden_size=ffn,
        tensor_model_parallel_size=args.tp, pipeline_model_parallel_size=args.pp,
        virtual_pipeline_model_parallel_size=vpp, context_parallel_size=args.cp,
        expert_model_parallel_size=args.ep, sequence_parallel=args.sp,
        expert_tensor_parallel_size=args.etp if args.experts else None,
        num_moe_experts=args.experts or None, moe_router_topk=args.topk if args.experts else 2,
        moe_token_dispatcher_type="alltoall", moe_aux_loss_coeff=1e-2 if args.experts else 0.0,
        bf16=not args.fp32, params_dtype=dtype, pipeline_dtype=dtype, autocast_dtype=dtype,
        hidden_dropout=0.0, attention_dropout=0.0,
        bias_activation_fusion=args.fusions, masked_softmax_fusion=args.fusions,
        bias_dropout_fusion=args.fusions,
        recompute_granularity=None if args.recompute == "none" else args.recompute,
        recompute_method="uniform" if args.recompute == "full" else None,
        recompute_num_layers=1 if args.recompute == "full" else None,
        use_cpu_initialization=False, perform_initialization=True,
        deallocate_pipeline_outputs=True, variable_seq_lengths=False)

    spec = get_gpt_layer_local_spec(num_experts=args.experts or None, moe_grouped_gemm=False)
    chunks = vpp or 1  # model chunks per rank (virtual pipeline stages)
    model = []
    for i in range(chunks):
        pre = ps.is_pipeline_first_stage(ignore_virtual=False, vp_stage=i if vpp else None)
        post = ps.is_pipeline_last_stage(ignore_virtual=False, vp_stage=i if vpp else None)
        layer_spec = sequence_parallel_spec(spec, cfg, i if vpp else None) if args.sp else spec
        m = GPTModel(config=cfg, transformer_layer_spec=layer_spec, vocab_size=vocab, max_sequence_length=args.seq,
                     pre_process=pre, post_process=post, share_embeddings_and_output_weights=True,
                     position_embedding_type="learned_absolute", vp_stage=i if vpp else None)
        m.cuda()
        # pretrain_gpt.py's get_model: bf16/fp16 models run inside Float16Module (casts inputs and outputs).
        model.append(Float16Module(cfg, m) if not args.fp32 else m)
    ddp_cfg = DistributedDataParallelConfig(
        grad_reduce_in_fp32=True, overlap_grad_reduce=args.overlap_grad_reduce,
        overlap_param_gather=args.overlap_param_gather, use_distributed_optimizer=args.dist_opt,
        check_for_nan_in_grad=True, bucket_size=40_000_000 if args.overlap_grad_reduce else None)
    model = [DistributedDataParallel(config=cfg, ddp_config=ddp_cfg, module=m, disable_bucketing=(i > 0))
             for i, m in enumerate(model)]
    opt = get_megatron_optimizer(
        OptimizerConfig(optimizer="adam", lr=1e-4, weight_decay=0.01, bf16=not args.fp32,
                        use_distributed_optimizer=args.dist_opt, clip_grad=args.clip_grad,
                        overlap_param_gather=args.overlap_param_gather), model)
    cfg.no_sync_func = [m.no_sync for m in model] if len(model) > 1 else model[0].no_sync
    cfg.grad_sync_func = None
    if args.overlap_grad_reduce:
        cfg.grad_sync_func = [m.start_grad_sync for m in model] if len(model) > 1 else model[0].start_grad_sync
    cfg.param_sync_func = None
    if args.overlap_param_gather and args.dist_opt:
        cfg.param_sync_func = ([m.start_param_sync for m in model] if len(model) > 1 else model[0].start_param_sync)
    cfg.finalize_model_grads_func = finalize_model_grads

    data_cfg = GPTDatasetConfig(random_seed=1234, sequence_length=args.seq, reset_position_ids=False,
                                reset_attention_mask=False, eod_mask_loss=False,
                                tokenizer=NullTokenizer(vocab_size=vocab - 1), mid_level_dataset_surplus=0.005)
    samples = global_batch * (args.iterations + 1)
    # Every rank builds the mock dataset (pretrain_gpt.py builds it on tensor-parallel rank 0 and broadcasts batches;
    # the data are the same). The builder's barriers run on every rank alike.
    train_ds, _, _ = BlendedMegatronDatasetBuilder(MockGPTDataset, [samples, None, None], lambda: True,
                                                   data_cfg).build()
    sampler = torch.utils.data.DistributedSampler(train_ds, num_replicas=dp, rank=ps.get_data_parallel_rank(),
                                                  shuffle=False)
    loader = torch.utils.data.DataLoader(train_ds, batch_size=args.micro_batch, sampler=sampler, drop_last=True)
    it = iter(loader)
    data_iter = [it] * chunks if vpp else it

    def loss_func(loss_mask, output_tensor):
        losses = output_tensor.float().view(-1)
        mask = loss_mask.view(-1).float()
        loss = torch.sum(losses * mask)
        tokens = mask.sum().clone().detach().to(torch.int)
        return loss, tokens, {"lm loss": torch.cat([loss.clone().detach().view(1), tokens.float().view(1)])}

    def forward_step(data_iterator, m):
        batch = next(data_iterator)
        tokens = batch["tokens"].cuda(non_blocking=True)
        labels = batch["labels"].cuda(non_blocking=True)
        loss_mask = batch["loss_mask"].cuda(non_blocking=True)
        position_ids = batch["position_ids"].cuda(non_blocking=True)
        out = m(tokens, position_ids, None, labels=labels)
        return out, partial(loss_func, loss_mask)

    layout = (f"world {world} tp {args.tp} pp {args.pp} vpp {vpp or 0} cp {args.cp} ep {args.ep} dp {dp} "
              f"micro_batches {micro_batches} layers {layers} hidden {hidden} experts {args.experts} "
              f"sp {int(args.sp)} dist_opt {int(args.dist_opt)} recompute {args.recompute}")
    if rank == 0:
        print(f"train_gpt.py: {args.model} {layout}", flush=True)
    fwd_bwd = get_forward_backward_func()
    for m in model:
        m.train()
    for it_n in range(1, args.iterations + 1):
        torch.cuda.nvtx.range_push("step")
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for m in model:
            m.zero_grad_buffer()
        opt.zero_grad()
        fwd_bwd(forward_step_func=forward_step, data_iterator=data_iter, model=model if vpp else model[0],
                num_microbatches=micro_batches, seq_length=args.seq, micro_batch_size=args.micro_batch,
                forward_only=False)
        ok, grad_norm, _ = opt.step()
        end.record()
        end.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"iteration {it_n} time_ms {start.elapsed_time(end):.3f} update_ok {int(bool(ok))}", flush=True)
    dist.barrier()
    ps.destroy_model_parallel()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
