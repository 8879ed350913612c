r"""Array libraries for the Lanczos-based experiments: which namespace, dtype, device and
random stream a task samples with.

The default is numpy in float64 through the original code path of
:mod:`numerics.experiments` (bit-identical numbers, unchanged store keys). A task whose
parameters name another backend (``backend``, ``device``, ``dtype``; ``gapverify run
--backend torch --device cuda --dtype float32``) is sampled by :mod:`numerics.array_api`,
written once against the array API standard through ``array_api_compat``
(``xp = array_namespace(x)``): numpy, torch or cupy.

Random streams. Each backend draws from its own generator, seeded from the task's numpy
stream (which is derived from the recorded root seed, :func:`verification.running.runner.stream`):
``seed = rng.integers(2**63)``, then ``torch.Generator(device).manual_seed(seed)``,
``cupy.random.default_rng(seed)`` or ``numpy.random.default_rng(seed)``. The same backend,
device, dtype and root seed give the same numbers; different backends give different draws
of the same law (their verdicts agree, their numbers agree in distribution). torch's CPU
and CUDA generators are different streams, so the device is part of the store's key too.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

__all__ = ["BACKENDS", "DEVICES", "DTYPES", "Backend", "BackendUnavailable", "backend_of",
           "check_backend", "sampling_keys", "GPU_INSTALL"]

BACKENDS = ("numpy", "torch", "cupy")
DEVICES = ("cpu", "cuda")
DTYPES = ("float64", "float32")
GPU_INSTALL = "pip install gapverify[gpu]"


class BackendUnavailable(ValueError):
    """The named array library (or device) is not usable here (exit 2 on the command line)."""


def _import(name: str):
    try:
        if name == "torch":
            import torch
            return torch
        if name == "cupy":
            import cupy
            return cupy
    except ImportError:
        raise BackendUnavailable(
            f"parameter '--backend': {name} is not installed; {GPU_INSTALL} "
            f"(torch: for a CPU-only wheel first pip install torch --index-url "
            f"https://download.pytorch.org/whl/cpu)") from None
    return np


def check_backend(name: str, device: str = "cpu", dtype: str = "float64") -> None:
    """Raise :class:`BackendUnavailable` (or ``ValueError`` for a bad value) unless
    ``name`` on ``device`` in ``dtype`` can be used in this environment."""
    for option, value, allowed in (("--backend", name, BACKENDS), ("--device", device, DEVICES),
                                   ("--dtype", dtype, DTYPES)):
        if value not in allowed:
            raise ValueError(f"parameter '{option}' must be one of {', '.join(allowed)}, "
                             f"got {value!r}")
    lib = _import(name)
    try:
        import array_api_compat  # noqa: F401
    except ImportError:
        raise BackendUnavailable(f"parameter '--backend': array-api-compat is not installed; "
                                 f"{GPU_INSTALL}") from None
    if name == "numpy" and device != "cpu":
        raise ValueError("parameter '--device': numpy runs on the cpu only; use --backend "
                         "torch or cupy for cuda")
    if name == "cupy" and device != "cuda":
        raise ValueError("parameter '--device': cupy runs on cuda only")
    if name == "torch" and device == "cuda" and not lib.cuda.is_available():
        raise BackendUnavailable("parameter '--device': torch sees no CUDA device here "
                                 "(torch.cuda.is_available() is False)")


@dataclass(frozen=True)
class Backend:
    """One array library, device and floating dtype."""

    name: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"

    @property
    def default(self) -> bool:
        """numpy in float64: sampled by the original numpy path of ``numerics.experiments``."""
        return self.name == "numpy" and self.dtype == "float64"

    @property
    def lib(self):
        return _import(self.name)

    @property
    def xp(self):
        """The array-API namespace (``array_api_compat``'s wrapper of the library)."""
        if self.name == "torch":
            import array_api_compat.torch as xp
        elif self.name == "cupy":
            import array_api_compat.cupy as xp
        else:
            import array_api_compat.numpy as xp
        return xp

    @property
    def float_dtype(self):
        return getattr(self.xp, self.dtype)

    @property
    def eps(self) -> float:
        """Machine epsilon of the dtype (2.2e-16 in float64, 1.2e-7 in float32)."""
        return float(np.finfo(self.dtype).eps)

    def generator(self, rng: np.random.Generator) -> "Stream":
        """This backend's own seeded stream, seeded from the task's numpy stream."""
        return Stream(self, int(rng.integers(2**63)))

    def to_host(self, x) -> np.ndarray:
        """A numpy copy of a backend array (a device-to-host transfer on a GPU)."""
        if self.name == "torch":
            return x.detach().cpu().numpy()
        if self.name == "cupy":
            return self.lib.asnumpy(x)
        return np.asarray(x)

    def from_host(self, a: np.ndarray):
        a = np.ascontiguousarray(a, dtype=self.dtype)
        if self.name == "torch":
            return self.lib.from_numpy(a).to(self.device)
        if self.name == "cupy":
            return self.lib.asarray(a)
        return a

    def synchronize(self) -> None:
        """Wait for queued device work (timings)."""
        if self.name == "torch" and self.device == "cuda":
            self.lib.cuda.synchronize()
        elif self.name == "cupy":
            self.lib.cuda.Device().synchronize()


class Stream:
    """A backend's seeded normal generator."""

    def __init__(self, backend: Backend, seed: int) -> None:
        self.backend, self.seed = backend, seed
        if backend.name == "torch":
            torch = backend.lib
            self._g = torch.Generator(device=backend.device).manual_seed(seed)
        elif backend.name == "cupy":
            self._g = backend.lib.random.default_rng(seed)
        else:
            self._g = np.random.default_rng(seed)

    def normal(self, shape: tuple[int, ...], mean: float = 0.0, std: float = 1.0) -> Any:
        """``shape`` i.i.d. ``N(mean, std^2)`` in the backend's dtype and device."""
        b = self.backend
        if b.name == "torch":
            torch = b.lib
            x = torch.randn(shape, generator=self._g, dtype=getattr(torch, b.dtype),
                            device=b.device)
        else:
            x = self._g.standard_normal(shape, dtype=b.dtype)
        if std != 1.0:
            x *= std
        if mean != 0.0:
            x += mean
        return x


def backend_of(params: Mapping[str, object]) -> Backend:
    """The backend a task's parameters name (numpy/cpu/float64 when they name none)."""
    return Backend(str(params.get("backend", "numpy")), str(params.get("device", "cpu")),
                   str(params.get("dtype", "float64")))


def sampling_keys(backend: str = "numpy", device: str = "cpu", dtype: str = "float64") -> dict:
    """What a case's sampling parameters (and so its store key) gain for a backend: nothing
    for numpy in float64 (existing stores stay valid), else ``backend``, ``device`` and
    ``dtype`` as text."""
    if Backend(backend, device, dtype).default:
        return {}
    return {"backend": backend, "device": device, "dtype": dtype}


def matrix_gib(T: int, dtype: str = "float64") -> float:
    """GiB of one ``T x T`` matrix: 32 GiB at ``T = 65536`` in float64, 16 in float32."""
    return T * T * np.dtype(dtype).itemsize / 2**30

