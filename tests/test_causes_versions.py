"""Version and toolchain mismatches: two installed components that disagree are named as such, not as
the bare exception they raise.

Each failure here is real output (an import between two packages built in a temporary
site-packages and run with this Python; torch 2.13.0's own extension check against a fake nvcc; a
real pydantic model) or a line built from the cited upstream release's format string."""

import json
import sys
import textwrap
from pathlib import Path

import pytest

import procs
from cli_runner import run_cli
from mltriage.engine import diagnose_text
from mltriage.symptoms import Symptom
from observing import facts_observed, observe as _observe, sources_by_symptom

# (symptom, line, its source, facts it must carry)
WORDS = [
    (Symptom.IMPORT_FAILED, "ModuleNotFoundError: No module named 'vllm.transformers_utils.tokenizer_group.tokenizer_group'; "
     "'vllm.transformers_utils.tokenizer_group' is not a package", "CPython 3.11 importlib._bootstrap",
     {"form": "module", "package": "vllm", "parent": "vllm.transformers_utils.tokenizer_group"}),
    (Symptom.IMPORT_FAILED, "ImportError: No module named torch._six", "CPython 2.7 Python/import.c", {"form": "module", "package": "torch"}),
    (Symptom.IMPORT_FAILED, "ImportError: cannot import name 'is_torch_fx_available' from 'transformers.utils' "
     "(/opt/venv/lib/python3.10/site-packages/transformers/utils/__init__.py)", "CPython 3.8+ Python/ceval.c import_from",
     {"form": "name", "package": "transformers", "name": "is_torch_fx_available"}),
    (Symptom.IMPORT_FAILED, "ImportError: cannot import name 'container_abcs'", "CPython 3.6 Python/ceval.c import_from",
     {"form": "name", "name": "container_abcs"}),
    (Symptom.IMPORT_FAILED, "AttributeError: module 'numpy' has no attribute 'float'", "CPython 3.8 Objects/moduleobject.c",
     {"form": "attribute", "package": "numpy", "name": "float"}),
    (Symptom.PACKAGE_FRAME, '  File "/usr/local/lib/python3.11/dist-packages/unsloth_zoo/vllm_utils.py", line 191, in patch_vllm_lora_tokenizer',
     "CPython Lib/traceback.py", {"package": "unsloth_zoo", "file": "unsloth_zoo/vllm_utils.py", "function": "patch_vllm_lora_tokenizer"}),
    (Symptom.PACKAGE_FRAME, "/usr/local/lib/python3.11/dist-packages/peft/tuners/lora.py in _find_and_replace(self, adapter_name)",
     "IPython 7 ultratb VerboseTB", {"package": "peft", "function": "_find_and_replace"}),
    (Symptom.PACKAGE_FRAME, "File /opt/conda/lib/python3.10/site-packages/trl/trainer/sft_trainer.py:41, in <module>()",
     "IPython 8 ultratb", {"package": "trl"}),
    (Symptom.PACKAGE_VERSION, "vllm==0.8.5", "pip freeze", {"package": "vllm", "version": "0.8.5"}),
    (Symptom.PACKAGE_VERSION, "[pip3] torch==2.1.0+cu121", "torch collect_env", {"package": "torch", "version": "2.1.0+cu121"}),
    (Symptom.PACKAGE_VERSION, "Successfully installed tokenizers-0.21.1 transformers-4.51.3", "pip install", {}),
    (Symptom.KEY_ERROR, "KeyError: 'qwen2'", "CPython KeyError_str, str key", {"key": "qwen2"}),
    (Symptom.KEY_ERROR, "KeyError: 3", "CPython KeyError_str, int key", {"key": "3"}),
    (Symptom.MODEL_TYPE_UNKNOWN, "ValueError: The checkpoint you are trying to load has model type `qwen3` but Transformers does not "
     "recognize this architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is out of date.",
     "transformers 4.37.2 configuration_auto.py", {"model_type": "qwen3"}),
    # reproduced by the signature's sample: transformers 4.57.6, a config.json whose model_type is newer than it
    (Symptom.MODEL_TYPE_UNKNOWN, "ValueError: The checkpoint you are trying to load has model type `deepseek_v32` but Transformers does not "
     "recognize this architecture.", "transformers 4.57.6 (reproduced)", {"model_type": "deepseek_v32"}),
    (Symptom.CONFIG_VALIDATION_FAILED, "pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig",
     "pydantic-core 2.x", {"count": 1, "model": "DeepSpeedZeroConfig"}),
    (Symptom.CONFIG_VALIDATION_FAILED, "pydantic.error_wrappers.ValidationError: 2 validation errors for DeepSpeedZeroConfig",
     "pydantic v1.10 error_wrappers", {"count": 2, "model": "DeepSpeedZeroConfig"}),
    (Symptom.VALUE_NOT_INTEGER, "  Input should be a valid integer, got a number with a fractional part [type=int_from_float, "
     "input_value=15099494.4, input_type=float]", "pydantic-core IntFromFloat", {"input_value": "15099494.4"}),
    (Symptom.VALUE_NOT_INTEGER, "[rank1]:   ... [type=int_from_float, input_value=2.5, input_type=float]", "pydantic-core error line",
     {"input_value": "2.5"}),
    (Symptom.REQUIREMENT_UNMET, "ImportError: tokenizers>=0.99 is required for a normal functioning of this module, but found tokenizers==0.15.2.",
     "transformers utils/versions.py", {"form": "raised", "requirement": "tokenizers>=0.99", "package": "tokenizers", "version": "0.15.2"}),
    (Symptom.REQUIREMENT_UNMET, "vllm 0.8.5 requires transformers>=4.51.1, but you have transformers 4.46.0 which is incompatible.",
     "pip install's conflict report", {"form": "pip", "requirer": "vllm", "package": "transformers", "version": "4.46.0"}),
    (Symptom.REQUIREMENT_UNMET, "peft 0.4.0 has requirement accelerate>=0.21, but you have accelerate 0.20.3.", "pip check",
     {"form": "pip", "requirer": "peft", "package": "accelerate", "version": "0.20.3"}),
    (Symptom.JIT_BUILD_STARTED, "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...", "torch cpp_extension",
     {"root": "/root/.cache/torch_extensions/py310_cu121"}),
    (Symptom.JIT_BUILD_STARTED, "> compiling and loading fused kernels ...", "Megatron-LM 23.04 initialize.py", {}),
    (Symptom.JIT_BUILD_STARTED, "Emitting ninja build file /opt/megatron/fused_kernels/build/build.ninja...", "torch cpp_extension build lines",
     {"build_file": "/opt/megatron/fused_kernels/build/build.ninja"}),
    (Symptom.JIT_BUILD_STARTED, "Building extension module scaled_masked_softmax_cuda...", "torch cpp_extension build lines",
     {"extension": "scaled_masked_softmax_cuda"}),
    (Symptom.JIT_BUILD_WAITING, '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/file_baton.py", line 42, in wait',
     "CPython frame of torch FileBaton.wait", {}),
    (Symptom.JIT_BUILD_WAITING, "    wait (torch/utils/file_baton.py:42)", "py-spy dump", {}),
    (Symptom.JIT_BUILD_WAITING, 'UserWarning: Waited on lock file "/root/.cache/torch_extensions/py310_cu121/fused_adam/lock" for 100 seconds.',
     "torch 2.x FileBaton warning", {"lock": "/root/.cache/torch_extensions/py310_cu121/fused_adam/lock", "seconds": 100}),
]




@pytest.mark.parametrize("symptom,line,source,facts", WORDS, ids=[f"{w[0].value}-{i}" for i, w in enumerate(WORDS)])
def test_each_wording_is_observed_with_its_facts(symptom, line, source, facts):
    got = facts_observed(symptom, line, source)
    for name, value in facts.items():
        assert got.get(name) == value, (name, got)


def test_every_symptom_of_this_family_has_wordings_from_two_sources():
    for symptom, sources in sources_by_symptom(WORDS).items():
        assert len(sources) >= 2, f"{symptom.value} is tested with one source only: {sources}"


@pytest.mark.parametrize("line", [
    "ImportError: cannot import name 'nn' from partially initialized module 'torch' (most likely due to a circular import) (/x/torch.py)",
    "AttributeError: module 'torch' has no attribute 'compile' (partially initialized module)",
    "requirements: torch==2.1.0 and transformers>=4.37 ==> ok",
    "| KeyError: 'a' |",
])
def test_neighbouring_words_are_not_these_symptoms(line):
    obs = _observe(line)
    assert not obs.of(Symptom.IMPORT_FAILED) and not obs.of(Symptom.PACKAGE_VERSION) and not obs.of(Symptom.KEY_ERROR)


# -- 1. an import between two installed packages -------------------------------------------------------

def _two_packages(tmp_path: Path) -> Path:
    """A site-packages with two packages: alphazoo (the importer) and betalib (what it imports)."""
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "alphazoo").mkdir(parents=True)
    (site / "betalib" / "utils").mkdir(parents=True)
    (site / "alphazoo" / "__init__.py").write_text("")
    (site / "alphazoo" / "patch.py").write_text(textwrap.dedent("""\
        def patch_tokenizer():
            import betalib.utils.tokenizer_group.tokenizer_group
            return betalib

        def patch_name():
            from betalib.utils import get_lora_tokenizer
            return get_lora_tokenizer

        def patch_attr():
            import betalib
            return betalib.float_type
        """))
    (site / "betalib" / "__init__.py").write_text("")
    (site / "betalib" / "utils" / "__init__.py").write_text("")
    (site / "betalib" / "utils" / "tokenizer_group.py").write_text("x = 1\n")
    return site


def _run_python(code: str, site: Path | None, cwd: Path) -> str:
    env = {"PYTHONPATH": str(site)} if site else {}
    p = procs.run([sys.executable, "-c", code], capture_output=True, env=env, cwd=cwd, timeout=60)
    assert p.returncode != 0
    return p.stderr.decode()


@pytest.mark.parametrize("call,missing", [
    ("patch_tokenizer", "module betalib.utils.tokenizer_group.tokenizer_group"),
    ("patch_name", "'get_lora_tokenizer' in betalib.utils"),
    ("patch_attr", "the attribute 'float_type' of betalib"),
])
def test_an_import_one_installed_package_makes_of_another_is_a_version_mismatch_of_the_two(tmp_path, call, missing):
    site = _two_packages(tmp_path)
    log = tmp_path / "run.log"
    log.write_text("betalib==2.0.0\nalphazoo==0.1.0\n" + _run_python(f"import alphazoo.patch as p; p.{call}()", site, tmp_path))
    p = run_cli("diagnose", "--json", str(log))
    out = json.loads(p.stdout)
    top = out["findings"][0]
    assert top["signature"] == "python-package-versions-incompatible", [f["signature"] for f in out["findings"]]
    assert top["facts"]["package"] == "betalib" and top["facts"]["importer"] == "alphazoo"
    assert top["facts"]["missing"] == missing
    assert "Incompatible package versions" in top["title"] and "alphazoo" in top["title"]
    assert "betalib 2.0.0" in " ".join(top["notes"]) and "alphazoo 0.1.0" in " ".join(top["notes"])
    assert "pip install '{package}" not in json.dumps(top["fix"]) and "betalib" in top["fix"]["summary"]
    # the bare exception / "not installed" layers are its context now
    assert all(f["role"] == "context" for f in out["findings"][1:] if f["signature"].startswith("python-"))
    assert out["run"]["packages"] == {"alphazoo": "alphazoo 0.1.0", "betalib": "betalib 2.0.0"}


def test_a_package_that_is_not_installed_stays_module_not_found(tmp_path):
    text = _run_python("import gammanotinstalled", None, tmp_path)
    d = diagnose_text(text)
    assert d.findings[0].signature == "python-module-not-found"
    assert "python-package-versions-incompatible" not in {f.signature for f in d.findings}


def test_a_missing_package_imported_by_another_package_stays_module_not_found(tmp_path):
    site = tmp_path / "site-packages"
    (site / "alphazoo").mkdir(parents=True)
    (site / "alphazoo" / "__init__.py").write_text("import flash_attn_absent\n")
    d = diagnose_text(_run_python("import alphazoo", site, tmp_path))
    assert d.findings[0].signature == "python-module-not-found"
    assert "python-package-versions-incompatible" not in {f.signature for f in d.findings}


def test_the_codes_own_missing_attribute_or_name_is_not_two_packages(tmp_path):
    site = _two_packages(tmp_path)
    attr = diagnose_text(_run_python("import betalib; betalib.float_type", site, tmp_path))
    name = diagnose_text(_run_python("from betalib.utils import get_lora_tokenizer", site, tmp_path))
    assert "python-package-versions-incompatible" not in {f.signature for f in attr.findings + name.findings}
    assert name.findings[0].signature == "python-import-name-mismatch"


def test_a_colab_traceback_names_the_importer_from_its_frame():
    # IPython 7's VerboseTB as Colab prints it (a linked path, the code around the line), then CPython's message
    d = diagnose_text(
        "[/usr/local/lib/python3.11/dist-packages/unsloth_zoo/vllm_utils.py](https://localhost:8080/#) in patch_vllm_lora_tokenizer()\n"
        "    189         pass\n    190 \n--> 191         import vllm.transformers_utils.tokenizer_group.tokenizer_group\n"
        "    192         pass\n\n"
        "ModuleNotFoundError: No module named 'vllm.transformers_utils.tokenizer_group.tokenizer_group'; "
        "'vllm.transformers_utils.tokenizer_group' is not a package\n")
    top = d.findings[0]
    assert top.signature == "python-package-versions-incompatible"
    assert top.facts["importer"] == "unsloth_zoo" and top.facts["package"] == "vllm"


# -- 2. transformers older than the model --------------------------------------------------------------

# reproduced: transformers 4.36.2 AutoConfig.from_pretrained on a config.json {"model_type": "qwen2"}, CPython 3.11.7
TF_4362_KEYERROR = '''Traceback (most recent call last):
  File "/tmp/vers/tf/load.py", line 2, in <module>
    config = transformers.AutoConfig.from_pretrained("/tmp/vers/tf/qwen")
             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/vers/tf/lib/python3.11/site-packages/transformers/models/auto/configuration_auto.py", line 1098, in from_pretrained
    config_class = CONFIG_MAPPING[config_dict["model_type"]]
                   ~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/vers/tf/lib/python3.11/site-packages/transformers/models/auto/configuration_auto.py", line 795, in __getitem__
    raise KeyError(key)
KeyError: 'qwen2'
'''


def test_a_keyerror_from_config_mapping_is_transformers_older_than_the_model():
    d = diagnose_text(TF_4362_KEYERROR)
    top = d.findings[0]
    assert top.signature == "hf-model-type-unrecognized"
    assert top.facts["model_type"] == "qwen2" and top.facts["transformers_before"] == "4.37"
    assert "qwen2" in top.root_cause and "transformers" in top.fix.summary.lower()
    assert [f.role for f in d.findings if f.signature == "python-unhandled-exception"] == ["context"]


def test_a_listed_transformers_newer_than_the_keyerror_form_says_the_job_ran_another_environment():
    d = diagnose_text("transformers==4.37.2\n" + TF_4362_KEYERROR)
    top = d.findings[0]
    assert top.signature == "hf-model-type-unrecognized"
    assert any("another environment" in n and "transformers 4.37.2" in n for n in top.notes), top.notes
    older = diagnose_text("transformers==4.36.2\n" + TF_4362_KEYERROR).findings[0]
    assert not any("another environment" in n for n in older.notes) and any("transformers 4.36.2" in n for n in older.notes)


def test_a_keyerror_of_the_users_own_dict_is_no_model_type():
    d = diagnose_text('Traceback (most recent call last):\n  File "/home/u/train.py", line 4, in <module>\n    value = table[name]\n'
                      "KeyError: 'qwen2'\n")
    assert "hf-model-type-unrecognized" not in {f.signature for f in d.findings}


# -- 3. DeepSpeed's pydantic config ----------------------------------------------------------------------

def test_a_float_for_an_integer_in_deepspeeds_config_is_the_auto_value_version_mismatch(tmp_path):
    # a real pydantic v2 error for a model of DeepSpeed's name and field (DeepSpeed v0.15.0 deepspeed/runtime/zero/config.py:
    # prefetch_bucket_size: int = Field(..., alias="stage3_prefetch_bucket_size")), filled as transformers 4.44.2 fills it
    code = textwrap.dedent("""\
        from pydantic import BaseModel, ConfigDict, Field
        class DeepSpeedZeroConfig(BaseModel):
            model_config = ConfigDict(extra="forbid", populate_by_name=True)
            prefetch_bucket_size: int = Field(50000000, ge=0, alias="stage3_prefetch_bucket_size")
        DeepSpeedZeroConfig(**{"stage3_prefetch_bucket_size": 0.9 * 4096 * 4096})
        """)
    p = procs.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    if b"No module named 'pydantic'" in p.stderr:
        pytest.skip("pydantic is not installed in this interpreter")
    d = diagnose_text(p.stderr.decode())
    assert d.findings[0].signature == "deepspeed-auto-value-float-rejected", [f.signature for f in d.findings]
    assert d.findings[0].facts["input_value"] == "15099494.4"
    assert "deepspeed-config-validation-error" not in {f.signature for f in d.findings}  # said once, by the precise one
    assert "transformers" in d.findings[0].fix.summary and "4.45" in d.findings[0].fix.summary


def test_another_deepspeed_validation_error_is_the_general_cause_and_other_models_none():
    extra = ("pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\nstage3_max_live_parameterz\n"
             "  Extra inputs are not permitted [type=extra_forbidden, input_value=1000000000, input_type=int]\n")
    other = ("pydantic_core._pydantic_core.ValidationError: 1 validation error for Settings\nport\n"
             "  Input should be a valid integer, got a number with a fractional part [type=int_from_float, input_value=2.5, input_type=float]\n")
    assert diagnose_text(extra).findings[0].signature == "deepspeed-config-validation-error"
    assert not {"deepspeed-config-validation-error", "deepspeed-auto-value-float-rejected"} & {f.signature for f in diagnose_text(other).findings}


# -- 4. a driver older than the CUDA build -----------------------------------------------------------

@pytest.mark.parametrize("line", [
    # cudaGetErrorString(222) of libcudart 13.0, under TensorFlow's gpu_device.cc wrapper
    "failed to load model: CUDA runtime implicit initialization on GPU:0 failed. Status: the provided PTX was compiled with an unsupported toolchain.",
    "RuntimeError: CUDA error: forward compatibility was attempted on non supported HW",  # cudaGetErrorString(804)
    "       version 470.82.01 was detected and compatibility mode is UNAVAILABLE.",  # NGC entrypoint's driver check
    "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver",
])
def test_every_form_of_a_driver_too_old_for_the_build_is_that_cause(line):
    d = diagnose_text(line + "\n")
    assert d.findings[0].signature == "cuda-driver-too-old"
    assert "driver" in d.findings[0].fix.summary.lower()
    assert "cuda-runtime-error" not in {f.signature for f in d.findings}


def test_cuda_rejecting_its_libcuda_and_kernel_module_pair_is_the_system_driver_mismatch():
    # cudaGetErrorString(803) of libcudart 13.0 in c10/cuda/CUDAFunctions.cpp's device_count_impl message
    d = diagnose_text("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
                      "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / "
                      "cuda driver combination\n")
    assert d.findings[0].signature == "cuda-system-driver-mismatch"
    assert "cuda-compat" in d.findings[0].title  # the first suspect: a forward-compatibility libcuda on the path
    assert not {"cuda-runtime-error", "cuda-driver-too-old"} & {f.signature for f in d.findings}


def test_a_missing_kernel_image_is_not_a_driver_too_old():
    d = diagnose_text("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert "cuda-driver-too-old" not in {f.signature for f in d.findings}


# -- 5. an extension built against another CUDA than torch's -------------------------------------------

def test_torchs_own_extension_check_against_another_nvcc_is_the_toolkit_mismatch(tmp_path):
    cuda = tmp_path / "cuda"
    (cuda / "bin").mkdir(parents=True)
    nvcc = cuda / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 11.8, V11.8.89'\n")
    nvcc.chmod(0o755)
    code = ("import torch, torch.utils.cpp_extension as ce\n"
            f"ce.CUDA_HOME = {str(cuda)!r}\n"
            "torch.version.cuda = '12.1'  # the CUDA boundary: this CPU build has none\n"
            "ce._check_cuda_version('g++', ce.TorchVersion('11.4.0'))\n")
    p = procs.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert b"mismatches the version that was used to compile" in p.stderr
    d = diagnose_text(p.stderr.decode())
    top = d.findings[0]
    assert top.signature == "cuda-extension-toolkit-mismatch"
    assert top.facts["sys_cuda"] == "11.8" and top.facts["torch_cuda"] == "12.1"
    assert "torch" in top.fix.summary and "CUDA_HOME" in top.fix.summary


def test_a_minor_cuda_mismatch_warning_is_no_failure():
    d = diagnose_text("UserWarning: The detected CUDA version (12.4) has a minor version mismatch with the version that was used to "
                      "compile PyTorch (12.1). Most likely this shouldn't be a problem.\n")
    assert "cuda-extension-toolkit-mismatch" not in {f.signature for f in d.findings}


# -- healthy ------------------------------------------------------------------------------------------

def test_a_pip_install_and_freeze_log_is_silent_and_lists_the_versions():
    d = diagnose_text("Requirement already satisfied: vllm in /opt/venv/lib/python3.11/site-packages (0.8.4)\n"
                      "Successfully installed tokenizers-0.21.1 transformers-4.51.3\n"
                      "torch==2.6.0\nnumpy==1.26.4\n")
    assert not [f for f in d.findings if f.severity in ("error", "critical")]
    assert d.run["packages"] == {"numpy": "numpy 1.26.4", "tokenizers": "tokenizers 0.21.1", "torch": "torch 2.6.0",
                                 "transformers": "transformers 4.51.3", "vllm": "vllm 0.8.4"}


# -- 6. a JIT extension build waiting on a stale lock ----------------------------------------------------

def test_a_build_that_waits_on_a_stale_lock_is_that_cause_not_the_interrupt(tmp_path):
    import signal
    import subprocess
    import time

    root = tmp_path / "ext"
    (root / "fused_demo").mkdir(parents=True)
    (root / "fused_demo" / "lock").write_text("")  # left by a build that was interrupted
    (tmp_path / "f.cpp").write_text("int f() { return 1; }\n")
    code = ("import os, sys\nos.environ['TORCH_EXTENSIONS_DIR'] = sys.argv[1]\n"
            "from torch.utils.cpp_extension import load\nprint('ready', flush=True)\n"
            "load(name='fused_demo', sources=[sys.argv[2]], verbose=True)\n")
    child = procs.popen([sys.executable, "-c", code, str(root), str(tmp_path / "f.cpp")], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert child.stdout.readline() == b"ready\n"
        time.sleep(3)  # try_acquire fails at once on the stale lock: the child sleeps in FileBaton.wait
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
    finally:
        procs.kill_group(child.pid)  # the build's compiler and ninja with it
    assert b"file_baton.py" in err and b"KeyboardInterrupt" in err
    d = diagnose_text(err.decode())
    assert d.findings[0].signature == "torch-extension-build-lock-stale", [f.signature for f in d.findings]
    assert "lock" in d.findings[0].fix.summary and "fused_kernels/build" in d.findings[0].fix.summary


def test_a_run_that_stops_right_after_the_fused_kernel_build_began_is_that_cause_and_one_that_went_on_is_not():
    # NVIDIA/Megatron-LM 23.04 megatron/initialize.py _compile_dependencies's prints, then the terminal's ^C echo
    stuck = diagnose_text("> initializing torch distributed ...\n> compiling and loading fused kernels ...\n^C\n")
    assert stuck.findings[0].signature == "torch-extension-build-lock-stale"
    went_on = diagnose_text("> compiling and loading fused kernels ...\n"
                            ">>> done with compiling and loading fused kernels. Compilation time: 41.270 seconds\n"
                            + "".join(f"iteration {i:>8}/  500000 | consumed samples: {256 * i:>12} | lm loss: 7.1E+00 |\n"
                                      for i in range(1, 60)))
    assert "torch-extension-build-lock-stale" not in {f.signature for f in went_on.findings}


# -- 7. SGLang's CUDA graph capture with a feature that cannot be captured ---------------------------------

def test_sglangs_capture_failure_says_to_start_without_cuda_graphs_or_in_a_capturable_mode():
    # sgl-project/sglang 0.4.6 cuda_graph_runner.py: f"Capture cuda graph failed: {e}\n" + its "Possible solutions" list
    d = diagnose_text("Exception: Capture cuda graph failed: Failed: Assertion error /sgl-workspace/DeepEP/csrc/deep_ep.cpp:1105 "
                      "'x.size(0) == topk_idx.size(0)'\nPossible solutions:\n"
                      "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
                      "4. disable cuda graph by --disable-cuda-graph. (Not recommonded. Huge perf loss)\n")
    top = d.findings[0]
    assert top.signature == "sglang-cuda-graph-capture-failed"
    assert [f.flag for f in top.fix.flags] == ["--disable-cuda-graph"] and "low_latency" in top.fix.summary
    # the message's own solution list names it where a paste lost its first line; the flag's --help line does not
    cut = diagnose_text("3. disable torch compile by not using --enable-torch-compile\n"
                        "4. disable cuda graph by --disable-cuda-graph. (Not recommonded. Huge perf loss)\n")
    assert cut.findings[0].signature == "sglang-cuda-graph-capture-failed"
    helped = diagnose_text("  --disable-cuda-graph  Disable cuda graph.\n")
    assert "sglang-cuda-graph-capture-failed" not in {f.signature for f in helped.findings}


def test_a_log_that_ends_inside_torchs_extension_build_lines_is_that_cause_and_one_that_loads_the_module_is_not():
    # pytorch/pytorch torch/utils/cpp_extension.py's verbose build lines under Megatron's fused-kernel banner
    head = ("> compiling and loading fused kernels ...\nDetected CUDA files, patching ldflags\n"
            "Emitting ninja build file /opt/megatron/fused_kernels/build/build.ninja...\n"
            "Building extension module scaled_upper_triang_masked_softmax_cuda...\n"
            "Allowing ninja to set a default number of workers... (overridable by setting the environment variable MAX_JOBS=N)\n")
    assert diagnose_text(head).findings[0].signature == "torch-extension-build-lock-stale"
    loaded = diagnose_text(head + "ninja: no work to do.\nLoading extension module scaled_upper_triang_masked_softmax_cuda...\n"
                           ">>> done with compiling and loading fused kernels. Compilation time: 3.118 seconds\n"
                           "time to initialize megatron (seconds): 12.845\n")
    assert "torch-extension-build-lock-stale" not in {f.signature for f in loaded.findings}


def test_old_megatron_interrupted_between_its_dtype_line_and_its_arguments_banner_is_the_fused_kernel_build():
    # NVIDIA/Megatron-LM megatron/arguments.py before 0d5188c155: parse_args prints the dtype line, JIT-builds the fused
    # kernels, then prints the arguments banner
    stuck = diagnose_text("using world size: 1, data-parallel-size: 1, tensor-model-parallel size: 1, pipeline-model-parallel size: 1\n"
                          "using torch.float16 for parameters ...\n^C\n")
    assert stuck.findings[0].signature == "torch-extension-build-lock-stale"
    went_on = diagnose_text("using torch.float16 for parameters ...\n------------------------ arguments ------------------------\n"
                            + "".join(f"  option_{i} ........ {i}\n" for i in range(3)) + "^C\n")
    assert "torch-extension-build-lock-stale" not in {f.signature for f in went_on.findings}


# -- a library's own version check, and pip's conflict report -------------------------------------------

# reproduced: transformers 4.36.2 require_version('tokenizers>=0.99', ...) with tokenizers 0.15.2, CPython 3.11.7
TF_REQUIRE_VERSION = '''Traceback (most recent call last):
  File "<string>", line 3, in <module>
  File "/tmp/vers/tf/lib/python3.11/site-packages/transformers/utils/versions.py", line 111, in require_version
    _compare_versions(op, got_ver, want_ver, requirement, pkg, hint)
  File "/tmp/vers/tf/lib/python3.11/site-packages/transformers/utils/versions.py", line 44, in _compare_versions
    raise ImportError(
ImportError: tokenizers>=0.99 is required for a normal functioning of this module, but found tokenizers==0.15.2.
To fix: pip install -U tokenizers
'''


def test_a_librarys_own_version_check_names_the_requirement_and_the_installed_version():
    top = diagnose_text(TF_REQUIRE_VERSION).findings[0]
    assert top.signature == "python-package-requirement-unmet"
    assert "tokenizers 0.15.2" in top.title and "tokenizers>=0.99" in top.title
    assert "python -m pip install 'tokenizers>=0.99'" in top.fix.summary


def test_pips_conflict_report_is_cited_by_the_import_it_explains_and_alone_is_no_such_cause(tmp_path):
    site = _two_packages(tmp_path)
    pip_line = "alphazoo 0.1.0 requires betalib<2, but you have betalib 2.0.0 which is incompatible.\n"
    d = diagnose_text(pip_line + _run_python("import alphazoo.patch as p; p.patch_tokenizer()", site, tmp_path))
    top = d.findings[0]
    assert top.signature == "python-package-versions-incompatible"
    assert any(n.startswith("pip reported: alphazoo 0.1.0 requires betalib<2") for n in top.notes), top.notes
    alone = diagnose_text(pip_line)
    assert not {"python-package-requirement-unmet", "python-package-versions-incompatible"} & {f.signature for f in alone.findings}
