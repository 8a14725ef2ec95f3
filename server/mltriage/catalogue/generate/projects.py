"""The projects the catalogue covers, and where each one's releases come from.

Release lists are explicit so that a regeneration reproduces the same catalogue; add a release
here to cover it. Git projects take every tag that names a release.
"""

from __future__ import annotations

from mltriage.catalogue.generate.sources import DebianProject, DebianTarball, GitProject, PypiRelease, WheelProject

_VLLM = (
    "0.2.0 0.2.1.post1 0.2.2 0.2.3 0.2.4 0.2.5 0.2.6 0.2.7 0.3.0 0.3.1 0.3.2 0.3.3 0.4.0 0.4.0.post1 0.4.1 0.4.2 "
    "0.4.3 0.5.0 0.5.0.post1 0.5.1 0.5.2 0.5.3 0.5.3.post1 0.5.4 0.5.5 0.6.0 0.6.1 0.6.1.post1 0.6.1.post2 0.6.2 "
    "0.6.3 0.6.3.post1 0.6.4 0.6.4.post1 0.6.5 0.6.6 0.6.6.post1 0.7.0 0.7.1 0.7.2 0.7.3 0.8.0 0.8.1 0.8.2 0.8.3 "
    "0.8.4 0.8.5 0.8.5.post1 0.9.0 0.9.0.1 0.9.1 0.9.2 0.10.0 0.10.1 0.10.1.1 0.10.2 0.11.0 0.11.1 0.11.2 0.12.0 "
    "0.13.0 0.14.0 0.14.1 0.15.0 0.15.1 0.16.0 0.17.0 0.17.1 0.18.0 0.18.1 0.19.0 0.19.1 0.20.0 0.20.1 0.20.2 "
    "0.21.0 0.22.0 0.22.1 0.23.0 0.24.0 0.25.0 0.25.1 0.26.0 0.27.0 0.27.1 0.28.0 0.29.0 0.30.0 0.31.0 0.32.0 0.33.0 0.34.0"
).split()

# transformers: every release from 4.0.0, patches included (models/ too: the per-model checks; the modular_*.py
# files are left out: they are the source of a code generator, the modeling_*.py they generate is what runs)
_TRANSFORMERS = (
    "4.0.0 4.0.1 4.1.0 4.1.1 4.2.0 4.2.1 4.2.2 4.3.0 4.3.1 4.3.2 4.3.3 4.4.0 4.4.1 4.4.2 4.5.0 4.5.1 4.6.0 4.6.1 "
    "4.7.0 4.8.0 4.8.1 4.8.2 4.9.0 4.9.1 4.9.2 4.10.0 4.10.1 4.10.2 4.10.3 4.11.0 4.11.1 4.11.2 4.11.3 4.12.0 "
    "4.12.1 4.12.2 4.12.3 4.12.4 4.12.5 4.13.0 4.14.1 4.15.0 4.16.0 4.16.1 4.16.2 4.17.0 4.18.0 4.19.0 4.19.1 "
    "4.19.2 4.19.3 4.19.4 4.20.0 4.20.1 4.21.0 4.21.1 4.21.2 4.21.3 4.22.0 4.22.1 4.22.2 4.23.0 4.23.1 4.24.0 "
    "4.25.1 4.26.0 4.26.1 4.27.0 4.27.1 4.27.2 4.27.3 4.27.4 4.28.0 4.28.1 4.29.0 4.29.1 4.29.2 4.30.0 4.30.1 "
    "4.30.2 4.31.0 4.32.0 4.32.1 4.33.0 4.33.1 4.33.2 4.33.3 4.34.0 4.34.1 4.35.0 4.35.1 4.35.2 4.36.0 4.36.1 "
    "4.36.2 4.37.0 4.37.1 4.37.2 4.38.0 4.38.1 4.38.2 4.39.0 4.39.1 4.39.2 4.39.3 4.40.0 4.40.1 4.40.2 4.41.0 "
    "4.41.1 4.41.2 4.42.0 4.42.1 4.42.2 4.42.3 4.42.4 4.43.0 4.43.1 4.43.2 4.43.3 4.43.4 4.44.0 4.44.1 4.44.2 "
    "4.45.0 4.45.1 4.45.2 4.46.1 4.46.2 4.46.3 4.47.0 4.47.1 4.48.0 4.48.1 4.48.2 4.48.3 4.49.0 4.50.0 4.50.1 "
    "4.50.2 4.50.3 4.51.0 4.51.1 4.51.2 4.51.3 4.52.1 4.52.2 4.52.3 4.52.4 4.53.0 4.53.1 4.53.2 4.53.3 4.54.0 "
    "4.54.1 4.55.0 4.55.1 4.55.2 4.55.3 4.55.4 4.56.0 4.56.1 4.56.2 4.57.1 4.57.2 4.57.3 4.57.4 4.57.5 4.57.6 "
    "5.0.0 5.1.0 5.2.0 5.3.0 5.4.0 5.5.0 5.5.1 5.5.2 5.5.3 5.5.4 5.6.0 5.6.1 5.6.2 5.7.0 5.8.0 5.8.1 5.9.0 "
    "5.10.1 5.10.2 5.10.4 5.11.0 5.12.0 5.12.1 5.13.0 5.13.1 5.14.0 5.14.1 5.15.0 5.15.1 5.16.0 5.16.1 5.17.0 "
    "5.18.0 5.19.0 5.20.0 5.20.1 5.20.2 5.21.0 5.21.1 5.22.0 5.22.1 5.22.2 5.23.0 5.24.0"
).split()

# torch: every release from 1.8.0 (the Python side: distributed incl. elastic, cuda, data loading, Dynamo, Inductor, ...)
_TORCH = (
    "1.8.0 1.8.1 1.9.0 1.9.1 1.10.0 1.10.1 1.10.2 1.11.0 1.12.0 1.12.1 1.13.0 1.13.1 2.0.0 2.0.1 2.1.0 2.1.1 2.1.2 "
    "2.2.0 2.2.1 2.2.2 2.3.0 2.3.1 2.4.0 2.4.1 2.5.0 2.5.1 2.6.0 2.7.0 2.7.1 2.8.0 2.9.0 2.9.1 2.10.0 2.11.0 2.12.0 "
    "2.12.1 2.13.0 2.14.0 2.14.1 2.15.0"
).split()
_TORCH_PYTHON = ("torch/distributed/", "torch/cuda/", "torch/utils/data/", "torch/nn/parallel/", "torch/multiprocessing/",
                 "torch/serialization.py", "torch/_utils.py", "torch/_dynamo/", "torch/_inductor/")
# PyPI's torch wheels for Linux are CUDA builds of up to 2.5 GB; the macOS and Windows ones are 40-130 MB
_SMALL_TORCH_WHEELS = ("macosx_14_0_arm64", "macosx_11_0_arm64", "macosx_11_1_arm64", "win_amd64", "macosx_10_9_x86_64")

PYTHON_PROJECTS = {
    # releases after the mirror's last tag (v0.19.5, 2026-08-09) come from their sdists (DeepSpeed ships no wheel)
    # op_builder/ and accelerator/ are installed as deepspeed/ops/op_builder/ and deepspeed/accelerator/ (symlinks
    # in the tags): the op build messages ("async_io requires the dev libaio .so object and headers ...") and the
    # accelerator's choice
    "deepspeed": GitProject("deepspeed", "deepspeedai/DeepSpeed", ("deepspeed", "op_builder/", "accelerator/"),
                            r"v(\d+\.\d+\.\d+)", pypi=(
        PypiRelease("0.19.6", "2026-08-27", "sdist"), PypiRelease("0.19.7", "2026-09-16", "sdist"),
        PypiRelease("0.19.8", "2026-10-20", "sdist")), package="deepspeed",
        # setup.py copies the top-level op_builder/ and accelerator/ into the package; the tags have symlinks
        # there, which are not read
        pypi_exclude=r"^deepspeed/(ops/op_builder|accelerator)/",
        # its C++/CUDA ops: TORCH_CHECKs and C++ throws (their printf/std::cerr diagnostics are not read)
        c_roots=("csrc/",), c_project="pytorch"),
    "megatron": GitProject("megatron", "NVIDIA/Megatron-LM", ("megatron",), r"core_v(\d+\.\d+\.\d+)|v([12]\.\d+)|(2\d\.\d\d)"),
    # 1.15.0 is not tagged in the mirror (its last tag is v1.14.0): from its wheel
    "accelerate": GitProject("accelerate", "huggingface/accelerate", ("src/accelerate",), r"v(\d+\.\d+\.\d+)",
                             pypi=(PypiRelease("1.15.0", "2026-09-09", "wheel"),), package="accelerate",
                             repo_prefix="src/"),
    "vllm": WheelProject("vllm", "vllm-project/vllm", "vllm", ("vllm/",), tuple(_VLLM)),
    "transformers": WheelProject("transformers", "huggingface/transformers", "transformers", ("transformers/",),
                                 tuple(_TRANSFORMERS), exclude=r"^transformers/models/.*/modular_[^/]*\.py$", repo_prefix="src/"),
    "pytorch": WheelProject("pytorch", "pytorch/pytorch", "torch", _TORCH_PYTHON, tuple(_TORCH),
                            local_wheels=("/opt/wheels/torch-2.13.0+cpu-*.whl", "/opt/pypi-more/files/torch-2.14.1-*.whl"),
                            platforms=_SMALL_TORCH_WHEELS, pythons=("3.11", "3.10", "3.9", "3.8"),
                            note=" (the small macOS/Windows builds: the same Python files as the multi-GB Linux CUDA ones)"),
}

# PyTorch's C++ side (c10d, the CUDA caching allocator, c10/cuda's checks, torch/csrc/cuda, the cuBLAS
# and cuDNN checks of ATen/cuda) from Debian's source packages, the only full source of PyTorch
# releases this generator can reach. Checksums are those of the suite's Sources entry. Listed in
# Sources but not served by deb.debian.org (HTTP 404 when last fetched), so not covered:
#   1.7.1 (bullseye) pool/main/p/pytorch/pytorch_1.7.1.orig.tar.gz
#         fc8d6aaf0bdedd4221617be8d47ac39af57605bdcc814fabc28739427b55e9c7
#   2.14.1 (sid) pool/main/p/pytorch/pytorch_2.14.1+dfsg.orig.tar.xz
#         50a484ab557b7d35fb24bc5257cf5f41307a55bc2ebcc69d011f01fdb1369ced
# contrib's pytorch-cuda 2.6.0 ships the very same orig tarball (same sha256) as main's pytorch 2.6.0.
C_PROJECTS = {
    # ATen whole (its native operators' checks: "mat1 and mat2 shapes cannot be multiplied", the same-device
    # check of TensorIterator and the generated wrappers), autograd's, and the DataLoader's worker signal handlers
    "libtorch": DebianProject("libtorch", "pytorch/pytorch", "pytorch", (
        "c10/cuda/", "c10/core/", "torch/csrc/cuda/", "torch/csrc/distributed/", "aten/src/ATen/", "torch/csrc/autograd/",
        "torch/csrc/DataLoader.cpp"), (
        DebianTarball("1.13.1", "pool/main/p/pytorch/pytorch_1.13.1+dfsg.orig.tar.xz",
                      "d0355588b8528566d477e6ebf1b4d9d036a6fd75711339f66b27472ce5879dc7", "bookworm"),
        DebianTarball("2.6.0", "pool/main/p/pytorch/pytorch_2.6.0+dfsg.orig.tar.xz",
                      "099a9601bc40d67656e75735c44abedb0fbe92d08817852ab7472eebb7e6ddff", "trixie"),
    ), c_project="pytorch"),
}
