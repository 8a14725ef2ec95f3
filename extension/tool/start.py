"""Start the mltriage language server from the extension's bundle.

Puts the bundled pure-Python packages and the compiled ones built for this CPython on sys.path,
then runs the server. Stdlib only: this must work on any Python >= 3.11, and fail in words.
"""

import os
import platform
import sys

BUNDLED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bundled")


def fail(message: str) -> None:
    sys.stderr.write(f"mltriage: {message}\n")
    sys.stderr.flush()
    sys.exit(3)


def native_dir() -> str:
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64"}.get(machine, machine)
    return os.path.join(BUNDLED, "native", f"{tag}-{sys.platform}-{arch}")


def main() -> None:
    if sys.version_info < (3, 11):
        fail(f"Python 3.11 or newer is needed; {sys.executable} is {platform.python_version()}.")
    libs, native = os.path.join(BUNDLED, "libs"), native_dir()
    if sys.implementation.name == "cpython" and os.path.isdir(native):
        sys.path[0:0] = [native, libs]
    else:
        # No compiled deps bundled for this Python/platform: use what the interpreter has installed.
        sys.path.append(libs)
    try:
        import pydantic_core  # noqa: F401
        import regex  # noqa: F401

        from mltriage.lsp import main as serve
    except ImportError as exc:
        fail(
            f"cannot load the server's dependencies on {platform.python_implementation()} "
            f"{platform.python_version()} ({sys.platform}, {platform.machine()}): {exc}. The extension bundles them "
            "for CPython 3.11-3.14 on Linux x86_64; elsewhere run `pip install mltriage` for this interpreter."
        )
    serve()


if __name__ == "__main__":
    main()
