"""The hostile-file corpus (tests/robustness/hostile.py): every bad file is a FormatError naming its place.

Each case asserts the error's attributes (file, key, offset, line), not only its message; the
offsets and lines come from how hostile.py lays out the bytes.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import polytok
from polytok.errors import FormatError
from robustness.hostile import CASES


def test_corpus_is_large_and_covers_every_format():
    assert len(CASES) >= 40
    prefixes = {case.id.split("-")[0] for case in CASES}
    assert prefixes >= {"json", "gguf", "spm", "tiktoken", "tekken", "wordpiece", "gpt2", "rwkv"}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_hostile_file_error_names_the_place(case, tmp_path):
    for name, data in case.files.items():
        (tmp_path / name).write_bytes(data)
    start = time.perf_counter()
    with pytest.raises(FormatError) as info:
        polytok.load(tmp_path / case.entry, **case.options)
    assert time.perf_counter() - start < 5, "a hostile file must be refused at once"
    err = info.value
    assert err.file is not None and Path(err.file).name == (case.error_file or case.entry)
    expected = {"key": None, "offset": None, "line": None, **case.where}
    assert {"key": err.key, "offset": err.offset, "line": err.line} == expected
    assert str(err).startswith(err.file)


def test_huge_claims_allocate_nothing(tmp_path):
    """A GGUF header claiming 2**60 strings is refused before anything of that size is made."""
    import tracemalloc

    case = next(c for c in CASES if c.id == "gguf-array-count-huge")
    path = tmp_path / case.entry
    path.write_bytes(case.files[case.entry])
    tracemalloc.start()
    try:
        with pytest.raises(FormatError):
            polytok.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_unknown_piece_type_loads_as_sentencepiece_does(tmp_path):
    """Not hostile after all: sentencepiece keeps an unknown piece type as NORMAL (proto2 enum), so polytok loads it."""
    spm = pytest.importorskip("sentencepiece")
    from formats.sentencepiece_pack import model, piece

    from robustness.hostile import GOOD_PIECES, TRAINER

    path = tmp_path / "odd.model"
    path.write_bytes(model(GOOD_PIECES + [piece("c", -3.0, 42)], TRAINER))
    ref = spm.SentencePieceProcessor(model_file=str(path))
    ours = polytok.load(path)
    for text in ("ab c", "c c a", "bca"):
        assert ours.encode(text) == ref.encode(text)
