# SPDX-License-Identifier: Apache-2.0
"""Process groups, the pipeline schedule and model-parallel gradient clipping for gpt.py.

Rank layout (Megatron-LM's order, tensor parallel fastest): rank = (pp_rank * dp + dp_rank) * tp + tp_rank.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


@dataclass
class Layout:
    """This rank's place in the (pp, dp, tp) grid and the process groups it belongs to (None: size 1)."""

    world: int = 1
    rank: int = 0
    tp: int = 1
    pp: int = 1
    dp: int = 1
    tp_rank: int = 0
    pp_rank: int = 0
    dp_rank: int = 0
    tp_group: object = None
    pp_group: object = None
    dp_group: object = None
    mp_group: object = None  # tensor x pipeline: the ranks holding one replica of the model
    emb_group: object = None  # first and last pipeline stage (tied embedding), same dp and tp position
    pp_ranks: list = field(default_factory=list)  # global ranks of this rank's pipeline, by stage

    def global_rank(self, pp_rank, dp_rank, tp_rank):
        return (pp_rank * self.dp + dp_rank) * self.tp + tp_rank

    @property
    def first_stage(self):
        return self.pp_rank == 0

    @property
    def last_stage(self):
        return self.pp_rank == self.pp - 1


def make_layout(world: int, rank: int, tp: int, pp: int) -> Layout:
    if world % (tp * pp):
        raise SystemExit(f"gpt.py: {world} ranks are not a multiple of --tp {tp} x --pp {pp}")
    lay = Layout(world=world, rank=rank, tp=tp, pp=pp, dp=world // (tp * pp))
    lay.tp_rank = rank % tp
    lay.dp_rank = (rank // tp) % lay.dp
    lay.pp_rank = rank // (tp * lay.dp)
    if world == 1:
        return lay
    # Every rank creates every group, in the same order (new_group is collective over the default group).
    def groups(lists):
        mine = None
        for ranks in lists:
            g = dist.new_group(ranks) if len(ranks) < world else dist.group.WORLD
            if rank in ranks:
                mine = g
        return mine

    R = lay.global_rank
    if tp > 1:
        lay.tp_group = groups([[R(p, d, t) for t in range(tp)] for p in range(pp) for d in range(lay.dp)])
    if lay.dp > 1:
        lay.dp_group = groups([[R(p, d, t) for d in range(lay.dp)] for p in range(pp) for t in range(tp)])
    if pp > 1:
        lists = [[R(p, d, t) for p in range(pp)] for d in range(lay.dp) for t in range(tp)]
        lay.pp_group = groups(lists)
        lay.pp_ranks = [R(p, lay.dp_rank, lay.tp_rank) for p in range(pp)]
        lay.emb_group = groups([[R(0, d, t), R(pp - 1, d, t)] for d in range(lay.dp) for t in range(tp)])
    if tp > 1 and pp > 1:
        lay.mp_group = groups([[R(p, d, t) for p in range(pp) for t in range(tp)] for d in range(lay.dp)])
    else:
        lay.mp_group = lay.tp_group if tp > 1 else lay.pp_group
    return lay


def split_layers(n_layer: int, pp: int, stage: int):
    """Layers [first, last) of a pipeline stage: as even as possible, earlier stages get the remainder."""
    base, extra = divmod(n_layer, pp)
    first = stage * base + min(stage, extra)
    return first, first + base + (1 if stage < extra else 0)


def _p2p(lay: Layout, ops):
    """One batch of point-to-point operations: [(isend|irecv, tensor, stage)], then wait for all."""
    ops = [o for o in ops if o is not None]
    if not ops:
        return
    reqs = dist.batch_isend_irecv(
        [dist.P2POp(op, t, lay.pp_ranks[stage], group=lay.pp_group) for op, t, stage in ops])
    for r in reqs:
        r.wait()


def gpipe_step(lay: Layout, stage_module, tokens, targets, act_shape, act_dtype, backward, no_sync):
    """One training step of a GPipe schedule (Huang et al. 2019): every micro-batch forward, then every
    micro-batch backward. Activations go to the next stage and gradients to the previous one with
    batch_isend_irecv; each batch also posts the receive for the next micro-batch (Megatron's
    send_forward_recv_forward). `backward(loss)` runs the last stage's backward (loss scaling goes there);
    `no_sync()` is a context for all but the last backward (DDP's gradient accumulation). Returns the
    micro-batch losses (last stage) or []."""
    M = len(tokens)
    s, first, last = lay.pp_rank, lay.first_stage, lay.last_stage
    dev = torch.device("cuda", torch.cuda.current_device())
    new_act = lambda: torch.empty(act_shape, dtype=act_dtype, device=dev)  # noqa: E731
    inputs, outputs, losses = [], [], []
    recv = None if first else new_act()
    if not first:
        _p2p(lay, [(dist.irecv, recv, s - 1)])
    for i in range(M):
        if first:
            out = stage_module(tokens[i])
        else:
            x = recv.requires_grad_()
            inputs.append(x)
            out = stage_module(x, targets[i] if last else None)
        nxt = new_act() if (not first and i + 1 < M) else None
        if last:
            losses.append(out)
            _p2p(lay, [(dist.irecv, nxt, s - 1) if nxt is not None else None])
        else:
            outputs.append(out)
            _p2p(lay, [(dist.isend, out.detach(), s + 1), (dist.irecv, nxt, s - 1) if nxt is not None else None])
        recv = nxt
    # Backward, in micro-batch order.
    grad = None if last else new_act()
    if not last:
        _p2p(lay, [(dist.irecv, grad, s + 1)])
    for i in range(M):
        with no_sync() if i + 1 < M else contextlib.nullcontext():
            if last:
                backward(losses[i] / M)
            else:
                torch.autograd.backward(outputs[i], grad)
        nxt = new_act() if (not last and i + 1 < M) else None
        send = (dist.isend, inputs[i].grad, s - 1) if not first else None
        _p2p(lay, [send, (dist.irecv, nxt, s + 1) if nxt is not None else None])
        grad = nxt
    return losses


def clip_grad_norm_model_parallel(params, replicated, max_norm, lay: Layout, skip=()):
    """Megatron's clip_grad_norm_fp32: the squared norms of this rank's gradients, with parameters that are
    replicated across the tensor-parallel group counted once, summed over the model-parallel group by one
    all-reduce; then every gradient is scaled by min(1, max_norm / norm). Returns the norm (a device tensor)."""
    rep = {id(p) for p in replicated}
    skip = {id(p) for p in skip}
    grads = [p.grad for p in params if p.grad is not None]
    own = [p.grad for p in params if p.grad is not None and id(p) not in rep and id(p) not in skip]
    shared = [p.grad for p in params if p.grad is not None and id(p) in rep]
    dev = grads[0].device
    total = torch.zeros((), dtype=torch.float32, device=dev)
    if own:
        total = total + torch.stack(torch._foreach_norm(own)).float().pow(2).sum()
    if shared:
        total = total + torch.stack(torch._foreach_norm(shared)).float().pow(2).sum() / lay.tp
    if lay.mp_group is not None:
        dist.all_reduce(total, group=lay.mp_group)
    norm = total.sqrt()
    coef = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, coef)
    return norm
