# SPDX-License-Identifier: Apache-2.0
"""A GPT (nanoGPT-like: GPT-2 architecture, pre-LayerNorm, GELU MLP, tied embedding) with Megatron-style tensor
parallelism and sequence parallelism written with explicit collectives.

Activations are sequence-first, [T, B, C], as in Megatron-LM, so that the sequence-parallel all-gather and
reduce-scatter work on the first dimension (contiguous chunks, no transposes around the collectives).

Tensor parallelism over a group of `tp` ranks (Shoeybi et al. 2019, Korthikanti et al. 2022):
  - between blocks the residual stream is split along the sequence: each rank holds [T/tp, B, C];
  - attention and MLP: LayerNorm on the local chunk, all-gather along the sequence, a column-parallel linear
    (QKV or the MLP's first layer, output features split), the local heads or GELU, a row-parallel linear
    (input features split) and a reduce-scatter back to sequence chunks;
  - the backward of an all-gather is a reduce-scatter and the other way round;
  - the embedding is vocab-parallel (rows split) followed by a reduce-scatter; the output layer reuses the
    same shard (tied weights) after an all-gather, and the cross-entropy is vocab-parallel (three all-reduces);
  - parameters that are replicated across the group (LayerNorms, row-parallel biases, position embedding) get
    partial gradients from each sequence chunk: `sp_replicated_params` lists them for one coalesced all-reduce
    per step.
With tp = 1 every collective is skipped and the model is the plain GPT.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

# GPT-2 sizes (Radford et al. 2019, table 2; nanoGPT's model configs). The vocabulary is GPT-2's 50257
# rounded up to 50304 (a multiple of 64), as nanoGPT does for speed. gpt-tiny is for quick tests.
MODELS = {
    "gpt-tiny": dict(n_layer=4, n_head=4, n_embd=256),
    "gpt2-124m": dict(n_layer=12, n_head=12, n_embd=768),
    "gpt2-350m": dict(n_layer=24, n_head=16, n_embd=1024),
    "gpt2-774m": dict(n_layer=36, n_head=20, n_embd=1280),
    "gpt2-1.5b": dict(n_layer=48, n_head=25, n_embd=1600),
}
VOCAB = 50304


@dataclass
class GPTConfig:
    n_layer: int
    n_head: int
    n_embd: int
    vocab_size: int = VOCAB
    block_size: int = 1024


class TensorParallel:
    """The tensor-parallel group of this rank (size 1: no tensor parallelism)."""

    def __init__(self, group=None):
        self.group = group
        self.size = dist.get_world_size(group) if group is not None else 1
        self.rank = dist.get_rank(group) if group is not None else 0


# ---- collectives with autograd (Megatron's tensor_parallel/mappings.py) ----------------------------------


def _all_gather_seq(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    out = torch.empty((x.shape[0] * tp.size,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    dist.all_gather_into_tensor(out, x.contiguous(), group=tp.group)
    return out


def _reduce_scatter_seq(x: torch.Tensor, tp: TensorParallel) -> torch.Tensor:
    out = torch.empty((x.shape[0] // tp.size,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    dist.reduce_scatter_tensor(out, x.contiguous(), group=tp.group)
    return out


class _GatherFromSequenceParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        return _all_gather_seq(x, tp)

    @staticmethod
    def backward(ctx, grad):
        return _reduce_scatter_seq(grad, ctx.tp), None


class _ReduceScatterToSequenceParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        return _reduce_scatter_seq(x, tp)

    @staticmethod
    def backward(ctx, grad):
        return _all_gather_seq(grad, ctx.tp), None


def gather_seq(x, tp: TensorParallel):
    return x if tp.size == 1 else _GatherFromSequenceParallel.apply(x, tp)


def reduce_scatter_seq(x, tp: TensorParallel):
    return x if tp.size == 1 else _ReduceScatterToSequenceParallel.apply(x, tp)


class _VocabParallelCrossEntropy(torch.autograd.Function):
    """Cross-entropy over logits split along the vocabulary (Megatron's _VocabParallelCrossEntropy): an
    all-reduce of the max, of the target logit and of the sum of exponentials; the backward is local."""

    @staticmethod
    def forward(ctx, logits, target, tp):
        logits = logits.float()
        vmax = logits.max(dim=-1)[0]
        dist.all_reduce(vmax, op=dist.ReduceOp.MAX, group=tp.group)
        logits = logits - vmax.unsqueeze(-1)
        per_rank = logits.shape[-1]
        start = tp.rank * per_rank
        outside = (target < start) | (target >= start + per_rank)
        local_target = (target - start).masked_fill(outside, 0)
        predicted = logits.gather(-1, local_target.unsqueeze(-1)).squeeze(-1).masked_fill(outside, 0.0)
        dist.all_reduce(predicted, group=tp.group)
        exp = logits.exp()
        sum_exp = exp.sum(dim=-1)
        dist.all_reduce(sum_exp, group=tp.group)
        loss = torch.log(sum_exp) - predicted
        ctx.save_for_backward(exp.div_(sum_exp.unsqueeze(-1)), local_target, outside)
        return loss.mean()

    @staticmethod
    def backward(ctx, grad):
        softmax, local_target, outside = ctx.saved_tensors
        g = softmax.scatter_add(-1, local_target.unsqueeze(-1), -(~outside).unsqueeze(-1).to(softmax.dtype))
        return g.mul_(grad / local_target.numel()), None, None


# ---- layers ----------------------------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig, tp: TensorParallel):
        super().__init__()
        self.tp = tp
        self.n_head = cfg.n_head // tp.size  # heads of this rank
        self.head_dim = cfg.n_embd // cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * self.n_head * self.head_dim)  # column-parallel
        self.c_proj = nn.Linear(self.n_head * self.head_dim, cfg.n_embd, bias=False)  # row-parallel
        self.c_proj_bias = nn.Parameter(torch.zeros(cfg.n_embd))  # added after the reduction: replicated

    def forward(self, x):  # x: [T, B, C] (full sequence)
        T, B, _ = x.shape
        qkv = self.c_attn(x).view(T, B, self.n_head, 3, self.head_dim)
        q, k, v = qkv.permute(3, 1, 2, 0, 4).unbind(0)  # each [B, h, T, d]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.permute(2, 0, 1, 3).reshape(T, B, self.n_head * self.head_dim)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig, tp: TensorParallel):
        super().__init__()
        hidden = 4 * cfg.n_embd // tp.size
        self.c_fc = nn.Linear(cfg.n_embd, hidden)  # column-parallel
        self.c_proj = nn.Linear(hidden, cfg.n_embd, bias=False)  # row-parallel
        self.c_proj_bias = nn.Parameter(torch.zeros(cfg.n_embd))

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig, tp: TensorParallel):
        super().__init__()
        self.tp = tp
        self.ln_1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg, tp)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg, tp)

    def _sub(self, x, ln, layer):
        h = ln(x)
        if self.tp.size > 1 and torch.is_autocast_enabled("cuda"):
            h = h.to(torch.get_autocast_dtype("cuda"))  # gather in the compute dtype, as Megatron does
        out = reduce_scatter_seq(layer(gather_seq(h, self.tp)), self.tp)
        return x + (out + layer.c_proj_bias)

    def forward(self, x):  # x: [T/tp, B, C]
        x = self._sub(x, self.ln_1, self.attn)
        return self._sub(x, self.ln_2, self.mlp)


class GPT(nn.Module):
    """The whole model, or the blocks [first_layer, last_layer) of one pipeline stage; `has_embedding` and
    `has_head` say whether this stage holds the input embedding and the output layer. With both on one
    stage the output layer reuses the embedding matrix (tied); across stages the last one has its own copy,
    whose gradient the training loop all-reduces with the first stage's (Megatron's embedding group)."""

    def __init__(self, cfg: GPTConfig, tp: TensorParallel, first_layer=0, last_layer=None, has_embedding=True,
                 has_head=True):
        super().__init__()
        if cfg.n_head % tp.size or cfg.vocab_size % tp.size:
            raise ValueError(f"--tp {tp.size} must divide the {cfg.n_head} heads and the vocabulary {cfg.vocab_size}")
        if cfg.block_size % tp.size:
            raise ValueError(f"--tp {tp.size} must divide the sequence length {cfg.block_size}")
        self.cfg, self.tp = cfg, tp
        last_layer = cfg.n_layer if last_layer is None else last_layer
        self.first_layer = first_layer
        self.has_embedding, self.has_head = has_embedding, has_head
        vocab_local = cfg.vocab_size // tp.size
        if has_embedding:
            self.wte = nn.Embedding(vocab_local, cfg.n_embd)  # vocab-parallel rows
            self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.h = nn.ModuleList([Block(cfg, tp) for _ in range(first_layer, last_layer)])
        if has_head:
            self.ln_f = nn.LayerNorm(cfg.n_embd)
            if not has_embedding:
                self.head_weight = nn.Parameter(torch.empty(vocab_local, cfg.n_embd))

    def output_weight(self):
        return self.wte.weight if self.has_embedding else self.head_weight

    @torch.no_grad()
    def init_weights(self):
        """GPT-2 initialisation (nanoGPT's _init_weights): N(0, 0.02), residual projections scaled by
        1/sqrt(2 n_layer), zero biases, unit LayerNorms. On Genie these kernels are timed, not run."""
        std_proj = 0.02 / math.sqrt(2 * self.cfg.n_layer)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                p.normal_(0.0, std_proj)
            elif p.dim() >= 2:
                p.normal_(0.0, 0.02)
            elif "ln" in name and name.endswith("weight"):
                p.fill_(1.0)
            else:
                p.zero_()

    def sp_replicated_params(self):
        """Parameters replicated across the tensor-parallel group whose gradients are partial sums."""
        if self.tp.size == 1:
            return []
        out = []
        for name, p in self.named_parameters():
            if "ln_" in name or name.endswith("c_proj_bias") or name.startswith("wpe"):
                out.append(p)
        return out

    def embed(self, idx):  # idx: [B, T] -> [T/tp, B, C]
        tp = self.tp
        ids = idx.t()
        if tp.size > 1:
            start = tp.rank * self.wte.num_embeddings
            outside = (ids < start) | (ids >= start + self.wte.num_embeddings)
            x = self.wte((ids - start).masked_fill(outside, 0)) * (~outside).unsqueeze(-1)
            x = reduce_scatter_seq(x, tp)
            T_local = x.shape[0]
            pos = torch.arange(tp.rank * T_local, (tp.rank + 1) * T_local, device=idx.device)
        else:
            x = self.wte(ids)
            pos = torch.arange(ids.shape[0], device=idx.device)
        return x + self.wpe(pos).unsqueeze(1)

    def forward(self, x, targets=None):
        """First stage: x is [B, T] token ids; later stages: the [T/tp, B, C] activations of the previous
        stage. Returns the activations, or the mean loss on the last stage."""
        if self.has_embedding:
            x = self.embed(x)
        for block in self.h:
            x = block(x)
        if not self.has_head:
            return x
        h = gather_seq(self.ln_f(x), self.tp)  # [T, B, C]
        logits = F.linear(h, self.output_weight())  # [T, B, V/tp]
        tgt = targets.t()
        if self.tp.size > 1:
            return _VocabParallelCrossEntropy.apply(logits, tgt, self.tp)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.reshape(-1))


def count_params(cfg: GPTConfig) -> int:
    """Parameters of the whole (unsharded, tied) model."""
    C, L = cfg.n_embd, cfg.n_layer
    per_block = 2 * 2 * C + (C * 3 * C + 3 * C) + (C * C + C) + (C * 4 * C + 4 * C) + (4 * C * C + C)
    return cfg.vocab_size * C + cfg.block_size * C + L * per_block + 2 * C
