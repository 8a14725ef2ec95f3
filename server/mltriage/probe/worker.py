"""The probe's GPU side, run in its own process: ``python -m mltriage.probe.worker CONFIG_JSON``.

Speaks JSON lines on stdout (events: init, begin, correctness, bandwidth, bidirectional, done,
error). Anything the driver prints goes to stderr. A hang or crash here is the parent's to
report: the CLI and the language server never run CUDA in their own process.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    t0 = time.perf_counter()
    cfg = json.loads(argv[0]) if argv else {}
    from . import checks
    from .backends import NoRuntime, select

    try:
        backend = select(cfg.get("backend", "auto"))
        count = backend.device_count()
    except NoRuntime as exc:
        emit({"event": "error", "kind": "no_runtime", "message": str(exc)})
        return 3
    if count == 0:
        emit({"event": "error", "kind": "no_gpu", "message": f"{backend.name}: no CUDA device visible"})
        return 3
    devices = cfg.get("devices") or list(range(count))
    bad = [d for d in devices if not 0 <= d < count]
    if bad:
        emit({"event": "error", "kind": "bad_devices",
              "message": f"device(s) {bad} not visible: {count} CUDA device(s), 0..{count - 1}"})
        return 2
    init_s = time.perf_counter() - t0
    emit({"event": "init", **backend.info(), "count": count, "devices": devices,
          "device_info": {str(d): backend.device_info(d) for d in range(count)},
          "init_s": round(init_s, 4)})
    t1 = time.perf_counter()
    if len(devices) >= 2:
        checks.run(backend, devices, cfg.get("sizes") or list(checks.DEFAULT_SIZES),
                   bool(cfg.get("bandwidth", True)), emit)
    backend.close()
    emit({"event": "done", "probe_s": round(time.perf_counter() - t1, 4)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
