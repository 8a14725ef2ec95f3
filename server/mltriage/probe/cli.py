"""``mltriage probe``: arguments and the run function the main CLI dispatches to.

Exit codes: 0 every pair OK (or a single GPU: nothing to test); 1 a bad verdict (CORRUPT, SLOW,
HANG, CRASH, NOT_SUPPORTED, or pairs left untested); 2 bad arguments; 3 no GPU, no NVIDIA driver
or no GPU runtime.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import api, render


def _int_list(text: str) -> list[int]:
    try:
        values = [int(x, 0) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected non-negative integers, got {text!r}")
    return values


def _size_list(text: str) -> list[int]:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    out = []
    for part in text.split(","):
        part = part.strip().lower().removesuffix("ib").removesuffix("b")
        mult = units.get(part[-1:], 1)
        try:
            n = int(float(part[:-1] if mult > 1 else part) * mult)
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad size {part!r} (use e.g. 4,4099,1M,64M)")
        if not 1 <= n <= 1 << 30:
            raise argparse.ArgumentTypeError(f"size {n} out of range 1..1G")
        out.append(n)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the mltriage.probe/v1 JSON report")
    parser.add_argument("--refresh", action="store_true", help="ignore the cached result and probe again")
    parser.add_argument("--timeout", type=float, default=api.DEFAULT_TIMEOUT_S, metavar="SECONDS",
                        help="kill the GPU worker after this long and report HANG (default %(default)s)")
    parser.add_argument("--devices", type=_int_list, metavar="0,1",
                        help="CUDA ordinals to test (after CUDA_VISIBLE_DEVICES); default all")
    parser.add_argument("--sizes", type=_size_list, metavar="4,4099,1M,64M",
                        help="copy sizes for the correctness check")
    parser.add_argument("--no-bandwidth", action="store_true", help="correctness only, no speed test")
    parser.add_argument("--backend", choices=("auto", "torch", "cupy", "ctypes"), default="auto",
                        help="GPU runtime for the worker (default: first of torch, cupy, libcuda)")
    parser.add_argument("--python", metavar="PATH",
                        help="interpreter for the worker, e.g. your training venv's python with torch")


def run(args: argparse.Namespace) -> int:
    if args.timeout <= 0:
        print("mltriage probe: --timeout must be positive", file=sys.stderr)
        return 2
    report = api.run_probe(refresh=args.refresh, timeout_s=args.timeout, devices=args.devices,
                           sizes=args.sizes, bandwidth=not args.no_bandwidth,
                           backend=args.backend, python=args.python)
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    elif report.exit_code not in (2, 3):
        print(render.text(report))
    if report.exit_code in (2, 3):
        print(f"mltriage probe: {report.message}", file=sys.stderr)
    return report.exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mltriage probe",
                                     description="Check GPU peer-to-peer support, correctness and speed.")
    add_arguments(parser)
    return run(parser.parse_args(argv))
