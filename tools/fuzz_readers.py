"""Mutation fuzzing of every polytok reader: what escapes as a non-polytok error, or hangs.

Takes real fixture files (from the test fixture cache / ../shared/fixtures), mutates them
(truncation, byte flips, length fields; for JSON a wrong-typed value -- huge, negative, NaN/Inf,
list/dict/str/bool/null -- or a deleted key at every key path of the tree; for rank files a
rank or token replaced on one line) and loads each mutant. A `polytok.PolytokError` is the
expected outcome for a bad file; a load that succeeds must then encode and decode a few
texts. Any other exception, or a load slower than --timeout seconds, is an escape and is
printed with the mutation that caused it.

    PYTHONPATH=src:tests python tools/fuzz_readers.py [--seed 0] [--rounds 200] [--timeout 20]
"""

from __future__ import annotations

import argparse
import collections
import functools
import itertools
import json
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polytok
from polytok.errors import PolytokError

WRONG = [None, True, -1, 2**70, 1.5, "x", "", [], [1, "a"], {}, {"type": "Nope"},
         10**400, -(10**400), float("nan"), float("inf"), float("-inf"), 10**9, -(2**63)]
# rank-file lines: a rank replaced by each of these (huge, negative, not a number, past int()'s digits)
RANKS = [b"-1", b"4294967296", b"1" + b"0" * 400, b"9" * 5000, b"nan", b"1.5", b"0x10", b"", b"1 2"]
TEXTS = ["Hello world", "  spaces\n\ttabs", "日本語 é \u0301", "<s></s><|endoftext|>[CLS]", "1234567 ok"]


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang()


def key_paths(node: Any, prefix: tuple[Any, ...] = (), width: int = 3) -> Iterator[tuple[Any, ...]]:
    """Key paths into a JSON tree, taking only the first `width` members of each list or object."""
    if isinstance(node, dict):
        for key in list(node)[:width] if len(node) > 12 else list(node):
            yield prefix + (key,)
            yield from key_paths(node[key], prefix + (key,), width)
    elif isinstance(node, list):
        for index in range(min(width, len(node))):
            yield prefix + (index,)
            yield from key_paths(node[index], prefix + (index,), width)


def json_mutants(data: Any) -> Iterator[tuple[str, Any]]:
    """(description, mutated tree) for every key path x wrong value, and each key deleted."""
    for path in key_paths(data):
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        saved = parent[last]
        for value in WRONG:
            parent[last] = value
            yield f"{'.'.join(map(str, path))} = {value!r}", data
        parent[last] = saved
        if isinstance(parent, dict):
            del parent[last]
            yield f"del {'.'.join(map(str, path))}", data
            parent[last] = saved


def byte_mutants(raw: bytes, rng: random.Random, rounds: int) -> Iterator[tuple[str, bytes]]:
    """Truncations, single and multi-byte flips, and bursts of 0xff (huge lengths) in the first 64 kB."""
    for _ in range(rounds):
        kind = rng.randrange(4)
        head = min(len(raw), 1 << 16)
        at = rng.randrange(max(1, head))
        if kind == 0:
            cut = rng.randrange(len(raw))
            yield f"truncate at {cut}", raw[:cut]
        elif kind == 1:
            bit = 1 << rng.randrange(8)
            yield f"flip bit {bit:#x} at {at}", raw[:at] + bytes([raw[at] ^ bit]) + raw[at + 1:]
        elif kind == 2:
            n = rng.randrange(1, 9)
            yield f"0xff x{n} at {at}", raw[:at] + b"\xff" * n + raw[at + n:]
        else:
            junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
            yield f"insert {junk!r} at {at}", raw[:at] + junk + raw[at:]


def rank_mutants(raw: bytes, rng: random.Random, rounds: int) -> Iterator[tuple[str, bytes]]:
    """A rank file with one line's rank replaced by a value of `RANKS`, or its token by a wrong one."""
    lines = raw.split(b"\n")
    for _ in range(rounds):
        at = rng.randrange(len(lines))
        token, _, rank = lines[at].partition(b" ")
        if rng.randrange(2):
            mutant = lines[:at] + [token + b" " + rng.choice(RANKS)] + lines[at + 1:]
        else:
            mutant = lines[:at] + [rng.choice([b"", b"=", b"@@", b"YQ==YQ=="]) + b" " + rank] + lines[at + 1:]
        yield f"line {at + 1}: {mutant[at][:40]!r}", b"\n".join(mutant)


def exercise(tok: polytok.Tokenizer) -> None:
    """A loaded tokenizer must encode and decode without a non-polytok error."""
    for text in TEXTS:
        ids = tok.encode(text)
        tok.decode(ids)
    tok.decode(list(range(min(len(tok), 50))))


def attempt(load: Any, what: str, timeout: float, escapes: list[str]) -> str:
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        exercise(load())
        outcome = "loaded"
    except PolytokError:
        outcome = "refused"
    except Hang:
        outcome = "HANG"
        escapes.append(f"HANG (> {timeout}s): {what}")
    except RecursionError:
        outcome = "ESCAPE"
        escapes.append(f"RecursionError: {what}")
    except Exception as exc:
        outcome = "ESCAPE"
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        escapes.append(f"{type(exc).__name__}: {exc} [{Path(frame.filename).name}:{frame.lineno}] <- {what}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if time.perf_counter() - start > timeout and outcome != "HANG":
        escapes.append(f"SLOW {time.perf_counter() - start:.1f}s: {what}")
    return outcome


def fuzz_json(name: str, path: Path, kind: str, timeout: float, escapes: list[str],
              counts: collections.Counter[str]) -> None:
    from polytok.formats.hf_json import parse_tokenizer_json

    data = json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / path.name
        for what, tree in json_mutants(data):
            if kind == "json":
                counts[attempt(functools.partial(parse_tokenizer_json, tree), f"{name}: {what}", timeout, escapes)] += 1
                continue
            target.write_text(json.dumps(tree), encoding="utf-8")
            counts[attempt(lambda: polytok.load(target), f"{name}: {what}", timeout, escapes)] += 1


def fuzz_bytes(name: str, path: Path, options: dict[str, Any], rounds: int, rng: random.Random,
               timeout: float, escapes: list[str], counts: collections.Counter[str]) -> None:
    raw = path.read_bytes()
    options = dict(options)
    siblings = options.pop("_siblings", [])
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / path.name
        for sibling in siblings:
            shutil.copy(sibling, Path(tmp) / sibling.name)
        mutants = byte_mutants(raw, rng, rounds)
        if path.suffix == ".tiktoken":
            mutants = itertools.chain(mutants, rank_mutants(raw, rng, rounds))
        for what, mutant in mutants:
            target.write_bytes(mutant)
            outcome = attempt(lambda: polytok.load(target, **options), f"{name}/{path.name}: {what}", timeout, escapes)
            counts[outcome] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=200, help="byte mutants per file")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--only", default="", help="substring of the fixture names to fuzz")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from robustness.corpus_sources import fuzz_targets

    rng = random.Random(args.seed)
    escapes: list[str] = []
    counts: collections.Counter[str] = collections.Counter()
    for name, path, kind, options in fuzz_targets():
        if args.only not in name:
            continue
        start = time.perf_counter()
        if kind in ("json", "tekken"):
            fuzz_json(name, path, kind, args.timeout, escapes, counts)
        fuzz_bytes(name, path, options, args.rounds, rng, args.timeout, escapes, counts)
        print(f"{name}: {time.perf_counter() - start:.1f}s, escapes so far {len(escapes)}", flush=True)
    print(dict(counts))
    for line in escapes:
        print(line)
    return 1 if escapes else 0


if __name__ == "__main__":
    raise SystemExit(main())


# --- GGUF: every GGUF value type in place of every key polytok reads ----------------------------

def gguf_samples() -> dict[str, list[tuple[Any, Any]]]:
    """(GGUF type, value) candidates per value type: bounds, negatives, NaN/Inf, empty and odd arrays."""
    from formats.gguf_pack import (
        ARRAY,
        BOOL,
        FLOAT32,
        FLOAT64,
        INT8,
        INT16,
        INT32,
        INT64,
        STRING,
        UINT8,
        UINT16,
        UINT32,
        UINT64,
    )

    nan, inf = float("nan"), float("inf")
    return {
        "scalar": [(UINT8, 255), (INT8, -1), (UINT16, 65535), (INT16, -32768), (UINT32, 2**32 - 1), (UINT32, 3),
                   (INT32, -(2**31)), (INT32, 1), (FLOAT32, nan), (FLOAT32, -inf), (BOOL, True), (STRING, ""),
                   (STRING, "gpt2"), (UINT64, 2**64 - 1), (INT64, -1), (FLOAT64, inf)],
        "array": [((ARRAY, t), [v] * 4) for t, v in [(UINT8, 200), (INT8, -3), (UINT16, 7), (INT16, -7),
                                                      (UINT32, 2**32 - 1), (INT32, -1), (INT32, 6), (INT32, 99),
                                                      (FLOAT32, nan), (FLOAT32, inf), (BOOL, True),
                                                      (UINT64, 2**64 - 1), (INT64, -(2**63)), (FLOAT64, -inf)]]
        + [((ARRAY, STRING), ["<0x0A>", "", "a b", "\u2581"]), ((ARRAY, STRING), []), ((ARRAY, INT32), []),
           ((ARRAY, ARRAY, INT32), [[1], []])],
    }


def gguf_value_mutants(base: list[tuple[Any, Any, Any]], keys: list[str]) -> Iterator[tuple[str, bytes]]:
    """Packed files: each key given each sample type, each key deleted, and each array's count made huge."""
    import struct

    from formats.gguf_pack import pack_gguf

    samples = gguf_samples()
    for key in keys:
        rest = [kv for kv in base if kv[0] != key]
        yield f"del {key}", pack_gguf(rest)
        for vtype, value in samples["scalar"] + samples["array"]:
            yield f"{key} = {vtype} {value!r}", pack_gguf(rest + [(key, vtype, value)])
    for key, vtype, value in base:
        if not isinstance(vtype, tuple):
            continue
        data = pack_gguf(base)
        at = data.index(key.encode()) + len(key) + 8  # after the key, its type and element type
        for count in (2**62, 2**64 - 1, len(value) + 1, 2**31):
            yield f"{key} count = {count}", data[:at] + struct.pack("<Q", count) + data[at + 8:]


def fuzz_gguf_values(base: list[tuple[Any, Any, Any]], keys: list[str], timeout: float, escapes: list[str],
                     counts: collections.Counter[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "m.gguf"
        for what, data in gguf_value_mutants(base, keys):
            target.write_bytes(data)
            counts[attempt(lambda: polytok.load(target), f"gguf: {what}", timeout, escapes)] += 1
