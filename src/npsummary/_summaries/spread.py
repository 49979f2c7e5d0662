"""Histograms of data spread over processes: a ``DTensor``'s shards, or each rank's own values
under ``process_group=``, bucketed where they are and merged by two ``all_reduce`` calls.

Every rank of the group runs the same protocol (the plans of :mod:`npsummary._histogram.merge`):

1. each rank scans its part (for fixed edges it also counts it), then one ``MAX`` all_reduce of
   ``4 + 5 * world_size`` float64 numbers: a checksum of the tag and of the bucketing (with the
   dtype the values are read as), each with its negation, so that every rank sees whether any
   rank disagrees, and in rank ``r``'s slot its count, min, max and first zero-class value;
2. each rank counts its part in the edges the merged extremes give, then one ``SUM`` all_reduce
   of the counts, the two sums and the three non-finite counts.

Every rank gets the merged histogram; only the ranks whose writer writes (by default rank 0) write
it. A rank that calls a different histogram (another tag, other bins, values of another dtype)
at the same point makes every rank raise the same ``ValueError`` after the first call. A rank
that skips the call entirely leaves the others waiting in the first ``all_reduce`` until the
process group's timeout (``timeout=`` of ``init_process_group``, 30 minutes by default), which
then raises in torch.distributed: a hang, never wrong data.

A ``DTensor``'s ``Shard`` placements are placed in the whole tensor by their global offsets, so
ties are decided as in ``full_tensor()``; ``Replicate`` mesh dimensions count once (only the
coordinate-0 replica contributes); ``Partial`` placements (pending sums) are refused. torch is
imported here only, when a DTensor or a process group is handed in.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._common.convert import as_array, is_dtensor, tagged

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._histogram.merge import Part, Plan, Tally

__all__ = ["Spread", "spread_values"]

_HEADER = 4
_SLOT = 5  # n, min, max, zero_order, first_zero


@dataclass(eq=False)
class Spread:
    """This rank's part of spread data, where it sits in the whole, and the group to merge in."""

    local: Any  # a NumPy array, or a tensor on its device
    order: Callable[[int], float]
    group: Any
    rank: int
    size: int
    device: Any

    def histogram(self, tag: str, plan: Plan) -> Any:
        """The merged result of ``plan`` over every rank's part (a collective call); a part on
        an accelerator is bucketed there (:mod:`npsummary._histogram.device`)."""
        from .._histogram._source import Source
        from .._histogram.device import DeviceArray, device_library, library_context

        library = None if isinstance(self.local, np.ndarray) else device_library(self.local)
        if library is not None:
            with library_context(library):
                part = tagged(tag, DeviceArray, library, self.local, self.order)
                whole = self._merge_parts(tag, plan, part.work, part.part())
                tally = self._merge_tallies(part.tally(plan, whole))
                return plan.finish(whole, tally, part.work)
        src = tagged(tag, Source, as_array(self.local, tag))
        scan = tagged(tag, plan.scan, src, self.order)
        whole = self._merge_parts(tag, plan, src.work, scan.part)
        tally = self._merge_tallies(plan.tally(scan, whole))
        return plan.finish(whole, tally, src.work)

    def _all_reduce(self, vector: np.ndarray, op: str) -> np.ndarray:
        torch = _torch("torch")
        dist = _torch("torch.distributed")
        # A copy in torch's own memory, not torch.from_numpy: gloo's worker thread may drop the
        # last reference to the tensor at interpreter exit, and freeing NumPy-backed storage
        # takes the GIL there, which aborts the process (std::terminate in take_gil).
        tensor = torch.tensor(vector, dtype=torch.float64, device=self.device)
        dist.all_reduce(tensor, op=getattr(dist.ReduceOp, op), group=self.group)
        return np.array(tensor.cpu().numpy(), np.float64)

    def _merge_parts(self, tag: str, plan: Plan, work: np.dtype, part: Part) -> Part:
        from .._histogram.merge import Part, merge_parts

        vector = np.full(_HEADER + _SLOT * self.size, -math.inf)
        names = zlib.crc32(tag.encode("utf-8"))
        kinds = zlib.crc32(f"{plan.signature}|{work}".encode())
        vector[:_HEADER] = names, -names, kinds, -kinds
        at = _HEADER + _SLOT * self.rank
        vector[at : at + _SLOT] = part.n, part.mn, part.mx, part.zero_order, part.first_zero
        vector = self._all_reduce(vector, "MAX")
        if vector[0] != -vector[1] or vector[2] != -vector[3]:
            what = "tag" if vector[0] != -vector[1] else "bins, bucket count or dtype"
            raise ValueError(
                f"{tag!r}: the ranks of the process group called histograms with another "
                f"{what} at this point; every rank must make the same histogram calls in the "
                "same order (a rank skipped one, or called another)"
            )
        slots = vector[_HEADER:].reshape(self.size, _SLOT)
        return merge_parts(
            [Part(int(n), float(mn), float(mx), float(zo), float(z)) for n, mn, mx, zo, z in slots]
        )

    def _merge_tallies(self, tally: Tally) -> Tally:
        from .._histogram._results import NonFinite
        from .._histogram.merge import Tally

        nf = tally.nonfinite
        tail = [tally.sum, tally.sum_squares, nf.nan, nf.posinf, nf.neginf]
        vector = np.concatenate([tally.counts.astype(np.float64), np.array(tail, np.float64)])
        vector = self._all_reduce(vector, "SUM")
        s, q, nan, posinf, neginf = vector[-5:]
        return Tally(
            counts=vector[:-5].astype(np.int64),
            sum=float(s),
            sum_squares=float(q),
            nonfinite=NonFinite(int(nan), int(posinf), int(neginf)),
        )


def _torch(name: str) -> Any:
    """A torch module (only reached with a DTensor or a process group, so torch is there)."""
    import importlib

    return importlib.import_module(name)


def _group_rank(dist: Any, group: Any) -> tuple[int, int]:
    return int(dist.get_rank(group)), int(dist.get_world_size(group))


def _device(dist: Any, group: Any, tensor_device: Any) -> Any:
    """Where the reduced vectors live: the CPU for gloo, else the values' (or the current
    CUDA) device, as NCCL needs."""
    torch = _torch("torch")
    backend = str(dist.get_backend(group)).lower()
    if "gloo" in backend or backend == "mpi":
        return torch.device("cpu")
    if tensor_device is not None and torch.device(tensor_device).type != "cpu":
        return tensor_device
    return torch.device("cuda", torch.cuda.current_device())


def _mesh_group(dist: Any, mesh: Any) -> Any:
    """One process group of every rank of ``mesh``."""
    if mesh.ndim == 1:
        return mesh.get_group()
    if mesh.size() == dist.get_world_size():
        return dist.group.WORLD
    return mesh._flatten().get_group()


def _dtensor_part(tag: str, value: Any) -> Spread:
    dist = _torch("torch.distributed")
    mesh = value.device_mesh
    placements = tuple(value.placements)
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        raise ValueError(f"{tag!r}: this rank is not in the DTensor's device mesh")
    if any(p.is_partial() for p in placements):
        raise ValueError(
            f"{tag!r}: a DTensor with a Partial placement holds pending sums, not values; "
            "redistribute it to Shard or Replicate placements first"
        )
    group = _mesh_group(dist, mesh)
    rank, size = _group_rank(dist, group)
    local = local_tensor = value.to_local()
    replica = any(p.is_replicate() and coordinate[d] != 0 for d, p in enumerate(placements))
    if replica:
        local = local.reshape(-1)[:0]  # a copy counted by the coordinate-0 replica
    order: Callable[[int], float] = _RankOrder(rank)  # strided shards, 0-d: rank order
    if all(p.is_shard() or p.is_replicate() for p in placements) and local.ndim:
        shape, offset = _shard_box(tuple(value.shape), mesh, placements, coordinate)
        if shape == tuple(local_tensor.shape):
            order = _GlobalOrder(shape, offset, tuple(value.shape))
    return Spread(local, order, group, rank, size, _device(dist, group, local_tensor.device))


def _shard_box(
    whole: tuple[int, ...], mesh: Any, placements: tuple[Any, ...], coordinate: Any
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """This rank's block of the whole tensor: its shape and offset, by torch's chunking rule
    (``ceil(n / k)`` per chunk, the last ones shorter or empty), mesh dimension by mesh
    dimension. (torch's ``compute_local_shape_and_global_offset`` allocates twice the shard
    here; the caller checks the shape against the local tensor.)"""
    shape, offset = list(whole), [0] * len(whole)
    for mesh_dim, placement in enumerate(placements):
        if not placement.is_shard():
            continue
        d, k, r = placement.dim, mesh.size(mesh_dim), coordinate[mesh_dim]
        full = shape[d]
        chunk = -(-full // k)
        start = min(r * chunk, full)
        shape[d] = max(0, min(full, start + chunk) - start)
        offset[d] += start
    return tuple(shape), tuple(offset)


@dataclass(frozen=True)
class _GlobalOrder:
    """The flat index in the whole tensor of a shard's ``i``-th value (C order)."""

    shape: tuple[int, ...]
    offset: tuple[int, ...]
    whole: tuple[int, ...]

    def __call__(self, i: int) -> float:
        local = np.unravel_index(i, self.shape)
        index = tuple(int(a) + int(b) for a, b in zip(local, self.offset, strict=True))
        return float(np.ravel_multi_index(index, self.whole))


@dataclass(frozen=True)
class _RankOrder:
    """Parts in rank order: the union of every rank's values, rank 0's first."""

    rank: int

    def __call__(self, i: int) -> float:
        return float(self.rank)


def spread_values(tag: str, values: Any, process_group: Any) -> Spread | None:
    """This rank's part of ``values`` when they are spread over processes (a DTensor, or any
    array with a ``process_group``), else None (the caller bucketes them here)."""
    if process_group is None:
        if not is_dtensor(values):
            return None
        return _dtensor_part(tag, values)
    dist = _torch("torch.distributed")
    if is_dtensor(values):
        raise ValueError(
            f"{tag!r}: a DTensor is merged over its own device mesh; pass it without "
            "process_group (or pass .to_local() with process_group for per-rank data)"
        )
    if not dist.is_initialized():
        raise ValueError(f"{tag!r}: process_group given but torch.distributed is not initialized")
    rank, size = _group_rank(dist, process_group)
    if rank < 0:
        raise ValueError(f"{tag!r}: this rank is not a member of process_group")
    device = getattr(values, "device", None)
    local = values if type(values).__module__.startswith("torch") else as_array(values, tag)
    return Spread(
        local, _RankOrder(rank), process_group, rank, size, _device(dist, process_group, device)
    )
