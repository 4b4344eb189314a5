# SPDX-License-Identifier: Apache-2.0
"""Small CUDA tensors carry real values under Genie (docs/pytorch.md, "Small values").

Kernels do not run on Genie: a kernel launch is a timed delay, so its output holds whatever the device memory held.
Programs steer control flow with small values that kernels compute (torch.distributed's object collectives sum and
compare byte counts, GradScaler checks for infs, `x[mask]` counts a mask). This module keeps those values right
without touching the program's timing:

* A TorchDispatchMode sees every aten and c10d op. An op whose CUDA tensors (inputs, outputs and the storages they
  view) all have at most GENIE_TORCH_SMALL_VALUE_ELEMENTS elements, and whose inputs hold real bytes (written by a
  copy or a collective) or a thunk, is *shadowed*: its real CUDA kernel still launches (timed as usual) and its
  value is recorded lazily as a thunk (the op and the versions of its inputs).
* A version is either a leaf (the storage's real bytes, written by a copy or a collective) or a thunk over
  versions. Nothing is computed when the op is issued, because its inputs may still be in flight (a collective
  pending on a stream).
* A host read (`.item()`, `.tolist()`, `.cpu()`, `bool(t)`, `copy_` to the host, `nonzero` and boolean masks)
  first runs the real op, whose stream synchronisation makes every leaf final, then evaluates the thunk on the
  CPU from the leaves' real bytes, returns that value and writes it into the device memory (host-backed: a plain
  host write, no CUDA call, no virtual time).
* An op that moves real bytes (a collective, a copy) and touches a storage with a thunk, or one a thunk still has
  to read, first enqueues a host function (cudaLaunchHostFunc) on the current stream that evaluates every thunk
  and writes the values at that point of the stream, so the collective sends the right bytes and cannot overwrite
  a leaf before it was read. That costs one modelled API call; nothing waits.
* Kernels that are not shadowed (large ops) write no real bytes, so they leave recorded thunks as they are.
* What such a kernel would have computed is unknown. Where it is a *control value* -- an output of at most
  GENIE_TORCH_CONTROL_VALUE_ELEMENTS (16) elements: a norm, a loss, a max, GradScaler's found_inf -- it is taken
  to be zero (a thunk of zeros, written like any other): finite, so NaN/Inf checks pass, found_inf stays 0 and the
  loss scale keeps its value, a clipping coefficient clamps to 1, and ranks agree. This is emulation, not
  computation; larger outputs keep whatever the memory held.

GENIE_TORCH_SMALL_VALUES=0 turns it off; genie run passes both settings from Genie's config registry.
"""
import ctypes
import os
import sys
import threading
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_ENABLED = os.environ.get("GENIE_TORCH_SMALL_VALUES", "1").lower() not in ("0", "false", "off", "no")
_MAX_ELEMENTS = int(os.environ.get("GENIE_TORCH_SMALL_VALUE_ELEMENTS", "65536"))
_CONTROL_ELEMENTS = int(os.environ.get("GENIE_TORCH_CONTROL_VALUE_ELEMENTS", "16"))
# Pending state is flushed (one host function) when it holds this many storages or a version chain gets this
# deep, so a value that is never read (a step counter) does not keep memory and thunks alive forever.
_MAX_PENDING = 1024
_MAX_DEPTH = 64

_lock = threading.RLock()
_aten_ops = torch.ops.aten
_stats = {"shadowed": 0, "zeroed": 0, "host_reads": 0, "evaluated": 0, "flushes": 0, "eval_errors": 0, "sized": 0}


def stats():
    """Counters: ops shadowed, ops whose control values were taken as zero, host reads answered from a thunk, thunks
    evaluated, host-function flushes."""
    return dict(_stats)


def _warn(msg):
    print(f"[genie] small values: {msg}", file=sys.stderr, flush=True)


# --- Versions of a storage's bytes -------------------------------------------------------------------------------

class _Leaf:
    """A storage's real bytes: read from device memory the first time they are needed (memoised). The storage is
    held so its memory cannot be reused before then; address and size are captured now (resize_ moves them)."""
    __slots__ = ("storage", "ptr", "nbytes", "value", "depth")

    def __init__(self, storage):
        self.storage = storage
        self.ptr = storage.data_ptr()
        self.nbytes = storage.nbytes()
        self.value = None
        self.depth = 0

    def bytes(self):
        if self.value is None:
            v = torch.empty(self.nbytes, dtype=torch.uint8)
            if self.nbytes:
                ctypes.memmove(v.data_ptr(), self.ptr, self.nbytes)
            self.value = v
            self.storage = None
        return self.value


class _Write:
    """The bytes of a storage after a shadowed op wrote one tensor into it: `prev` (a version, or None when the
    tensor covers the whole storage) with the region (dtype, size, stride, offset) replaced by output `slot`."""
    __slots__ = ("prev", "call", "slot", "geometry", "nbytes", "value", "depth")

    def __init__(self, prev, call, slot, geometry, nbytes):
        self.prev, self.call, self.slot, self.geometry, self.nbytes = prev, call, slot, geometry, nbytes
        self.value = None
        # Evaluation recurses through prev and the call's inputs: their longest chain bounds the stack it needs.
        self.depth = max(prev.depth if prev is not None else 0, call.depth) + 1

    def bytes(self):
        if self.value is None:
            out = self.prev.bytes().clone() if self.prev is not None else torch.zeros(self.nbytes, dtype=torch.uint8)
            result = self.call.result()
            if result is not None and result.get(self.slot) is not None:
                try:
                    _region(out, self.geometry).copy_(result[self.slot])
                except Exception as e:  # noqa: BLE001 - a CPU result that does not fit: keep the bytes before
                    _stats["eval_errors"] += 1
                    _warn(f"cannot store the CPU result of {self.call.func}: {type(e).__name__}: {e}")
            self.value = out
            self.prev = self.call = None
        return self.value


def _region(storage_bytes, geometry):
    dtype, size, stride, offset = geometry
    return storage_bytes.view(dtype).as_strided(size, stride, offset)


class _Call:
    """One shadowed op: the aten overload with its CUDA tensor arguments replaced by (version, geometry). Evaluated
    at most once, on the CPU; result() maps each written slot to its CPU value (None if the CPU op failed)."""
    __slots__ = ("func", "args", "kwargs", "written", "done", "value", "depth")

    def __init__(self, func, args, kwargs, written):
        self.func, self.args, self.kwargs, self.written = func, args, kwargs, written
        self.done = False
        self.value = None
        self.depth = max([_depth(a) for a in args] + [_depth(a) for a in kwargs.values()] + [0])

    def result(self):
        if self.done:
            return self.value
        self.done = True
        try:
            args = _materialise(self.args)
            kwargs = {k: _materialise(v) for k, v in self.kwargs.items()}
            if "device" in kwargs:
                kwargs["device"] = torch.device("cpu")
            kwargs.pop("pin_memory", None)
            out = self.func(*args, **kwargs)
            value = {}
            for slot in self.written:
                where, i, j = slot
                if where == "ret":
                    v = out[i] if isinstance(out, (tuple, list)) else out
                else:
                    v = args[i] if isinstance(i, int) else kwargs[i]
                if j is not None:
                    v = v[j]
                value[slot] = v
            self.value = value
            _stats["evaluated"] += 1
        except Exception as e:  # noqa: BLE001 - an op the CPU cannot run leaves the device bytes as they are
            _stats["eval_errors"] += 1
            if _stats["eval_errors"] <= 3:
                _warn(f"cannot evaluate {self.func} on the CPU ({type(e).__name__}: {e}); its output keeps the device "
                      "bytes")
        self.args = self.kwargs = None
        return self.value


class _Zeros:
    """What an op that is not shadowed wrote into its control values (module docstring): zeros of each slot, and
    evenly spread indices for the index results of a selection (_even_indices)."""
    __slots__ = ("value", "depth")

    def __init__(self, slots, values=None):
        self.value = {slot: torch.zeros(size, dtype=dtype) for slot, (dtype, size) in slots.items()}
        self.value.update(values or {})
        self.depth = 0

    def result(self):
        return self.value


# Selections whose index result no kernel computed when their input has no value: (the fresh result holding the
# indices, the rule). Their indices are taken to be spread evenly over the selected dimension, so what is counted
# from them (MoE's tokens per expert: a scatter of top-k indices summed per expert) is a plausible, even routing
# instead of whatever the memory held, and the same on every rank.
_INDEX_RESULTS = {
    _aten_ops.topk.default: (1, "topk"),
    _aten_ops.sort.default: (1, "topk"),
    _aten_ops.sort.stable: (1, "topk"),
    _aten_ops.argsort.default: (0, "topk"),
    _aten_ops.argsort.stable: (0, "topk"),
    _aten_ops.argmax.default: (0, "arg"),
    _aten_ops.argmin.default: (0, "arg"),
    _aten_ops.max.dim: (1, "arg"),
    _aten_ops.min.dim: (1, "arg"),
}


def _even_indices(func, args, kwargs, out_shape):
    """The index result of selection `func` on args[0] with evenly spread indices: row r of a top-k (or sort) over n
    entries selects (r * k + j) mod n for j < k (distinct within the row, every entry equally often over n rows); an
    arg-max/-min of row r is r mod n."""
    x = args[0]
    rule = _INDEX_RESULTS[func][1]
    if rule == "topk":
        dim = args[2] if func is _aten_ops.topk.default and len(args) > 2 else (
            args[1] if func in (_aten_ops.sort.default, _aten_ops.argsort.default) and len(args) > 1 else None)
        dim = kwargs.get("dim", -1 if dim is None else dim)
    else:
        dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if dim is None:  # over all elements: one index
        n = max(1, x.numel())
        return (torch.arange(max(1, int(torch.Size(out_shape).numel()))) % n).reshape(out_shape)
    dim = dim % max(1, x.dim())
    n = max(1, x.shape[dim])
    if rule == "topk":
        k = out_shape[dim]
        moved = list(out_shape)
        moved.pop(dim)
        rows = int(torch.Size(moved).numel())
        idx = (torch.arange(rows).unsqueeze(1) * k + torch.arange(k).unsqueeze(0)) % n
        return idx.reshape(moved + [k]).movedim(-1, dim).contiguous()
    rows = int(torch.Size(out_shape).numel())
    return (torch.arange(rows) % n).reshape(out_shape)


def _depth(a):
    if isinstance(a, _In):
        return a.version.depth if a.version.value is None else 0
    if isinstance(a, (list, tuple)):
        return max([_depth(x) for x in a] + [0])
    return 0


class _In:
    """A CUDA tensor argument of a recorded op: its storage's version when the op was issued, and its view."""
    __slots__ = ("version", "geometry")

    def __init__(self, version, geometry):
        self.version, self.geometry = version, geometry


def _materialise(a):
    if isinstance(a, _In):
        return _region(a.version.bytes(), a.geometry).clone()
    if isinstance(a, (list, tuple)):
        return type(a)(_materialise(x) for x in a)
    return a


# --- Pending state -----------------------------------------------------------------------------------------------
# _pending: id(storage) -> (weakref to the storage, its newest _Write). _leaves: id(storage) -> _Leaf that some
# thunk still has to read. Entries are checked against the weakref (ids are reused after a storage dies).
_pending = {}
_leaves = {}
# Storages whose bytes are real: written by a copy or a collective (or by a host read's write-back). Only ops whose
# CUDA inputs are real or have a thunk are shadowed: an input written by a kernel that did not run holds no value,
# so computing on it would cost CPU time (a fused optimizer step over every small parameter) for nothing.
_known = weakref.WeakValueDictionary()


def _is_known(st):
    return _known.get(id(st)) is st or id(st) in _pending


def _mark_known(tensors):
    for t in tensors:
        st = t.untyped_storage()
        _known[id(st)] = st


def _version_of(st):
    e = _pending.get(id(st))
    if e is not None and e[0]() is st:
        return e[1]
    leaf = _leaves.get(id(st))
    if leaf is None or leaf.storage is not st:
        leaf = _Leaf(st)
        _leaves[id(st)] = leaf
    return leaf


def _geometry(t):
    return (t.dtype, tuple(t.size()), tuple(t.stride()), t.storage_offset())


def _write_now(st, ptr, version):
    """Puts a version's bytes into the storage's device memory (a host write: the memory is host-backed)."""
    b = version.bytes()
    n = min(b.numel(), st.nbytes()) if st is not None else b.numel()
    if n:
        ctypes.memmove(ptr, b.data_ptr(), n)


def _materialise_storage(st):
    """After a host read's synchronisation: evaluates the storage's thunk, writes it to device memory, forgets it."""
    with _lock:
        e = _pending.get(id(st))
        if e is None or e[0]() is not st:
            return False
        leaf = _leaves.pop(id(st), None)
        if leaf is not None and leaf.storage is st:
            leaf.bytes()  # a thunk may still need the bytes this write replaces
        try:
            _write_now(st, st.data_ptr(), e[1])
        except RuntimeError:
            pass  # invalidated since: nothing to write into
        del _pending[id(st)]
        _known[id(st)] = st
        return True


def _take_all():
    """Removes every pending write (as (storage, address, version)) and every leaf; called with _lock held."""
    batch = []
    for ref, version in _pending.values():
        st = ref()
        if st is not None:
            try:
                ptr = st.data_ptr()
            except RuntimeError:
                continue  # a storage torch has invalidated since (FSDP resizes unsharded parameters away)
            batch.append((st, ptr, version))
            _known[id(st)] = st  # real bytes once the host function ran, before anything later on the stream
    leaves = list(_leaves.values())
    _pending.clear()
    _leaves.clear()
    return batch, leaves


def _run_batch(batch, leaves):
    # Every value first (they read leaves and each other), then the writes.
    with _lock:
        for leaf in leaves:
            leaf.bytes()
        for _, _, version in batch:
            version.bytes()
        for st, ptr, version in batch:
            _write_now(st, ptr, version)


_cudart = None
_HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_batches = {}
_batch_ids = iter(range(1, 1 << 62))


@_HOSTFN
def _host_fn(user_data):
    try:
        batch, leaves = _batches.pop(user_data)
        _run_batch(batch, leaves)
    except Exception as e:  # noqa: BLE001 - never let an exception into the runtime's thread
        _warn(f"flush failed: {type(e).__name__}: {e}")


def _flush_at_stream_point():
    """Evaluates every pending thunk at the current stream's present end (a host function), so the op about to be
    enqueued reads or overwrites the right bytes."""
    global _cudart
    with _lock:
        batch, leaves = _take_all()
    if not batch and not leaves:
        return
    _stats["flushes"] += 1
    if _cudart is None:
        _cudart = ctypes.CDLL("libcudart.so.13" if torch.version.cuda.startswith("13") else "libcudart.so.12")
        _cudart.cudaLaunchHostFunc.argtypes = [ctypes.c_void_p, _HOSTFN, ctypes.c_void_p]
    key = next(_batch_ids)
    _batches[key] = (batch, leaves)
    rc = _cudart.cudaLaunchHostFunc(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), _host_fn,
                                    ctypes.c_void_p(key))
    if rc != 0:
        _batches.pop(key, None)
        torch.cuda.current_stream().synchronize()
        _run_batch(batch, leaves)


# --- The dispatch mode -------------------------------------------------------------------------------------------

_SHADOW, _VIEW, _MOVER, _READ, _DYNAMIC, _IGNORE = range(6)
_kinds = {}
_aten = torch.ops.aten
_MOVERS = {"copy_", "_to_copy", "_copy_from", "_copy_from_and_resize", "clone", "resize_", "set_"}
_VALUE_COPIES = {_aten.copy_.default, _aten._to_copy.default, _aten.clone.default, _aten._copy_from.default}
_READS = {"_local_scalar_dense"}
_SHAPE_ONLY_FIRST = {_aten.zero_.default, _aten.fill_.Scalar, _aten.fill_.Tensor, _aten.zeros_like.default,
                     _aten.ones_like.default, _aten.full_like.default}
# Ops whose result (its size, or a bool) the host gets from the device: evaluated at once, like a host read.
_EVALUATE_NOW = {"equal"}


def _has_cpu_kernel(func):
    try:
        return any(torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), k)
                   for k in ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd"))
    except RuntimeError:
        return False


def _classify(func):
    kind = _kinds.get(func)
    if kind is not None:
        return kind
    schema = func._schema
    ns = func.namespace
    name = func._opname if hasattr(func, "_opname") else schema.name.split("::")[-1]
    tags = func.tags
    if ns != "aten" and ns != "prims":
        kind = _MOVER if ns == "c10d" or ns == "_c10d_functional" else _IGNORE
    elif name in _READS:
        kind = _READ
    elif name.startswith(("empty", "new_empty")) or name in ("resize", "record_stream"):
        kind = _IGNORE  # no value to keep: what the memory holds is the value
    elif torch.Tag.dynamic_output_shape in tags or name in _EVALUATE_NOW:
        kind = _DYNAMIC
    elif name in _MOVERS:
        kind = _MOVER
    elif torch.Tag.nondeterministic_seeded in tags:
        kind = _IGNORE  # random values: a CPU draw would consume the CPU generator
    elif torch.Tag.inplace_view in tags or (
            schema.returns and all(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)):
        kind = _VIEW
    elif not _has_cpu_kernel(func):
        kind = _IGNORE
    else:
        kind = _SHADOW
    written = [(i if not a.kwarg_only else a.name) for i, a in enumerate(schema.arguments)
               if a.alias_info is not None and a.alias_info.is_write]
    fresh = [i for i, r in enumerate(schema.returns) if r.alias_info is None and "Tensor" in str(r.type)]
    _kinds[func] = (kind, written, fresh, len(schema.returns))
    return _kinds[func]


def _cuda_tensors(x, out):
    if isinstance(x, torch.Tensor):
        if x.is_cuda:
            out.append(x)
        return True
    if isinstance(x, (list, tuple)):
        for y in x:
            _cuda_tensors(y, out)
    return True


def _small(t):
    st = t.untyped_storage()
    n = st.nbytes()
    return 0 < n <= _MAX_ELEMENTS * t.element_size() and t.numel() <= _MAX_ELEMENTS


def _has_host_tensor(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, torch.Tensor) and not a.is_cuda and a.dim() > 0:
            return True
    return False


def _template(a):
    if isinstance(a, torch.Tensor):
        if a.is_cuda:
            return _In(_version_of(a.untyped_storage()), _geometry(a))
        return a.clone() if a.dim() == 0 else a
    if isinstance(a, (list, tuple)):
        return type(a)(_template(x) for x in a)
    return a


def _touches_pending(tensors):
    for t in tensors:
        key = id(t.untyped_storage())
        if key in _pending or key in _leaves:
            return True
    return False


def _touches_leaf(tensors):
    for t in tensors:
        if id(t.untyped_storage()) in _leaves:
            return True
    return False


def _cpu_value(t):
    """The value of a CUDA tensor as the program would see it: its thunk if it has one, else its real bytes."""
    with _lock:
        v = _version_of(t.untyped_storage())
        b = v.bytes()
        if isinstance(v, _Leaf):
            _leaves.pop(id(t.untyped_storage()), None)
        return _region(b, _geometry(t)).clone()


def _written(info, args, kwargs, out):
    """The tensors an op writes, each with its slot: fresh results ("ret", i, j) and written arguments ("arg", w, j),
    j indexing into a list."""
    _, written_args, fresh, nret = info
    writes = []
    for i in fresh:
        r = out[i] if nret > 1 else out
        if isinstance(r, torch.Tensor):
            writes.append((r, ("ret", i, None)))
        elif isinstance(r, (list, tuple)):
            writes += [(x, ("ret", i, j)) for j, x in enumerate(r) if isinstance(x, torch.Tensor)]
    for w in written_args:
        a = args[w] if isinstance(w, int) and w < len(args) else kwargs.get(w)
        if isinstance(a, torch.Tensor):
            writes.append((a, ("arg", w, None)))
        elif isinstance(a, (list, tuple)):
            writes += [(x, ("arg", w, j)) for j, x in enumerate(a) if isinstance(x, torch.Tensor)]
    return writes


def _set_pending(writes, call, counter):
    """Records each written CUDA tensor's new version (slot `slot` of `call`); flushes when too much is pending."""
    with _lock:
        deep = False
        for t, slot in writes:
            if not t.is_cuda:
                continue
            st = t.untyped_storage()
            whole = t.is_contiguous() and t.storage_offset() == 0 and t.numel() * t.element_size() == st.nbytes()
            prev = None if whole else _version_of(st)
            version = _Write(prev, call, slot, _geometry(t), st.nbytes())
            _pending[id(st)] = (weakref.ref(st), version)
            deep = deep or version.depth > _MAX_DEPTH
        _stats[counter] += 1
        too_many = deep or len(_pending) + len(_leaves) > _MAX_PENDING
    if too_many:
        _flush_at_stream_point()


def _record(func, info, args, kwargs, out):
    with _lock:
        try:
            call_args = _template(args)
            call_kwargs = {k: _template(v) for k, v in kwargs.items()}
        except RuntimeError:
            return  # a storage torch has invalidated (FSDP frees unsharded parameters by resizing them): no value
        writes = _written(info, args, kwargs, out)
        call = _Call(func, call_args, call_kwargs, [s for _, s in writes])
    _set_pending(writes, call, "shadowed")  # flushes outside the lock, as a host function on the stream takes it


def _zero_control_values(func, info, args, kwargs, out):
    """An op that is not shadowed: its control-value outputs (fresh results and written arguments of at most
    _CONTROL_ELEMENTS elements, whole storages) get a thunk of zeros; a selection's index result, evenly spread
    indices (_INDEX_RESULTS)."""
    _, written_args, _, nret = info
    if (not written_args and nret == 1 and type(out) is torch.Tensor and out.numel() > _CONTROL_ELEMENTS
            and func not in _INDEX_RESULTS):
        return  # the common case: one large result
    try:
        writes = [(t, slot) for t, slot in _written(info, args, kwargs, out)
                  if t.is_cuda and 0 < t.numel() <= _CONTROL_ELEMENTS
                  and 0 < t.untyped_storage().nbytes() <= _CONTROL_ELEMENTS * t.element_size()]
    except RuntimeError:
        return  # a storage torch has invalidated
    values = {}
    index = _INDEX_RESULTS.get(func)
    if index is not None and not torch.cuda.is_current_stream_capturing():
        r = out[index[0]] if isinstance(out, (tuple, list)) else out
        if (isinstance(r, torch.Tensor) and r.is_cuda and 0 < r.numel() <= _MAX_ELEMENTS and r.is_contiguous()
                and r.untyped_storage().nbytes() == r.numel() * r.element_size()):
            try:
                v = _even_indices(func, args, kwargs, list(r.shape)).to(r.dtype)
            except (RuntimeError, IndexError, TypeError):
                v = None
            if v is not None:
                slot = ("ret", index[0], None)
                writes = [(t, sl) for t, sl in writes if sl != slot] + [(r, slot)]
                values[slot] = v
    if not writes or torch.cuda.is_current_stream_capturing():
        return
    _set_pending(writes, _Zeros({slot: (t.dtype, tuple(t.size())) for t, slot in writes if slot not in values},
                                values), "zeroed")


def _to_device(value, like):
    """A CUDA tensor (on like's device) holding `value`, written by the host into the host-backed memory."""
    out = torch.empty(value.shape, dtype=value.dtype, device=like.device)
    v = value.contiguous()
    if v.numel():
        ctypes.memmove(out.data_ptr(), v.data_ptr(), v.numel() * v.element_size())
    return out


def _find_host_work():
    """libgenie_runtime.so's genie_host_work_begin/end, when the process has it (under genie run it is preloaded)."""
    try:
        lib = ctypes.CDLL(None)
        lib.genie_host_work_begin.restype = ctypes.c_int
        lib.genie_host_work_end.restype = ctypes.c_int
        return lib
    except (OSError, AttributeError):
        return None


_host_work = _find_host_work()


def _real(func, args, kwargs):
    """Runs the program's own op. Its CPU time is excluded with the mode's: called from the mode, torch's dispatch of
    the op costs several times what it costs without the mode (measured: gpt2-124m's predicted step 44.6 ms with
    that time counted, 30.0 ms excluded, 30.1 ms without the mode; docs/pytorch.md "Small values")."""
    return func(*args, **kwargs)


class SmallValueMode(TorchDispatchMode):
    """Keeps small CUDA tensors' values (module docstring). Entered once on the thread that imports torch."""

    @classmethod
    def ignore_compile_internals(cls):
        # torch.compile would otherwise skip every frame while a non-infra mode is on the stack (the program runs
        # eager, silently). With this, Dynamo/Inductor trace without the mode and the compiled artifact runs with
        # it: its extern ops (GEMMs, collectives, copies) are seen, its fused Triton kernels are not (they are
        # launched directly, like any large kernel).
        return True

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # The mode's work is the emulator's, not the program's: the virtual host clock leaves it out
        # (genie_host_work_begin/end), with the op it runs (see _real). Kernels and copies still charge their
        # modelled host costs.
        if _host_work is None:
            return self._dispatch(func, args, kwargs)
        _host_work.genie_host_work_begin()
        try:
            return self._dispatch(func, args, kwargs)
        finally:
            _host_work.genie_host_work_end()

    def _dispatch(self, func, args, kwargs):
        kwargs = kwargs or {}
        info = _kinds.get(func) or _classify(func)
        kind = info[0]
        if kind == _IGNORE or kind == _VIEW:
            return _real(func, args, kwargs)
        if kind == _SHADOW and args:
            # The fast path of most model ops: a first tensor argument that is large (or not on the GPU).
            a = args[0]
            if type(a) is list and a:
                a = a[0]
            if isinstance(a, torch.Tensor) and (a.numel() > _MAX_ELEMENTS or not a.is_cuda):
                out = _real(func, args, kwargs)
                if a.is_cuda:
                    _zero_control_values(func, info, args, kwargs, out)
                return out
        tensors = []
        _cuda_tensors(args, tensors)
        _cuda_tensors(list(kwargs.values()), tensors)
        if not tensors and (kind == _READ or kind == _DYNAMIC):
            return _real(func, args, kwargs)  # host tensors only
        if kind == _MOVER or (kind in (_READ, _DYNAMIC) and not all(_small(t) for t in tensors)):
            # A copy to the host that waits for its stream reads after the fact, like `.item()`.
            host_read = (func is _aten._to_copy.default and tensors and not kwargs.get("non_blocking", False)
                         and kwargs.get("device") is not None and torch.device(kwargs["device"]).type == "cpu")
            host_read = host_read or (func is _aten.copy_.default and not args[0].is_cuda and tensors
                                      and not (len(args) > 2 and args[2]) and not kwargs.get("non_blocking", False))
            if host_read and all(_small(t) for t in tensors):
                return self._host_read(func, args, kwargs, tensors)
            # A copy between small CUDA tensors is an op like any other (a cast is a kernel, a memcpy moves the
            # stale bytes of a thunk's input): recorded below, after a flush if it overwrites a leaf.
            to_host = (func is _aten._to_copy.default and kwargs.get("device") is not None
                       and torch.device(kwargs["device"]).type == "cpu")
            d2d = (kind == _MOVER and func in _VALUE_COPIES and tensors and all(_small(t) for t in tensors)
                   and not to_host and not _has_host_tensor(args, kwargs))
            if (_pending or _leaves) and tensors and (_touches_leaf(tensors) if d2d else _touches_pending(tensors)) \
                    and not torch.cuda.is_current_stream_capturing():
                _flush_at_stream_point()
            if not d2d:
                out = _real(func, args, kwargs)
                if kind == _MOVER:  # what it wrote is real bytes now
                    written = []
                    _cuda_tensors(out, written)
                    for w in info[1]:
                        _cuda_tensors(args[w] if isinstance(w, int) and w < len(args) else kwargs.get(w), written)
                    _mark_known(written)
                return out
        elif kind == _READ:
            return self._host_read(func, args, kwargs, tensors)
        elif kind == _DYNAMIC:
            return self._evaluate_now(func, args, kwargs, tensors)
        out = _real(func, args, kwargs)
        if kind == _VIEW:
            return out
        outs = []
        _cuda_tensors(out, outs)
        if not outs and not info[1]:
            return out
        if not (tensors or outs) or torch.cuda.is_current_stream_capturing():
            return out
        if not all(_small(t) for t in tensors) or not all(_small(t) for t in outs) or _has_host_tensor(args, kwargs):
            _zero_control_values(func, info, args, kwargs, out)
            return out
        # Inputs a kernel wrote (no value): not shadowed. fill_/zero_/*_like use only their first argument's shape.
        first = 1 if func in _SHAPE_ONLY_FIRST else 0
        ins = []
        _cuda_tensors(args[first:], ins)
        _cuda_tensors(list(kwargs.values()), ins)
        if not all(_is_known(t.untyped_storage()) for t in ins):
            _zero_control_values(func, info, args, kwargs, out)
            return out
        _record(func, info, args, kwargs, out)
        return out

    def _host_read(self, func, args, kwargs, tensors):
        out = _real(func, args, kwargs)  # synchronises: every leaf is final from here on
        src = [t for t in tensors if (id(t.untyped_storage()) in _pending)]
        if not src:
            return out
        _stats["host_reads"] += 1
        if func is _aten._local_scalar_dense.default:
            value = _cpu_value(args[0]).item()
        elif func is _aten._to_copy.default:
            value = func(_cpu_value(args[0]), **kwargs)
        elif func is _aten.copy_.default:
            args[0].copy_(_cpu_value(args[1]))
            value = args[0]
        else:
            value = func(*[_cpu_value(a) if isinstance(a, torch.Tensor) and a.is_cuda else a for a in args],
                         **kwargs)
        for t in src:
            _materialise_storage(t.untyped_storage())
        return value

    def _evaluate_now(self, func, args, kwargs, tensors):
        """nonzero, boolean masks, unique, equal: the real op synchronises (its result's size or value goes to the
        host), then the CPU computes the result from the inputs' values and the host writes it."""
        if not all(_is_known(t.untyped_storage()) for t in tensors):
            # An input no copy or collective wrote holds no value to compute with. Where only the selected values
            # are unknown and the mask or indices that decide the result's size are known, the size still is --
            # and the real op must not run: it sizes its result by a count its kernel "wrote" to device memory,
            # which holds whatever was there (a reused block: any number, up to "numel: integer multiplication
            # overflow" in Megatron MoE's permute, or an allocation of terabytes).
            shape = _shape_from_known_mask(func, args, kwargs)
            if shape is None:
                return _real(func, args, kwargs)
            _count_and_read_back(args, kwargs)
            return torch.empty(shape, dtype=args[0].dtype, device=args[0].device)
        out = _real(func, args, kwargs)
        if func is _aten.index.Tensor and not any(
                i is not None and i.dtype in (torch.bool, torch.uint8) for i in args[1]):
            # Integer indices: a static shape, no synchronisation; record it like any other op.
            outs = []
            _cuda_tensors(out, outs)
            if all(_small(t) for t in outs) and not torch.cuda.is_current_stream_capturing():
                _record(func, _classify(func), args, kwargs, out)
            return out
        if torch.cuda.is_current_stream_capturing():
            return out
        conv = lambda a: _cpu_value(a) if isinstance(a, torch.Tensor) and a.is_cuda else (  # noqa: E731
            [conv(x) for x in a] if isinstance(a, list) else a)
        cpu_kwargs = {k: conv(v) for k, v in kwargs.items()}
        if "device" in cpu_kwargs:
            cpu_kwargs["device"] = torch.device("cpu")
        try:
            value = func(*[conv(a) for a in args], **cpu_kwargs)
        except Exception as e:  # noqa: BLE001
            _stats["eval_errors"] += 1
            _warn(f"cannot evaluate {func} on the CPU ({type(e).__name__}: {e})")
            return out
        _stats["host_reads"] += 1
        like = tensors[0] if tensors else None
        if isinstance(value, torch.Tensor):
            return _to_device(value, like)
        if isinstance(value, (tuple, list)):
            return type(value)(_to_device(v, like) if isinstance(v, torch.Tensor) else v for v in value)
        return value


# Ops whose first argument gives only the values of the result, and the others (a mask, indices) its size:
# Megatron MoE's permute selects the router's probabilities (computed by kernels: unknown) with its routing map
# (small, known). Their real kernels count the mask's true elements in device memory no kernel wrote.
_VALUES_FROM_FIRST = (_aten.masked_select.default, _aten.index.Tensor)


def _shape_from_known_mask(func, args, kwargs):
    """The shape of `func`'s result from its known mask or indices (its values unknown), or None."""
    if func not in _VALUES_FROM_FIRST or not args or torch.cuda.is_current_stream_capturing():
        return None
    first = args[0]
    if not isinstance(first, torch.Tensor):
        return None
    rest = []
    _cuda_tensors(list(args[1:]), rest)
    _cuda_tensors(list(kwargs.values()), rest)
    if not rest or not all(_is_known(t.untyped_storage()) for t in rest):
        return None
    conv = lambda a: _cpu_value(a) if isinstance(a, torch.Tensor) and a.is_cuda else (  # noqa: E731
        [conv(x) for x in a] if isinstance(a, list) else a)
    try:
        shape = func(torch.zeros(first.shape, dtype=first.dtype), *[conv(a) for a in args[1:]],
                     **{k: conv(v) for k, v in kwargs.items()}).shape
    except Exception as e:  # noqa: BLE001
        _stats["eval_errors"] += 1
        _warn(f"cannot size {func} on the CPU ({type(e).__name__}: {e})")
        return None
    _stats["sized"] += 1
    return tuple(shape)


def _count_and_read_back(args, kwargs):
    """What the real masked_select / boolean index does before it can size its result, on the device: a count of the
    mask's true elements (a reduction kernel) read back by the host (a copy and a stream synchronisation). The value
    read is not used."""
    masks = []
    _cuda_tensors(list(args[1:]), masks)
    _cuda_tensors(list(kwargs.values()), masks)
    mask = next((m for m in masks if m.dtype in (torch.bool, torch.uint8)), masks[0] if masks else None)
    if mask is None:
        return
    count = _real(_aten.count_nonzero.default, (mask,), {})
    _real(_aten._local_scalar_dense.default, (count,), {})


_mode = None


def install():
    """Enters the mode on this thread (once). Called by sitecustomize when torch has been imported."""
    global _mode
    if _mode is not None or not _ENABLED or _MAX_ELEMENTS <= 0:
        return
    _mode = SmallValueMode()
    _mode.__enter__()


def installed():
    return _mode is not None
