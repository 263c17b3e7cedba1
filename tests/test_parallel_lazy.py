"""`polytok.parallel` imports its forking parts (``multiprocessing``, ``pickle``) only where a
process pool is used: a batch encoded in one process, on the compiled pipeline or not, leaves
them unimported; every public name still resolves."""

from __future__ import annotations

import subprocess
import sys

import pytest

import polytok.parallel

SCRIPT = """
import sys
import polytok
tok = polytok.load(sys.argv[1])
tok.encode_batch(["a few words", "and more"] * 50)
tok.encode_batch(["x" * 300] * 4, workers=1)
print(" ".join(sorted(m for m in ("multiprocessing", "pickle") if m in sys.modules)))
"""


@pytest.mark.parametrize("name", ["cl100k_base-tiktoken", "gpt2"])
def test_one_process_batch_imports_no_forking(name):
    from fixtures import HF_JSON_FIXTURES, fixture_path

    path = fixture_path(name, "cl100k_base.tiktoken" if name.endswith("tiktoken") else HF_JSON_FIXTURES[name])
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_every_public_name_resolves():
    for name in polytok.parallel.__all__:
        assert getattr(polytok.parallel, name) is not None
    from polytok.parallel import MIN_CHARS, can_fork, encode_in_pool, map_in_runs

    assert MIN_CHARS > 0 and callable(can_fork) and callable(encode_in_pool) and callable(map_in_runs)
    assert set(polytok.parallel.__all__) <= set(dir(polytok.parallel))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = polytok.parallel.no_such_name
