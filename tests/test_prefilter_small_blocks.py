"""Many short blocks (masking a diagnosis' texts) move to the accelerator once searching them in
Python has cost what loading it does, and find the same occurrences there."""

import pytest

from mltriage.engine.prefilter import PYTHON_FINDS_BEFORE_LOAD, HyperscanPrefilter, Prefilter, _hyperscan


@pytest.mark.skipif(_hyperscan() is None, reason="Hyperscan is not installed on this platform")
def test_short_blocks_reach_the_accelerator_with_the_same_occurrences(tmp_path):
    literals = ["token", "password", "secret", "nccl", "aws_"] + [f"word{n}" for n in range(95)]
    blocks = [f"line {n}: password=x secret token nccl aws_{n} word{n % 100} word7 token".encode() for n in range(2000)]
    for single_match in (False, True):
        python = Prefilter(literals, single_match=single_match)
        accelerated = HyperscanPrefilter(literals, tmp_path, single_match=single_match)
        for n, block in enumerate(blocks):
            assert accelerated.matches(block) == python.matches(block)
            loaded = bool(accelerated._db)
            assert loaded == ((n + 1) * len(literals) >= PYTHON_FINDS_BEFORE_LOAD)
        assert loaded
