"""Probe results cached per machine state: driver version, GPU UUIDs and CUDA_VISIBLE_DEVICES.

A new driver, a swapped GPU or another device mask gives another key, hence a fresh probe.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any


def cache_dir() -> str:
    if os.environ.get("MLTRIAGE_CACHE_DIR"):
        return os.environ["MLTRIAGE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mltriage")


def machine_key(inventory: dict[str, Any]) -> dict[str, Any] | None:
    """What identifies the machine state; None when NVML could not tell us (no caching)."""
    if not inventory.get("available"):
        return None
    return {
        "driver": inventory.get("driver_version"),
        "uuids": [g["uuid"] for g in inventory.get("gpus", [])],
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


def key_digest(key: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def path_for(key: dict[str, Any]) -> str:
    return os.path.join(cache_dir(), f"probe-{key_digest(key)}.json")


def load(key: dict[str, Any]) -> dict[str, Any] | None:
    try:
        with open(path_for(key)) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if data.get("cache", {}).get("key") == key else None


def save(key: dict[str, Any], report: dict[str, Any]) -> str | None:
    """Write atomically; a read-only home must not fail the probe."""
    path = path_for(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(report, f, indent=1)
        os.replace(tmp, path)
        return path
    except OSError:
        return None
