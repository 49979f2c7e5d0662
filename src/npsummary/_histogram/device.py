"""Histograms of arrays on an accelerator, bucketed there with their own library's operations.

A torch tensor on a device other than the CPU, a CuPy array, or a JAX array on an accelerator
(or sharded over several devices, shard by shard) is never copied to the host: its values are
bucketed on the device by the same arithmetic as the NumPy cores (TF1's per-cell lookup of
``base + (x >= threshold)``, TF2's ``floor((x - min) / width)`` in float64, ``searchsorted`` over
edges), and only the bucket counts and the statistics (count, min, max, the two sums, the
non-finite counts) come back, as a :class:`.merge.Part` and :class:`.merge.Tally` of the
:mod:`.merge` protocol. Counts, min, max and num are those of the NumPy core bit for bit; the
sums are the library's float64 sums (within about 1e-15 of the magnitudes).

The library is imported only when such an array is handed in (:func:`device_library` asks the
array's class for its module). :data:`FORCE` sends CPU tensors and single-device JAX arrays this
way too, which is how the tests check it without a GPU.
"""

from __future__ import annotations

import contextlib
import importlib
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .._common.convert import dtype_error
from ._results import N_TF1, IntArray, NonFinite
from ._source import work_dtype
from .merge import Part, Plan, Tally, _TbxPlan, _Tf1Plan, _Tf2Plan, merge_parts, merge_tallies
from .tf1 import _tf1_table32, _tf1_table64
from .tf2 import _scale

__all__ = [
    "FORCE",
    "DeviceArray",
    "device_histogram",
    "device_library",
    "device_parts",
    "histogram_on_device",
    "library_context",
]

#: Bucket CPU torch tensors and single-device JAX arrays on their device too (tests).
FORCE = False


def device_library(values: Any) -> str | None:
    """``"torch"``, ``"jax"`` or ``"cupy"`` when ``values`` is bucketed on its device, else None
    (NumPy on the host)."""
    module = type(values).__module__ or ""
    root = module.partition(".")[0]
    if root == "torch":
        kind = getattr(getattr(values, "device", None), "type", None)
        if kind is None:
            return None
        return "torch" if FORCE or kind not in ("cpu", "meta") else None
    if root in ("jax", "jaxlib"):
        devices = getattr(values, "devices", None)
        if devices is None:
            return None
        found = devices()
        if FORCE or len(found) > 1 or any(d.platform != "cpu" for d in found):
            return "jax"
        return None
    if root == "cupy":
        return "cupy"
    return None


class _Torch:
    def __init__(self) -> None:
        self.t = importlib.import_module("torch")

    def work(self, x: Any) -> tuple[Any, np.dtype]:
        t = self.t
        x = x.detach().reshape(-1)
        if x.dtype == t.float64 or (not x.dtype.is_floating_point and x.dtype.itemsize > 2):
            return x.to(t.float64), np.dtype(np.float64)
        if x.dtype.is_complex:
            raise dtype_error(x.dtype, "values")
        return x.to(t.float32), np.dtype(np.float32)

    def to64(self, x: Any) -> Any:
        return x.to(self.t.float64)

    def bits(self, x: Any) -> Any:
        return x.view(self.t.int32 if x.dtype == self.t.float32 else self.t.int64)

    def table(self, a: np.ndarray, like: Any) -> Any:
        return self.t.from_numpy(np.ascontiguousarray(a)).to(like.device)

    def bincount(self, idx: Any, n: int) -> IntArray:
        return np.asarray(self.t.bincount(idx, minlength=n).cpu().numpy(), np.int64)

    def searchsorted(self, edges: Any, x: Any) -> Any:
        return self.t.searchsorted(edges, x, right=True)

    def argmax(self, mask: Any) -> int:
        return int(self.t.argmax(mask.to(self.t.uint8)).item())

    def count(self, mask: Any) -> int:
        return int(mask.sum().item())

    def item(self, x: Any) -> float:
        return float(x.item())

    def clamp_max(self, x: Any, top: int) -> Any:
        return self.t.clamp(x, max=top)

    def int64(self, x: Any) -> Any:
        return x.to(self.t.int64)


class _Jax:
    def __init__(self) -> None:
        self.jax = importlib.import_module("jax")
        self.jnp = importlib.import_module("jax.numpy")

    def work(self, x: Any) -> tuple[Any, np.dtype]:
        jnp = self.jnp
        x = jnp.ravel(x)
        work = work_dtype(np.dtype(x.dtype))
        return x.astype(work), work

    def to64(self, x: Any) -> Any:
        return x.astype(self.jnp.float64)

    def bits(self, x: Any) -> Any:
        jnp = self.jnp
        target = jnp.int32 if x.dtype == jnp.float32 else jnp.int64
        return self.jax.lax.bitcast_convert_type(x, target)

    def table(self, a: np.ndarray, like: Any) -> Any:
        return self.jax.device_put(a, next(iter(like.devices())))

    def bincount(self, idx: Any, n: int) -> IntArray:
        return np.array(self.jnp.bincount(idx, length=n), np.int64)

    def searchsorted(self, edges: Any, x: Any) -> Any:
        return self.jnp.searchsorted(edges, x, side="right")

    def argmax(self, mask: Any) -> int:
        return int(self.jnp.argmax(mask))

    def count(self, mask: Any) -> int:
        return int(mask.sum())

    def item(self, x: Any) -> float:
        return float(x)

    def clamp_max(self, x: Any, top: int) -> Any:
        return self.jnp.minimum(x, top)

    def int64(self, x: Any) -> Any:
        return x.astype(self.jnp.int64)


class _Cupy(_Jax):
    def __init__(self) -> None:
        self.cp = self.jnp = importlib.import_module("cupy")

    def work(self, x: Any) -> tuple[Any, np.dtype]:
        cp = self.cp
        x = cp.ravel(x)
        work = work_dtype(np.dtype(x.dtype))
        return x.astype(work), work

    def bits(self, x: Any) -> Any:
        return x.view(self.cp.int32 if x.dtype == self.cp.float32 else self.cp.int64)

    def table(self, a: np.ndarray, like: Any) -> Any:
        return self.cp.asarray(a)

    def bincount(self, idx: Any, n: int) -> IntArray:
        return np.array(self.cp.asnumpy(self.cp.bincount(idx, minlength=n)), np.int64)


_OPS: dict[str, Callable[[], Any]] = {"torch": _Torch, "jax": _Jax, "cupy": _Cupy}


class DeviceArray:
    """One array (or shard) on its device, in the work dtype, with its finite values."""

    def __init__(self, library: str, values: Any, order: Callable[[int], float] = float) -> None:
        self.ops = ops = _OPS[library]()
        self.x, self.work = ops.work(values)
        finite_mask = self._isfinite(self.x)
        self.finite = self.x[finite_mask]
        self.n = int(self.finite.shape[0])
        self.nonfinite = self._nonfinite(finite_mask)
        self.order = order

    def _isfinite(self, x: Any) -> Any:
        return (x == x) & (abs(x) != math.inf)

    def _nonfinite(self, finite_mask: Any) -> NonFinite:
        ops, x = self.ops, self.x
        if ops.count(~finite_mask) == 0:
            return NonFinite()
        return NonFinite(ops.count(x != x), ops.count(x == math.inf), ops.count(x == -math.inf))

    def part(self) -> Part:
        if self.n == 0:
            return Part(0, math.inf, -math.inf)
        ops = self.ops
        mn, mx = ops.item(self.finite.min()), ops.item(self.finite.max())
        tiny = float(np.finfo(self.work).tiny)
        if abs(mn) >= tiny and abs(mx) >= tiny:
            return Part(self.n, mn, mx)
        i = ops.argmax(abs(self.x) < tiny)
        v = ops.item(self.x[i])
        z = v if self.work == np.float64 else math.copysign(0.0, v)
        return Part(self.n, mn, mx, self.order(i), z)

    def tally(self, plan: Plan, whole: Part) -> Tally:
        counts = _counts(self, plan, whole) if whole.n else np.zeros(0, np.int64)
        s = q = 0.0
        if self.n:
            x64 = self.ops.to64(self.finite)
            s, q = self.ops.item(x64.sum()), self.ops.item((x64 * x64).sum())
        return Tally(counts, s, q, self.nonfinite)


def _tf1_counts(d: DeviceArray) -> IntArray:
    ops = d.ops
    f32 = d.work == np.float32
    table = _tf1_table32() if f32 else _tf1_table64()
    if d.n == 0:
        return np.zeros(N_TF1, np.int64)
    cells = (ops.bits(d.finite) >> table.shift) & ((1 << (32 if f32 else 64) - table.shift) - 1)
    thr = ops.table(table.thr, d.finite)[cells]
    base = ops.table(table.base, d.finite)[cells]
    bucket = base + ops.int64(d.finite >= thr)
    acc: IntArray = ops.bincount(bucket, N_TF1 + 1)
    acc[N_TF1 - 1] += acc[N_TF1]  # x == DBL_MAX, as the NumPy core clamps it
    return acc[:N_TF1]


def _edge_counts(d: DeviceArray, edges: np.ndarray) -> IntArray:
    nb = edges.size - 1
    if d.n == 0:
        return np.zeros(nb, np.int64)
    ops = d.ops
    x = ops.to64(d.finite)
    e = ops.table(np.asarray(edges, np.float64), x)
    i = ops.searchsorted(e, x) - 1
    keep = (i >= 0) & (x <= float(edges[-1]))
    counts: IntArray = ops.bincount(ops.clamp_max(i[keep], nb - 1), nb)
    return counts


def _tf2_counts(d: DeviceArray, k: int, whole: Part) -> IntArray:
    if d.n == 0:
        return np.zeros(k, np.int64)
    ops = d.ops
    mn, mx = np.float64(whole.mn), np.float64(whole.mx)
    width, scale = _scale(mn, mx, k)
    x = ops.to64(d.finite)
    if scale != 1.0:
        smn = float(mn) * scale
        width = (float(mx) * scale - smn) / k
        b = (x * scale - smn) / width
    else:
        b = (x - float(mn)) / width
    counts: IntArray = ops.bincount(ops.clamp_max(ops.int64(b), k - 1), k)  # b >= 0: trunc = floor
    return counts


def _counts(d: DeviceArray, plan: Plan, whole: Part) -> IntArray:
    if isinstance(plan, _Tf1Plan):
        return _tf1_counts(d)
    if isinstance(plan, _Tf2Plan):
        if plan.k == 0 or whole.mn == whole.mx:
            return np.zeros(0, np.int64)
        return _tf2_counts(d, plan.k, whole)
    if isinstance(plan, _TbxPlan):
        from .tbx import _default_edge_array

        spec = plan.spec
        if isinstance(spec, str) and spec == "tensorflow":
            if plan._default_closed(whole):
                return _edge_counts(d, _default_edge_array())
            return _tf1_counts(d)
        if isinstance(spec, np.ndarray):
            return _edge_counts(d, spec)
        limits, _ = plan._equal_edges(whole, d.work)
        return _edge_counts(d, limits)
    raise TypeError(f"no device counting for {type(plan).__name__}")


def device_parts(library: str, values: Any) -> list[DeviceArray]:
    """The parts of a device array in the whole's order: one, or a sharded JAX array's shards
    (replicas counted once), each placed by its index in the whole array."""
    if library != "jax" or len(values.devices()) == 1:
        return [DeviceArray(library, values)]
    shape = tuple(values.shape)
    parts = []
    for shard in values.addressable_shards:
        if shard.replica_id != 0:
            continue
        offset = tuple(s.indices(n)[0] for s, n in zip(shard.index, shape, strict=True))
        local = tuple(shard.data.shape)
        parts.append(DeviceArray(library, shard.data, _ShardOrder(local, offset, shape)))
    return parts


class _ShardOrder:
    """The flat index in the whole array of a shard's ``i``-th value (C order)."""

    def __init__(self, local: tuple[int, ...], offset: tuple[int, ...], whole: tuple[int, ...]):
        self.local, self.offset, self.whole = local, offset, whole

    def __call__(self, i: int) -> float:
        index = np.unravel_index(i, self.local)
        at = tuple(int(a) + int(b) for a, b in zip(index, self.offset, strict=True))
        return float(np.ravel_multi_index(at, self.whole)) if at else 0.0


def device_histogram(plan: Plan, parts: Sequence[DeviceArray]) -> object:
    """The merged result of ``plan`` over device parts held by this process."""
    works = {p.work for p in parts}
    if len(works) > 1:
        raise ValueError(f"parts read as different dtypes: {sorted(map(str, works))}")
    whole = merge_parts([p.part() for p in parts])
    tally = merge_tallies([p.tally(plan, whole) for p in parts])
    return plan.finish(whole, tally, parts[0].work)


@contextlib.contextmanager
def library_context(library: str) -> Iterator[None]:
    """JAX computes in float64 only with x64 enabled: enabled for the histogram's operations."""
    if library != "jax":
        yield
        return
    jax = importlib.import_module("jax")
    with jax.enable_x64(True):
        yield


def histogram_on_device(library: str, values: Any, plan: Plan) -> object:
    """``plan``'s result for ``values`` bucketed on its device(s) (see the module docstring)."""
    with library_context(library):
        return device_histogram(plan, device_parts(library, values))
