"""Pick the GPU runtime the worker uses: the fake (tests), torch, cupy, or libcuda via ctypes."""

from __future__ import annotations

import json
import os

from .base import Backend, NoRuntime

ORDER = ("torch", "cupy", "ctypes")


def _make(name: str) -> Backend:
    if name == "torch":
        from .torch_backend import TorchBackend

        return TorchBackend()
    if name == "cupy":
        from .cupy_backend import CupyBackend

        return CupyBackend()
    if name == "ctypes":
        from .ctypes_cuda import CtypesCudaBackend

        return CtypesCudaBackend()
    raise NoRuntime(f"unknown backend {name!r} (choose from {', '.join(ORDER)})")


def select(preferred: str = "auto") -> Backend:
    """The first runtime that works; NoRuntime says why each one did not."""
    fake = os.environ.get("MLTRIAGE_PROBE_FAKE")
    if fake:
        from .fake import FakeBackend

        return FakeBackend(json.loads(fake))
    names = ORDER if preferred in ("", "auto") else (preferred,)
    reasons = []
    for name in names:
        try:
            return _make(name)
        except NoRuntime as exc:
            reasons.append(str(exc))
        except Exception as exc:  # a broken install is "no runtime", not a crash
            reasons.append(f"{name}: {type(exc).__name__}: {exc}")
    raise NoRuntime("; ".join(reasons))
