"""The pre-filter is used from two threads at once in the language server (masking on the event loop,
diagnosis on the engine thread): each thread needs its own Hyperscan scratch space."""

import threading

from mltriage.engine.prefilter import make_prefilter


def test_concurrent_scans_from_several_threads():
    prefilter = make_prefilter(["ERROR", "NCCL WARN", "Traceback"])
    block = b"x ERROR y NCCL WARN z Traceback " * 200
    expected = prefilter.matches(block)
    errors, results = [], []

    def scan():
        try:
            for _ in range(1000):
                results.append(prefilter.matches(block) == expected)
        except Exception as exc:  # hyperscan.ScratchInUseError with one shared scratch
            errors.append(exc)

    threads = [threading.Thread(target=scan) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 4000 and all(results)
