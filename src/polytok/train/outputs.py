"""A trained tokenizer written in any format polytok writes, each file checked by its reference engine.

`save_trained` writes a `TrainedTokenizer` (a tokenizer.json model: BPE, WordPiece,
WordLevel), `save_sentencepiece` the ``.model`` bytes of SentencePiece's trainers. The
format is `format` when given, else what the path's name says (`output_format`):

- ``*.json``: the ``tokenizer.json`` file;
- a folder (an existing one, a path ending in ``/``, a name without a suffix): what
  transformers 5's ``save_pretrained`` writes for a tokenizers-backed tokenizer,
  ``tokenizer.json`` and ``tokenizer_config.json`` (the special tokens' roles; it
  writes no ``special_tokens_map.json``);
- ``*.model``: SentencePiece; a tokenizer.json model through `polytok.convert`'s
  tokenizer.json → ``.model`` writer (``hf_to_spm``), which refuses what a ``.model``
  cannot express;
- ``*.gguf``: through `polytok.convert.convert` from a model folder whose
  ``config.json`` names the architecture: ``GPT2LMHeadModel`` for a byte-level BPE,
  ``LlamaForCausalLM`` for another BPE and for a SentencePiece model, ``BertModel``
  for WordPiece (`gguf_architecture`);
- ``*.tiktoken``: a byte-level BPE through ``convert/to_tiktoken.py``.

Every file is written into a temporary folder beside the path and checked before it is
moved there. A file polytok writes itself (tokenizer.json, the folder, a trained
``.model``) is loaded by its reference engine (HF tokenizers, transformers for a
folder, sentencepiece; polytok's reader when the engine is not installed) and compared
with the trained tokenizer, in each mode the format has, over ``convert``'s proof texts
and `corpus` (`sample_corpus`: the first documents of the training files); the
result is a `polytok.convert.proof.Proof`. A conversion through `convert` is checked
by convert's own proof, on the same corpus, after the tokenizer.json it starts from
was checked as above. A difference raises `OutputCheckError` (or convert's
`ConversionProofError`) naming the first differing text, and nothing is left at the
path, unless ``force``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..convert.outcome import ConversionRefused
from ..convert.proof import MODES, TARGET_ENGINES, ConversionProofError, Proof, convert, engine_available
from ..convert.texts import PROOF_TEXTS
from ..errors import PolytokError
from ..parity.compare import compare
from ..parity.engines import HfSide, PolytokSide, Side, reference_side
from ..tokenizer import Tokenizer
from .pipeline import TrainedTokenizer

if TYPE_CHECKING:
    from ..convert.proof import ConvertResult

__all__ = ["OUTPUT_FORMATS", "SaveResult", "OutputCheckError", "output_format", "gguf_architecture",
           "sample_corpus", "save_trained", "save_sentencepiece"]

#: the formats a trained tokenizer is written as (``format=`` of `save_trained`)
OUTPUT_FORMATS = ("tokenizer.json", "folder", "sentencepiece", "gguf", "tiktoken")
#: how many documents of the training files `sample_corpus` takes by default
SAMPLE_LINES = 200
# the reference engine's format (`polytok.convert.proof.MODES`) of each file polytok checks itself
_ENGINE_FORMAT = {"tokenizer.json": "hf", "folder": "hf", "sentencepiece": "sentencepiece"}
# the tokenizer_config.json role of a special token, by its spelling
_ROLES = {"[UNK]": "unk_token", "<unk>": "unk_token", "[CLS]": "cls_token", "[SEP]": "sep_token",
          "[PAD]": "pad_token", "<pad>": "pad_token", "[MASK]": "mask_token", "<mask>": "mask_token",
          "<s>": "bos_token", "</s>": "eos_token", "<|endoftext|>": "eos_token"}


class OutputCheckError(PolytokError):
    """The written file does not tokenize as the trained tokenizer; ``result`` holds the check (nothing written)."""

    def __init__(self, message: str, result: SaveResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class SaveResult:
    """What was written where, and the checks it passed (or failed, with ``force``)."""

    path: str
    format: str
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: polytok's own checks: the trained tokenizer against the reference engine on each file it wrote
    proofs: list[Proof] = field(default_factory=list)
    #: the conversion the file went through, with convert's proof
    conversion: ConvertResult | None = None
    #: the files are at ``path``
    moved: bool = False

    @property
    def identical(self) -> bool:
        converted = self.conversion is None or self.conversion.proof.identical
        return converted and all(p.identical for p in self.proofs)

    def lines(self) -> list[str]:
        """The report ``polytok train`` prints."""
        out = [f"{'wrote' if self.moved else 'not written'} {self.path} ({self.format})", *self.notes]
        out += [p.line() for p in self.proofs]
        if self.conversion is not None:
            out += ["convert: " + line for line in self.conversion.lines()[1:]]
        return out


def output_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """`format` when given, else the one `path`'s name says (module notes)."""
    if format is not None:
        if format not in OUTPUT_FORMATS:
            raise PolytokError(f"format {format!r} is not one a trained tokenizer is written as "
                               f"({', '.join(OUTPUT_FORMATS)})")
        return format
    given = os.fspath(path)
    name = Path(given).name.lower()
    if name.endswith(".json"):
        return "tokenizer.json"
    if name.endswith(".model"):
        return "sentencepiece"
    if name.endswith(".gguf"):
        return "gguf"
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if Path(given).is_dir() or given.endswith(("/", os.sep)) or "." not in name:
        return "folder"
    raise PolytokError(f"{given}: its name does not say which format to write (a .json, .model, .gguf, "
                       ".tiktoken or a folder)")


def gguf_architecture(data: dict[str, Any]) -> str:
    """The ``config.json`` architecture a GGUF of the tokenizer.json `data` is converted as (module notes)."""
    kind = (data.get("model") or {}).get("type")
    if kind == "WordPiece":
        return "BertModel"
    if kind == "BPE":
        return "GPT2LMHeadModel" if "ByteLevel" in json.dumps(data.get("pre_tokenizer")) else "LlamaForCausalLM"
    raise PolytokError(f"a {kind} model has no GGUF form llama.cpp reads (BPE, WordPiece and SentencePiece "
                       "models have)")


def sample_corpus(files: Iterable[str], field: str = "text", column: str = "text",
                  limit: int = SAMPLE_LINES) -> list[tuple[str, str]]:
    """The first `limit` documents of the training `files`, named ``FILE:N``, as the corpus readers read them."""
    from ..corpus.readers import read_split
    from .corpus_counts import plan_splits

    out: list[tuple[str, str]] = []
    per_file: dict[str, int] = {}
    for split in plan_splits(list(files), column=column):
        docs, _, _ = read_split(split, field, column)
        for doc in docs:
            if len(out) >= limit:
                return out
            per_file[split.path] = number = per_file.get(split.path, 0) + 1
            out.append((f"{split.path}:document {number}", doc))
    return out


def save_trained(trained: TrainedTokenizer, path: str | os.PathLike[str], format: str | None = None, *,
                 corpus: Iterable[tuple[str, str]] = (), force: bool = False) -> SaveResult:
    """Write `trained` at `path` as `format` (else the one the name says), checked (module notes).

    Raises:
        OutputCheckError, ConversionProofError: the written file tokenizes differently (nothing is at `path`).
        ConversionRefused: the format cannot express the tokenizer.
        PolytokError: the name says no format, or the format does not hold this model kind.
    """
    fmt = output_format(path, format)
    texts = list(corpus)
    with _staging(path) as (stage, final):
        staged = stage / "tokenizer"
        staged.mkdir()
        json_path = staged / "tokenizer.json"
        trained.save(json_path)
        result = SaveResult(final, fmt)
        _check(result, trained, "hf", str(json_path), texts, force)
        if fmt == "tokenizer.json":
            return _moved(result, {str(json_path): final})
        if fmt == "folder":
            (staged / "tokenizer_config.json").write_text(_tokenizer_config(trained), encoding="utf-8")
            _check(result, trained, "hf", str(staged), texts, force)
            return _moved(result, {str(staged): final})
        source = str(json_path)
        if fmt == "gguf":
            architecture = gguf_architecture(trained.data)
            (staged / "tokenizer_config.json").write_text(_tokenizer_config(trained), encoding="utf-8")
            _write_config(staged, architecture)
            result.notes.append(f"config.json architectures: {architecture} (the converter family of a "
                                f"{trained.data['model']['type']} model)")
            source = str(staged)
        return _converted(result, source, final, fmt, stage, texts, force)


def save_sentencepiece(model: bytes, path: str | os.PathLike[str], format: str | None = None, *,
                       corpus: Iterable[tuple[str, str]] = (), force: bool = False) -> SaveResult:
    """Write the SentencePiece `model` (``.model`` bytes) at `path` as `format`, checked (module notes).

    A tokenizer.json or folder goes through `convert`'s ``.model`` → Hugging Face writer,
    a GGUF through a folder holding it as ``tokenizer.model`` (Llama's SentencePiece path).

    Raises:
        as `save_trained`; a tiktoken file is refused (it holds byte-level BPE ranks only).
    """
    from ..formats import load

    fmt = output_format(path, format)
    if fmt == "tiktoken":
        raise PolytokError(f"{os.fspath(path)}: a tiktoken file holds byte-level BPE ranks; a SentencePiece model "
                           "is written as .model, tokenizer.json, a folder or .gguf")
    texts = list(corpus)
    with _staging(path) as (stage, final):
        original = stage / "trained.model"
        original.write_bytes(model)
        trained = load(original)
        result = SaveResult(final, fmt)
        folder = stage / "tokenizer"
        folder.mkdir()
        written = folder / "tokenizer.model"
        written.write_bytes(model)
        _check(result, trained, "sentencepiece", str(written), texts, force)
        if fmt == "sentencepiece":
            return _moved(result, {str(written): final})
        if fmt == "gguf":
            _write_config(folder, "LlamaForCausalLM")
            result.notes.append("config.json architectures: LlamaForCausalLM (the converter family of a "
                                "SentencePiece model)")
            return _converted(result, str(folder), final, "gguf", stage, texts, force)
        hf = stage / "hf"
        _converted(result, str(written), str(hf), "hf", stage, texts, force)
        result.files, result.moved = [], False  # converted into the staging folder, not yet at `path`
        _check(result, trained, "hf", str(hf / "tokenizer.json"), texts, force)
        if fmt == "tokenizer.json":
            return _moved(result, {str(hf / "tokenizer.json"): final})
        return _moved(result, {str(hf): final})


def _check(result: SaveResult, trained: Tokenizer, engine_format: str, path: str, corpus: list[tuple[str, str]],
           force: bool) -> None:
    """Compare `trained` with the reference engine of `engine_format` on `path`; raise unless identical or `force`."""
    proof = _prove(trained, engine_format, path, corpus)
    result.proofs.append(proof)
    if not proof.identical and not force:
        raise OutputCheckError(f"{proof.line()}; nothing written to {result.path}", result)


def _prove(trained: Tokenizer, engine_format: str, path: str, corpus: list[tuple[str, str]]) -> Proof:
    """The trained tokenizer (A) against the file at `path` read by its reference engine (B), as convert's proof."""
    from ..formats import load

    a = copy.copy(trained)
    a.truncation = a.padding = None  # whole texts are compared
    side_a: Side = PolytokSide(a, "A")
    side_a.engine = "trained"
    proxy = load(path)
    proxy.truncation = proxy.padding = None
    engine = TARGET_ENGINES[engine_format]
    side_b: Side
    if engine_available(engine):
        side_b = reference_side(engine, path, "B", proxy)
        if isinstance(side_b, HfSide) and not side_b.folder:
            side_b.ref.no_truncation()
            side_b.ref.no_padding()
        name = side_b.engine
    else:
        side_b, name = PolytokSide(proxy, "B"), "polytok"
    items = [*PROOF_TEXTS, *corpus]
    # the modes of the trained model's own format too (a SentencePiece model adds nothing and parses no markers)
    own = MODES["sentencepiece" if trained.facts.format == "sentencepiece" else "hf"]
    modes = [m for m in MODES[engine_format] if m in own]
    proof = Proof(name, "the trained tokenizer (polytok)", len(items), modes)
    for add_special, special in modes:
        proof.reports.append(compare(side_a, side_b, items, add_special=add_special, special=special))
    return proof


def _converted(result: SaveResult, source: str, final: str, target: str, stage: Path,
               corpus: list[tuple[str, str]], force: bool) -> SaveResult:
    """`convert` `source` to `final` as `target`, with `corpus` for its proof; the result records it."""
    corpus_file = stage / "corpus.jsonl"
    corpus_file.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for _, t in corpus)
                           or json.dumps({"text": ""}) + "\n", encoding="utf-8")
    try:
        converted = convert(source, final, to=target, check_corpus=str(corpus_file), force=force)
    except ConversionProofError as exc:
        result.conversion = exc.result
        raise
    except ConversionRefused as exc:  # named as the user knows it, not by the staged file
        raise ConversionRefused(f"the trained tokenizer (for {final})", target, exc.reasons) from None
    except PolytokError as exc:
        if str(stage) not in str(exc):
            raise
        raise PolytokError(f"{final}: " + str(exc).replace(source, "the trained tokenizer")
                           .replace(str(stage), "(staging)")) from None
    result.conversion = converted
    result.files = list(converted.written.files)
    result.moved = converted.moved
    return result


def _moved(result: SaveResult, moves: dict[str, str]) -> SaveResult:
    """Move each staged file or folder to its final place (a folder's files into the folder there)."""
    for staged, final in moves.items():
        if Path(staged).is_dir():
            Path(final).mkdir(parents=True, exist_ok=True)
            for inner in sorted(Path(staged).iterdir()):
                os.replace(inner, Path(final) / inner.name)
                result.files.append(str(Path(final) / inner.name))
        else:
            os.replace(staged, final)
            result.files.append(final)
    result.moved = True
    return result


@contextlib.contextmanager
def _staging(path: str | os.PathLike[str]) -> Iterator[tuple[Path, str]]:
    """A temporary folder beside `path` (removed afterwards, with the parent folders made for it when nothing was
    written), and `path` as given."""
    final = os.fspath(path).rstrip("/" + os.sep) or os.fspath(path)
    parent = Path(final).resolve().parent
    created = [d for d in (parent, *parent.parents) if not d.exists()]
    parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".polytok-train-", dir=parent))
    try:
        yield stage, final
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        if not os.path.exists(final):
            for d in created:
                with contextlib.suppress(OSError):
                    d.rmdir()


def _tokenizer_config(trained: Tokenizer) -> str:
    """``tokenizer_config.json`` as transformers 5's ``save_pretrained`` writes it for this tokenizer.json."""
    config: dict[str, Any] = {"backend": "tokenizers", "model_max_length": int(1e30),
                              "tokenizer_class": "TokenizersBackend"}
    data = trained.data if isinstance(trained, TrainedTokenizer) else {}
    specials = [t["content"] for t in data.get("added_tokens") or [] if t.get("special")]
    for content in specials:
        role = _ROLES.get(content)
        if role is not None and role not in config:
            config[role] = content
    return json.dumps(dict(sorted(config.items())), ensure_ascii=False, indent=2) + "\n"


def _write_config(folder: Path, architecture: str) -> None:
    (folder / "config.json").write_text(json.dumps({"architectures": [architecture]}, indent=2) + "\n",
                                        encoding="utf-8")
