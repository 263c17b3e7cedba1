"""Guard for regular expressions read from files: no catastrophic backtracking, no unbounded match.

Stage: pre-tokenizer / normalizer patterns that a file supplies (tokenizer.json ``Split`` and
``Replace`` regexes; tiktoken ``pattern=``; tekken ``config.pattern``), compiled by
`regex.oniguruma.compile_onig` and `regex.fancy.compile_fancy`. The reference engines have
no such guard: onig (tokenizers) stops a match after its retry limit and fancy-regex
(tiktoken, mistral-common) after its backtrack limit, both as an error; Python's
``regex`` would run on for hours.

Two parts:

1. At compile time, `needs_bound` marks a pattern as risky when it repeats a group that
   itself holds a repeat or an alternation (``(a+)+``, ``(\\w|\\d)*``, ``(.*a){12}``),
   uses a backreference, or is slow on a probe: `probe` runs it over short adversarial
   texts (2 000-character runs of one character of each class, and two-character
   alternations, each ending in a NUL that makes a match fail) under ``regex``'s
   ``timeout=``; over `SLOW_PROBE_SECONDS` on one of them marks it. A risky pattern is
   not refused: real ones can be merely quadratic on odd input (``^\\s*\\w`` over
   thousands of empty lines) and still match the reference on real text. Cost at load:
   small, once per distinct pattern (patterns are compiled once and cached).
2. Only risky patterns are matched with a time bound, `time_bound` (proportional to the
   text: `BOUND_BASE` + `BOUND_PER_CHAR` per character); exceeding it raises `EncodeError`
   instead of running for hours. The bound covers a whole encode, not one call: inside
   ``with budget(n_chars)`` (the tokenizer opens one per encoded text, a match loop one per
   text it walks) every bounded call draws on one deadline, so a text cut into many
   pieces, or a pattern searched once per match, cannot take a fresh bound each time.

Why not a bound on every pattern: ``regex``'s ``timeout=`` reads the clock as it steps,
which costs several times the matching time, measured on the bench texts and on lines
called one by one. None of the patterns of the test fixtures (tokenizer.json
Split/Replace, every known tiktoken file, both tekken files) is risky, so their hot path
is unchanged. Numbers: bench/README.md, 'Measurements behind design choices'.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import regex

from ..errors import EncodeError

__all__ = ["probe", "needs_bound", "statically_risky", "time_bound", "bounded_call", "budget", "PROBE_SECONDS",
           "BOUND_BASE", "BOUND_PER_CHAR", "bounded_in_use", "mark_bounded"]

PROBE_SECONDS = 0.25
PROBE_CHARS = 2000
SLOW_PROBE_SECONDS = 0.02  # a probe this slow marks the pattern risky (real ones are far faster)
BOUND_BASE = 1.0
BOUND_PER_CHAR = 20e-6  # 20 s per million characters: many times what any real pattern needs

_RUNS = "a 1\n\t!é\u0301日_-"
_PAIRS = ("ab", "a ", " \n", "1a", "a!")

# a group closed and then repeated: ")*", ")+", "){n}", "){n,m}" (lazy or possessive forms too)
_REPEATED_GROUP = regex.compile(r"\)(?:[*+]|\{\d*,?\d*\})")
_UNBOUNDED = regex.compile(r"(?<!\\)(?:[*+]|\{\d*,\})")
_BACKREF = regex.compile(r"\\(?:[1-9]|k<|g\{?-?\d)")


def _probes() -> list[str]:
    half = PROBE_CHARS // 2
    texts = [c * PROBE_CHARS + "\x00" for c in _RUNS]
    texts += [pair * half + "\x00" for pair in _PAIRS]
    return texts


_PROBES = _probes()


def _group_bodies(pattern: str) -> list[str]:
    """The text of every parenthesised group that is repeated without bound."""
    bodies = []
    for m in _REPEATED_GROUP.finditer(pattern):
        depth, i = 0, m.start()
        while i >= 0:
            c = pattern[i]
            escaped = i > 0 and pattern[i - 1] == "\\"
            if not escaped and c == ")":
                depth += 1
            elif not escaped and c == "(":
                depth -= 1
                if depth == 0:
                    bodies.append(pattern[i + 1:m.start()])
                    break
            i -= 1
    return bodies


def statically_risky(pattern: str) -> bool:
    """A repeated group holding a repeat or an alternation, or a backreference."""
    if _BACKREF.search(pattern):
        return True
    return any(_UNBOUNDED.search(body) or "|" in body for body in _group_bodies(pattern))


def probe(native: regex.Pattern[str]) -> bool:
    """Run the probes; True when one is slow or times out (the pattern then needs a bound)."""
    for text in _PROBES:
        # CPU time, and the faster of two runs: a busy machine that parks this process, or a
        # collection in the middle of a run, must not make a real pattern look slow
        spent = []
        for _ in range(2):
            start = time.process_time()
            try:
                native.findall(text, timeout=PROBE_SECONDS)
            except TimeoutError:
                return True
            spent.append(time.process_time() - start)
            if spent[-1] <= SLOW_PROBE_SECONDS:
                break
        if min(spent) > SLOW_PROBE_SECONDS:
            return True
    return False


def needs_bound(native: regex.Pattern[str], pattern: str) -> bool:
    """Whether matches of this pattern need a time bound (statically risky, or slow on a probe)."""
    return statically_risky(pattern) or probe(native)


_bounded_seen = False


def mark_bounded() -> None:
    """Note that a bounded pattern exists in this process (`OnigPattern` calls it for each)."""
    global _bounded_seen
    _bounded_seen = True


def bounded_in_use() -> bool:
    """Whether any bounded pattern was ever built in this process: until one is, no match can
    read a `budget`, and an encode may skip setting one."""
    return _bounded_seen


def time_bound(n_chars: int) -> float:
    """Seconds a risky pattern may take over a text of `n_chars` characters."""
    return BOUND_BASE + BOUND_PER_CHAR * n_chars


def bounded_error(pattern: str, n_chars: int) -> EncodeError:
    return EncodeError(f"the regular expression {pattern!r:.120} took over {time_bound(n_chars):.1f} s on "
                       f"{n_chars} characters (catastrophic backtracking); polytok stops it, as the "
                       "reference engine's backtrack limit would")


class _Deadline(threading.local):
    at: float | None = None  # the deadline, once a bounded match has started it
    pending: int | None = None  # the outermost block's character count, before its first bounded match
    n_chars = 0


_deadline = _Deadline()


class budget:
    """``with budget(n_chars): ...``: every bounded match in the block shares one deadline.

    The outermost block sets it, `time_bound(n_chars)` from the start of its first bounded
    match (an encode whose patterns are all safe never reads the clock); nested blocks (a
    match loop inside an encode) keep the outer one. Per thread. The deadline is in CPU
    time, the clock ``regex``'s ``timeout=`` counts (C ``clock()`` in its ``_regex.c``).
    """

    __slots__ = ("_n_chars", "_outermost")

    def __init__(self, n_chars: int) -> None:
        self._n_chars = n_chars
        self._outermost = False

    def __enter__(self) -> budget:
        deadline = _deadline
        if deadline.at is None and deadline.pending is None:
            self._outermost = True
            deadline.pending = self._n_chars
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._outermost:
            _deadline.at = None
            _deadline.pending = None


def bounded_call(method: Any, pattern: str, text: str, *args: Any) -> Any:
    """``method(text, *args, timeout=…)``, with a timeout turned into `EncodeError`.

    The timeout is what is left of the enclosing `budget`, or `time_bound(len(text))`
    outside one.
    """
    if _deadline.at is None and _deadline.pending is not None:  # the block's first bounded match starts its clock
        _deadline.n_chars, _deadline.pending = _deadline.pending, None
        _deadline.at = time.process_time() + time_bound(_deadline.n_chars)
    if _deadline.at is None:
        timeout, n_chars = time_bound(len(text)), len(text)
    else:
        timeout, n_chars = _deadline.at - time.process_time(), _deadline.n_chars
        if timeout <= 0:
            raise bounded_error(pattern, n_chars)
    try:
        return method(text, *args, timeout=timeout)
    except TimeoutError:
        raise bounded_error(pattern, n_chars) from None
