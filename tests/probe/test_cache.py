"""Cache keyed by driver version, GPU UUIDs and CUDA_VISIBLE_DEVICES; --refresh reruns."""

from __future__ import annotations

import os

from conftest import SMALL, fake_nvml, nvml_for

from mltriage.probe import cache, load_cached_report, run_probe


def _run(spec, root, refresh=False, **kw):
    return run_probe(refresh=refresh, nvml=fake_nvml(spec), platform_root=root, sizes=SMALL,
                     timeout_s=20, bandwidth=False, **kw)


def test_second_run_comes_from_the_cache_without_gpu_work(fake_gpus, empty_root, isolated):
    spec = nvml_for(2)
    assert load_cached_report(fake_nvml(spec)) is None
    first = _run(spec, empty_root)
    assert first.cache["hit"] is False and first.cache["path"].startswith(str(isolated / "cache"))
    fake_gpus(crash={"stage": "init"})  # any new worker would now crash
    second = _run(spec, empty_root)
    assert second.cache["hit"] is True and second.machine_verdict == "OK"
    assert second.to_json()["pairs"] == first.to_json()["pairs"]
    cached = load_cached_report(fake_nvml(spec))
    assert cached is not None and cached.cache["hit"] and cached.pair_summaries() == first.pair_summaries()
    # --refresh really reruns: and now sees the crash
    assert _run(spec, empty_root, refresh=True).machine_verdict == "CRASH"
    assert load_cached_report(fake_nvml(spec)).machine_verdict == "CRASH"


def test_key_changes_with_driver_uuids_and_visible_devices(fake_gpus, empty_root, monkeypatch):
    spec = nvml_for(2)
    _run(spec, empty_root)
    assert load_cached_report(fake_nvml(spec)) is not None
    assert load_cached_report(fake_nvml({**spec, "driver": "590.1"})) is None
    swapped = {**spec, "gpus": [spec["gpus"][0], {**spec["gpus"][1], "uuid": "GPU-other"}]}
    assert load_cached_report(fake_nvml(swapped)) is None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert load_cached_report(fake_nvml(spec)) is None


def test_other_options_rerun(fake_gpus, empty_root):
    spec = nvml_for(2)
    _run(spec, empty_root)
    fake_gpus(corrupt=[{"src": 0, "dst": 1, "offset": 1}])
    assert _run(spec, empty_root).cache["hit"] is True
    assert _run(spec, empty_root, devices=[1, 0]).machine_verdict == "CORRUPT"


def test_no_gpu_results_are_not_cached(fake_gpus, empty_root):
    fake_gpus(no_runtime=True)
    spec = nvml_for(2)
    assert _run(spec, empty_root).exit_code == 3
    assert load_cached_report(fake_nvml(spec)) is None


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("MLTRIAGE_CACHE_DIR", str(tmp_path / "a"))
    assert cache.cache_dir() == str(tmp_path / "a")
    monkeypatch.delenv("MLTRIAGE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == os.path.join(str(tmp_path / "xdg"), "mltriage")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "mltriage")


def test_corrupt_cache_file_is_ignored(fake_gpus, empty_root):
    spec = nvml_for(2)
    r = _run(spec, empty_root)
    with open(r.cache["path"], "w") as f:
        f.write("{not json")
    assert load_cached_report(fake_nvml(spec)) is None
    assert _run(spec, empty_root).cache["hit"] is False
