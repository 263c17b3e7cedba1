"""The round trip of tests/test_pickle.py: copy, load, pickle cold and warm, delete, unpickle
in a spawned process, compare with what the reference engine gave.

A `Case` is one tokenizer: the files it is loaded from and its calls, each with the reference
engine's answer. `run` copies each case's files into a temporary folder, loads the copy and
pickles it twice: cold (nothing encoded yet) and warm (after every call of the case,
``encode_full`` of its texts and a decode of the first 3000 ids, so every cache and lazily
built table is filled). A warm pickle must be as big as a cold one (within `WARM_SLACK`):
caches are not pickled. The copy is then deleted, and one process started with the ``spawn``
method (the default on macOS and Windows; what DataLoader workers, joblib and Ray use)
unpickles every pickle and runs the calls, recording each file it opens: none may be a
tokenizer file. The child imports only this module and polytok.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polytok

RAISES = ("raises",)  # expected: the reference refuses the input, so polytok raises a PolytokError
# What a warm pickle may add to a cold one: what is found once and kept (BPE's cut mark, a few
# characters), never a cache; the caches of one warm-up are kilobytes.
WARM_SLACK = 512
_MODULE_SUFFIXES = (".py", ".pyc", ".so", ".pth")


@dataclass
class Case:
    """One tokenizer: its files (copied, loaded, then deleted), the calls and what the reference gave."""

    label: str
    files: dict[str, Path]  # name in the copy folder -> source; empty: `target` is a built-in name
    target: str = ""  # what polytok.load opens inside the copy folder ("" = the folder)
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    expected: list[Any] = field(default_factory=list)

    def add(self, call: tuple[Any, ...], expected: Any) -> None:
        """``("encode", text, add_special, special)``, ``("decode", ids, skip_special)`` or ``("pieces", text)``."""
        self.calls.append(call)
        self.expected.append(expected)


def reference(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The reference's answer, or RAISES where it refuses the input."""
    try:
        return fn(*args, **kwargs)
    except Exception:
        return RAISES


def call(tok: polytok.Tokenizer, request: tuple[Any, ...]) -> Any:
    """Run one call; an error comes back as ``("raised", its text, whether it is a PolytokError)``."""
    try:
        if request[0] == "encode":
            return tok.encode(request[1], add_special=request[2], special=request[3])
        if request[0] == "decode":
            return tok.decode(request[1], skip_special=request[2])
        return tok.pre_tokenizer.pre_tokenize(request[1])  # type: ignore[union-attr]  # "pieces"
    except Exception as exc:
        return ("raised", f"{type(exc).__name__}: {exc}"[:200], isinstance(exc, polytok.PolytokError))


def unpickle_and_run(jobs: list[tuple[str, str, list[tuple[Any, ...]]]]) -> tuple[list[list[Any]], list[str]]:
    """In the spawned process: unpickle each file and run its calls; also the files opened meanwhile."""
    opened: list[str] = []
    reading = {path for _, path, _ in jobs}

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and isinstance(args[0], str) and args[0] not in reading:
            opened.append(args[0])

    sys.addaudithook(audit)  # for the rest of this throw-away process
    results = []
    for _, path, calls in jobs:
        with open(path, "rb") as f:
            tok = pickle.load(f)
        results.append([call(tok, request) for request in calls])
        del tok
    return results, [p for p in opened if not p.endswith(_MODULE_SUFFIXES)]


def _pickles(case: Case, work: Path) -> tuple[Path, Path, list[Any]]:
    """The cold and warm pickles of `case` (its copy deleted) and the calls' results before pickling."""
    folder = work / "source" / case.label
    folder.mkdir(parents=True)
    for name, source in case.files.items():
        shutil.copyfile(source, folder / name)
    tok = polytok.load(folder / case.target if case.files else case.target)
    cold = pickle.dumps(tok, pickle.HIGHEST_PROTOCOL)
    before = [call(tok, request) for request in case.calls]
    for request in case.calls:
        if request[0] == "encode":
            with contextlib.suppress(polytok.PolytokError):
                tok.encode_full(request[1], add_special=request[2], special=request[3])
    for skip in (False, True):  # every id's piece through the decoders' caches
        call(tok, ("decode", list(range(min(len(tok), 3000))), skip))
    warm = pickle.dumps(tok, pickle.HIGHEST_PROTOCOL)
    shutil.rmtree(folder)  # the pickles must not need the source file
    warm_size, cold_size = len(warm), len(cold)
    assert warm_size <= cold_size + WARM_SLACK, \
        f"{case.label}: pickled after encoding {warm_size} bytes, before {cold_size}: a cache is pickled"
    paths = work / f"{case.label}.cold.pickle", work / f"{case.label}.warm.pickle"
    paths[0].write_bytes(cold)
    paths[1].write_bytes(warm)
    return paths[0], paths[1], before


def _matches(expected: Any, got: Any) -> bool:
    if expected is RAISES:
        return isinstance(got, tuple) and got[0] == "raised" and got[2]
    return bool(got == expected)


def run(cases: list[Case], work: Path) -> None:
    """Pickle every case, unpickle all of them in one spawned process, compare with the references."""
    assert cases, "no case could be built"
    jobs, before = [], {}
    for case in cases:
        cold, warm, before[case.label] = _pickles(case, work)
        jobs += [(f"{case.label} (cold)", str(cold), case.calls), (f"{case.label} (warm)", str(warm), case.calls)]
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        results, opened = pool.submit(unpickle_and_run, jobs).result()
    assert not opened, f"the unpickled tokenizers opened files: {opened[:5]}"
    reports = []
    for (label, _, calls), got in zip(jobs, results):
        case = next(c for c in cases if label.startswith(c.label + " "))
        for index, (request, want, have) in enumerate(zip(calls, case.expected, got)):
            if not _matches(want, have):
                then = before[case.label][index]
                same = "the same" if then == have else f"{then!r:.120}"
                reports.append(f"{label} {request[0]}{tuple(str(a)[:60] for a in request[1:])}:\n  reference "
                               f"{want!r:.160}\n  unpickled {have!r:.160}\n  before pickling: {same}")
    assert not reports, f"{len(reports)} mismatches; first ones:\n" + "\n".join(reports[:6])
