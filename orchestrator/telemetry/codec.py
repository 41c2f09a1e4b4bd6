"""The blob codecs of the telemetry tables: per-call expert counts and rollup arrays.

**Expert counts** (``model_calls.expert_counts``): activations per (MoE layer, routed expert),
a C-order little-endian array of shape ``(L, E)`` (``L = len(moe_layers)``, ``E =
num_experts``); each row sums to ``routed_tokens * top_k``. Each count is stored in the
smallest of uint8, uint16 or int32 that holds the call's largest count (a count never exceeds
``routed_tokens``); the width follows from the blob's length, and rows written before this rule
are int32, which reads the same way. Every decoder returns int32.

**Rollup arrays** (``expert_rollups``): int64 (``<i8``) or float64 (``<f8``) little-endian.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from orchestrator.exceptions import TelemetryError, UserError

#: Bytes per stored count -> numpy dtype of the expert-counts blob.
COUNT_DTYPES: dict[int, str] = {1: "<u1", 2: "<u2", 4: "<i4"}


class HasExpertCounts(Protocol):
    """What :func:`decode_counts` reads: a ``model_calls`` row (ORM record or Core row)."""

    @property
    def expert_counts(self) -> bytes | None: ...

    @property
    def moe_layers(self) -> Sequence[int]: ...

    @property
    def num_experts(self) -> int: ...


def encode_counts(counts: np.ndarray) -> bytes:
    """Pack a ``(layers, experts)`` count array into the smallest of uint8, uint16 or int32.

    Raises:
        UserError: A count is negative or does not fit in int32.
    """
    top = int(counts.max()) if counts.size else 0
    if counts.size and int(counts.min()) < 0:
        raise UserError("expert counts cannot be negative")
    if top < 2**8:
        dtype = "<u1"
    elif top < 2**16:
        dtype = "<u2"
    elif top < 2**31:
        dtype = "<i4"
    else:
        raise UserError(f"expert count {top} does not fit in int32")
    return np.ascontiguousarray(counts).astype(dtype).tobytes()


def decode_counts_blob(blob: bytes, layers: int, experts: int) -> np.ndarray:
    """Unpack an ``expert_counts`` blob into ``(layers, experts)`` int32.

    The count width (1, 2 or 4 bytes) follows from ``len(blob) / (layers * experts)``.

    Raises:
        TelemetryError: The blob's length fits no width.
    """
    cells = layers * experts
    width = len(blob) // cells if cells else 4
    if (
        layers < 0
        or experts < 0
        or ((width not in COUNT_DTYPES or width * cells != len(blob)) if cells else blob)
    ):
        raise TelemetryError(
            f"expert_counts blob of {len(blob)} bytes does not hold {layers}x{experts} counts"
        )
    return np.frombuffer(blob, dtype=COUNT_DTYPES[width]).astype(np.int32).reshape(layers, experts)


def decode_counts(record: HasExpertCounts) -> np.ndarray | None:
    """``record.expert_counts`` as ``(len(moe_layers), num_experts)`` int32, or None.

    Raises:
        TelemetryError: The blob's length fits no width.
    """
    if record.expert_counts is None:
        return None
    return decode_counts_blob(
        bytes(record.expert_counts), len(record.moe_layers), record.num_experts
    )


def stack_counts(blobs: Sequence[bytes], layers: int, experts: int) -> np.ndarray:
    """Decode many ``expert_counts`` blobs of one shape into ``(n, layers, experts)`` int32.

    Blobs of one width are joined and decoded with one ``np.frombuffer`` call.

    Raises:
        TelemetryError: A blob's length fits no width.
    """
    if layers < 0 or experts < 0:
        raise TelemetryError(f"no expert_counts blob holds {layers}x{experts} counts")
    out = np.empty((len(blobs), layers, experts), dtype=np.int32)
    cells = layers * experts
    widths = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    for width, dtype in COUNT_DTYPES.items():
        rows = np.flatnonzero(widths == width * cells)
        if rows.size:
            joined = b"".join(blobs[i] for i in rows)
            out[rows] = np.frombuffer(joined, dtype=dtype).reshape(rows.size, layers, experts)
    bad = ~np.isin(widths, [w * cells for w in COUNT_DTYPES])
    if bad.any():
        raise TelemetryError(
            f"expert_counts blob of {int(widths[bad][0])} bytes does not hold "
            f"{layers}x{experts} counts"
        )
    return out


def _decode_array(blob: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """``blob`` as a read-only array of ``dtype`` and ``shape``.

    Raises:
        TelemetryError: The blob's length is not that of ``shape`` (a damaged row).
    """
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if any(n < 0 for n in shape) or len(blob) != size * 8:
        raise TelemetryError(
            f"rollup blob of {len(blob)} bytes does not hold a {dtype} array of shape {shape} "
            f"({size * 8} bytes); rebuild the rollups (TelemetryStore.rebuild_rollups)"
        )
    return np.frombuffer(blob, dtype=dtype).reshape(shape)


def decode_int64(blob: bytes, shape: tuple[int, ...]) -> np.ndarray:
    """A ``<i8`` rollup blob as a read-only int64 array of ``shape``.

    Raises:
        TelemetryError: The blob's length does not match ``shape``.
    """
    return _decode_array(blob, "<i8", shape)


def decode_float64(blob: bytes, shape: tuple[int, ...]) -> np.ndarray:
    """A ``<f8`` rollup blob as a read-only float64 array of ``shape``.

    Raises:
        TelemetryError: The blob's length does not match ``shape``.
    """
    return _decode_array(blob, "<f8", shape)


def encode_int64(values: np.ndarray) -> bytes:
    """An array as a ``<i8`` C-order blob."""
    return np.ascontiguousarray(values, dtype="<i8").tobytes()


def encode_float64(values: np.ndarray) -> bytes:
    """An array as a ``<f8`` C-order blob."""
    return np.ascontiguousarray(values, dtype="<f8").tobytes()


def decode_layer_confidence(blob: bytes | None, layers: int) -> np.ndarray | None:
    """A ``layer_confidence`` blob as float32 ``(layers,)``, or None when absent or mis-sized."""
    if blob is None or len(blob) != 4 * layers:
        return None
    return np.frombuffer(blob, dtype="<f4")
