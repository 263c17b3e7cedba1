"""`convert`: write SRC as another format beside DEST, prove it tokenizes as SRC does, then move it to DEST.

The writer (`polytok.convert.directions`) writes into a temporary folder beside
DEST, under DEST's own name. The proof then runs two sides over `PROOF_TEXTS`
and every text of ``check_corpus``, with `polytok.parity.compare.compare`:

- the written file, read by the target format's reference engine (hf: HF
  tokenizers on the tokenizer.json; gguf: llama.cpp; sentencepiece; tiktoken,
  with the pattern and special tokens of ``Written.load_options``; tekken:
  mistral-common), else, when that engine is not installed, by polytok's reader
  of the written file;
- the source, read by its own format's reference engine, else by polytok's
  reader of the same file (for a model folder: the file `polytok.load` picks in
  it).

Each mode both formats have is compared (`MODES`): sentencepiece adds nothing and
parses no markers; tiktoken adds nothing; mistral-common parses no markers. Any
text that differs in any mode fails the conversion: nothing is moved to DEST and
`ConversionProofError` carries the `ConvertResult` with compare's reports. With
``force=True`` the files are moved anyway and the result says what differs.

A GGUF written by `polytok.convert.converter.to_gguf` was read back by its own
check first, which names where llama.cpp's converter makes llama.cpp differ
from the source engine (`polytok.convert.check.DIFFERENCES`: a normalizer
llama.cpp does not run, Llama HF scores, BERT preprocessing …). Its proof runs on
the check's texts (`CHECK_TEXTS`, whose differences the check knows) and the
corpus; a text the check names as a known difference is not counted against
it where markers are read as the check read them (text or parsed; add_special
either way, as the check adds them in every mode it runs), and the result says how
many there were.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PolytokError
from ..parity.compare import CompareReport, TextResult, compare
from ..parity.engines import HfSide, PolytokSide, Side, reference_side
from ..tokenizer import Tokenizer
from .directions import GgufWritten, Source, folder_file, source_of, target_of, writer_for
from .outcome import Written
from .texts import CHECK_TEXTS, PROOF_TEXTS

__all__ = ["ConvertResult", "Proof", "ConversionProofError", "convert", "prove", "read_corpus", "MODES",
           "TARGET_ENGINES", "engine_available"]

Mode = tuple[bool, str]
_ALL: tuple[Mode, ...] = ((False, "text"), (True, "text"), (False, "parse"), (True, "parse"))
#: the (add_special, special) modes each format's reference engine has
MODES: dict[str, tuple[Mode, ...]] = {
    "hf": _ALL, "gguf": _ALL, "sentencepiece": ((False, "text"),),
    "tiktoken": ((False, "text"), (False, "parse")), "tekken": ((False, "text"), (True, "text"))}
#: the reference engine of each format (`polytok.parity.engines.reference_side`'s names)
TARGET_ENGINES = {"hf": "hf", "gguf": "llama.cpp", "sentencepiece": "sentencepiece", "tiktoken": "tiktoken",
                  "tekken": "mistral"}
_MODULES = {"hf": "tokenizers", "llama.cpp": "llama_cpp", "sentencepiece": "sentencepiece",
            "tiktoken": "tiktoken", "mistral": "mistral_common"}
_SHOWN = 60


def engine_available(engine: str) -> bool:
    """Whether the package of a reference engine is installed (the proof then runs it)."""
    return importlib.util.find_spec(_MODULES[engine]) is not None


class ConversionProofError(PolytokError):
    """The written file does not tokenize as the source; ``result`` holds the proof (nothing was moved)."""

    def __init__(self, message: str, result: ConvertResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class Proof:
    """Both sides' ids over every text in every mode both formats have."""

    target_engine: str
    source_engine: str
    texts: int
    modes: list[Mode]
    #: one report a mode (the written file is side B)
    reports: list[CompareReport] = field(default_factory=list)
    #: (text name, add_special, special, difference) the GGUF's own check named, not counted
    known: list[tuple[str, bool, str, str]] = field(default_factory=list)
    #: the modes of both formats one engine could not run on its file, and why
    skipped: list[str] = field(default_factory=list)

    def differing(self) -> list[tuple[Mode, TextResult]]:
        """Every (mode, text result) that differs and is no known difference."""
        return [(mode, r) for mode, report in zip(self.modes, self.reports) for r in report.diverging
                if not self._known(r.name, mode)]

    def _known(self, name: str, mode: Mode) -> bool:
        """Whether the check named this text in this way of reading markers (the check adds specials
        in every mode it runs; a difference it names is one with add_special either way)."""
        return any(name == text and mode[1] == special for text, _, special, _ in self.known)

    @property
    def identical(self) -> bool:
        return not self.differing()

    def line(self) -> str:
        """The one-line verdict."""
        engines = f"target engine: {self.target_engine}, source engine: {self.source_engine}"
        differing = self.differing()
        if not differing:
            known = (f"; not counted: {len(self.known)} text × mode pairs the check names as known llama.cpp "
                     "differences") if self.known else ""
            modes = f"{len(self.modes)} mode" + ("s" if len(self.modes) != 1 else "")
            skipped = "".join(f"; {why}" for why in self.skipped)
            return f"proof: {self.texts} texts × {modes} identical ({engines}){known}{skipped}"
        (add_special, special), first = differing[0]
        why = ", ".join(first.reasons) or first.error or first.kind or "ids differ"
        shown = repr(first.text[:_SHOWN]) + ("…" if len(first.text) > _SHOWN else "")
        return (f"proof failed: text {first.name} {shown} (add_special={add_special}, special={special}) "
                f"differs: {why}; {len(differing)} differing text × mode pairs ({engines})")

    def details(self) -> str:
        """compare's report of each mode with a differing text (written file = B)."""
        out = []
        for mode, report in zip(self.modes, self.reports):
            diverging = [r for r in report.diverging if not self._known(r.name, mode)]
            if diverging:
                out.append(CompareReport(report.a, report.b, report.mode, diverging).render(limit=10))
        return "\n\n".join(out)

    def to_json(self) -> dict[str, Any]:
        differing = self.differing()
        return {"identical": not differing, "texts": self.texts,
                "modes": [{"add_special": a, "special": s} for a, s in self.modes],
                "target_engine": self.target_engine, "source_engine": self.source_engine,
                "skipped_modes": self.skipped,
                "known_differences": [{"text": n, "add_special": a, "special": s, "difference": d}
                                      for n, a, s, d in self.known],
                "differing": [{"text": r.name, "value": r.text, "add_special": a, "special": s, "kind": r.kind,
                               "reasons": r.reasons, "error": r.error} for (a, s), r in differing],
                "reports": [json.loads(r.to_json()) for r in self.reports if r.diverging]}


@dataclass
class ConvertResult:
    """One conversion: what was written (with its final paths when moved) and its proof."""

    source: str
    source_format: str
    target: str
    written: Written
    proof: Proof
    #: the files are at DEST (False: the proof failed and ``force`` was not given)
    moved: bool = False

    def lines(self) -> list[str]:
        """The report ``polytok convert`` prints."""
        w = self.written
        rest = [os.path.relpath(f, w.path) if f.startswith(os.path.join(w.path, "")) else f
                for f in w.files if f != w.path]
        wrote = "wrote" if self.moved else "not written"
        out = [f"{wrote} {w.path}" + (f": {', '.join(rest)}" if rest else "")]
        out += w.notes
        if w.load_options:
            out.append("load options: " + ", ".join(f"{k}={v!r}" for k, v in w.load_options.items()))
        out.append(self.proof.line())
        return out

    def to_json(self) -> dict[str, Any]:
        w = self.written
        return {"source": {"path": self.source, "format": self.source_format}, "target": self.target,
                "moved": self.moved, "written": {"path": w.path, "files": w.files, "notes": w.notes,
                                                 "load_options": w.load_options},
                "proof": self.proof.to_json()}


def read_corpus(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The texts of a corpus file, named ``FILE:LINE``: one text a line, or JSONL objects with ``"text"``.

    The file is JSONL when its first non-empty line is a JSON object with ``"text"`` (a text file whose
    first line is code in braces stays text); empty lines are skipped.

    Raises:
        PolytokError: the file cannot be read, or a JSONL line is no object with a string ``"text"``.
    """
    name = os.fspath(path)
    try:
        lines = Path(name).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise PolytokError(f"{name}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise PolytokError(f"{name}: not UTF-8 text at byte offset {exc.start} ({exc.reason})") from None
    first = next((line for line in lines if line.strip()), "")
    jsonl = _is_record(first)
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if not jsonl:
            out.append((f"{name}:{number}", line))
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PolytokError(f"{name}: line {number}: not JSON ({exc.msg})") from None
        text = record.get("text") if isinstance(record, dict) else None
        if not isinstance(text, str):
            raise PolytokError(f"{name}: line {number}: a JSONL corpus line needs a string \"text\"")
        out.append((f"{name}:{number}", text))
    return out


def _is_record(line: str) -> bool:
    if not line.lstrip().startswith("{"):
        return False
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return False
    return isinstance(record, dict) and "text" in record


def _engine_file(fmt: str, path: str) -> tuple[str, str]:
    """(the format whose engine reads it, the file it reads) for a source or a written path."""
    from ..formats import sniff

    p = Path(path)
    if not p.is_dir():
        return fmt, path
    # a model folder holding only a SentencePiece tokenizer.model is that file to its engine
    return ("sentencepiece" if fmt == "hf" and sniff(p) == "sentencepiece" else fmt), str(folder_file(p))


def _side(fmt: str, path: str, label: str, options: dict[str, Any]) -> tuple[Side, str]:
    """The reference engine of `fmt` on `path`, else polytok's reader of it; and the engine's name."""
    from ..formats import load

    engine = TARGET_ENGINES[fmt]
    proxy: Tokenizer | None
    try:
        proxy = load(path, **options)
    except PolytokError as exc:
        if engine_available(engine) and engine != "tiktoken":
            proxy = None
        else:
            raise PolytokError(f"{path}: polytok cannot read it back ({exc})") from None
    if proxy is not None:  # the proof compares whole texts: no truncation or padding of a tokenizer.json
        proxy.truncation = proxy.padding = None
    if not engine_available(engine):
        assert proxy is not None
        return PolytokSide(proxy, label), "polytok"
    if engine == "llama.cpp":  # its loader's lines on stderr, unless the caller's logging asked for them
        import logging

        logger = logging.getLogger("llama-cpp-python")
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.ERROR)
    side = reference_side(engine, path, label, proxy)
    if isinstance(side, HfSide) and not side.folder:
        side.ref.no_truncation()
        side.ref.no_padding()
    return side, engine


def prove(source: Source, written: Written, corpus: Iterable[tuple[str, str]] = ()) -> Proof:
    """Compare the written file (B) with the source (A) over the built-in texts and `corpus`, in every
    mode both formats have (module notes)."""
    source_fmt, source_file = _engine_file(source.format, source.path)
    target_fmt, target_file = _engine_file(written.target, written.path)
    side_a, engine_a = _side(source_fmt, source_file, "A", {})
    side_b, engine_b = _side(target_fmt, target_file, "B", dict(written.load_options))
    modes, skipped = _runnable(side_a, side_b, [m for m in MODES[source_fmt] if m in MODES[target_fmt]])
    checked = isinstance(written, GgufWritten) and written.report is not None and written.report.check is not None
    items = [*(CHECK_TEXTS if checked else PROOF_TEXTS), *corpus]
    proof = Proof(engine_b, engine_a, len(items), modes, skipped=skipped)
    if checked:
        assert isinstance(written, GgufWritten)
        proof.known = list(written.report.check.differing)
    try:
        for add_special, special in modes:
            proof.reports.append(compare(side_a, side_b, items, add_special=add_special, special=special))
    finally:
        for side in (side_a, side_b):
            close = getattr(side, "close", None)
            if close is not None:
                close()
    return proof


def _runnable(a: Side, b: Side, modes: list[Mode]) -> tuple[list[Mode], list[str]]:
    """The modes both sides run, and why any other was left out.

    An engine may refuse a mode on a file (mistral-common's BOS where the tekken.json
    has no ``<s>``); that mode is left out only where the source adds nothing in it
    (its ids of the empty text are none), else the proof cannot stand and it is an error.
    """
    kept, skipped = [], []
    for add_special, special in modes:
        refused = None
        for side in (a, b):
            try:
                side.encode("", add_special, special)
            except Exception as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                refused = f"{side.engine} raised {type(exc).__name__}: {first}"
                break
        if refused is None:
            kept.append((add_special, special))
            continue
        mode = f"add_special={add_special}, special={special}"
        if add_special and a.encode("", add_special, special) == []:
            skipped.append(f"{mode} not compared: the source adds nothing there and {refused}")
            continue
        raise PolytokError(f"the proof cannot compare {mode}: {refused}")
    return kept, skipped


def convert(src: str | os.PathLike[str], dest: str | os.PathLike[str], to: str | None = None,
            check_corpus: str | os.PathLike[str] | None = None, force: bool = False, *,
            pre: str | None = None, base: str | os.PathLike[str] | None = None,
            like_converter: bool = False) -> ConvertResult:
    """Write `src` as the format `to` (else the one `dest`'s name says) at `dest`, proven first (module notes).

    Args:
        src: a model folder, tokenizer.json, GGUF, SentencePiece or Llama 3 ``.model``, ``.tiktoken``
            or tekken.json.
        dest: the file to write, or the folder for a Hugging Face target.
        to: ``hf``, ``gguf``, ``sentencepiece``, ``tiktoken`` or ``tekken``.
        check_corpus: a file of more texts for the proof (one a line, or JSONL with ``"text"``).
        force: move the files to `dest` even when the proof finds a difference.
        pre, base, like_converter: for a GGUF target only, as `polytok.convert.converter.to_gguf`'s ``pre``,
            ``base_gguf`` and ``like_converter``.

    Returns:
        The `ConvertResult` (``moved`` True).

    Raises:
        ConversionProofError: a text differs (``result`` holds the proof; nothing is at `dest`).
        ConversionRefused: the target format cannot express the source exactly.
        PolytokError: the direction does not exist, the formats are the same, or a file is invalid.
    """
    target = target_of(dest, to)
    if target != "gguf" and (pre is not None or base is not None or like_converter):
        raise PolytokError("--pre, --base and --like-converter apply to a GGUF target only (this conversion "
                           f"writes {target})")
    source = source_of(src, target)
    writer = writer_for(source, target)
    corpus = read_corpus(check_corpus) if check_corpus is not None else []
    options: dict[str, Any] = {k: v for k, v in (("pre", pre), ("base", None if base is None else os.fspath(base)))
                               if v is not None}
    if like_converter:
        options["like_converter"] = True
    if force and "force" in inspect.signature(getattr(writer, "resolve", lambda: writer)()).parameters:
        options["force"] = True  # a writer that can write its nearest form instead of refusing
    final = os.fspath(dest)
    if target == "hf" and Path(final).name == "tokenizer.json":
        final = os.path.dirname(final) or "."
    name = Path(final).resolve().name if final in (".", "..") or not Path(final).name else Path(final).name
    parent = Path(final).resolve().parent
    created = [d for d in (parent, *parent.parents) if not d.exists()]  # removed again if nothing is moved
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".polytok-convert-", dir=parent))
    place = _Place(tmp, name, final)
    moved = False
    try:
        written = writer(source.path, str(tmp / name), **options)
        proof = prove(source, written, corpus)
        result = ConvertResult(source.given, source.format, target, written, proof)
        if not proof.identical and not force:
            result.written = place.renamed(written)
            raise ConversionProofError(proof.line() + f"; nothing written to {final}", result)
        result.written = place.move(written)
        result.moved = moved = True
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for d in created if not moved else []:
            with contextlib.suppress(OSError):
                d.rmdir()


class _Place:
    """Where each file written under ``tmp/name`` goes: the same place under `final` (as the user wrote it)."""

    def __init__(self, tmp: Path, name: str, final: str) -> None:
        self.tmp, self.name, self.final = tmp, name, final

    def of(self, path: str) -> str:
        parts = Path(os.path.relpath(path, self.tmp)).parts
        if parts and parts[0] == self.name:
            return os.path.join(self.final, *parts[1:]) if parts[1:] else self.final
        return os.path.join(os.path.dirname(self.final), *parts)

    def renamed(self, written: Written) -> Written:
        from dataclasses import replace

        return replace(written, path=self.of(written.path), files=[self.of(f) for f in written.files])

    def move(self, written: Written) -> Written:
        for f in written.files or [written.path]:
            inner = sorted(p for p in Path(f).rglob("*") if not p.is_dir()) if Path(f).is_dir() else [Path(f)]
            for file in inner:
                to = Path(self.of(str(file)))
                to.parent.mkdir(parents=True, exist_ok=True)
                os.replace(file, to)
        return self.renamed(written)
