"""Token redefinitions: a model folder's config giving a SentencePiece id a new text.

A chat fine-tune may keep the base ``tokenizer.model`` and rename some of its
pieces in ``tokenizer_config.json`` (``added_tokens_decoder``), ``added_tokens.json``
or ``tokenizer.json`` (``added_tokens``): Snowflake Arctic Instruct turns 弘/给
(31998/31999) into ``<|im_start|>``/``<|im_end|>``; InternLM2 chat turns
``[UNUSED_TOKEN_141]`` … ``[UNUSED_TOKEN_146]`` (92538–92543) into ``<|plugin|>`` …
``<|im_start|>``. The new text replaces the old piece at the same id; it is never
appended as a new id (transformers 5.24's AutoTokenizer does append such entries,
as 32000/32001 outside a 32,000-row model; polytok does not copy that).

The rules are llama.cpp's converter, llama-cpp-python 0.3.36 sdist, one per
model family (the architecture named in ``config.json``):

- ``generic``: ``conversion/base.py`` ``TextModel._create_vocab_sentencepiece``
  (lines 2093-2181): ``added_tokens.json`` ids become USER_DEFINED, score -1000;
  each ``added_tokens_decoder`` entry becomes CONTROL when ``special`` or when the
  text looks special (``does_token_look_special``, line 1557), else USER_DEFINED
  with U+2581 replaced by a space; score -1000. Ids past the vocabulary are only
  a warning there; here they are a `FormatError` naming the file and key.
- ``arctic``: ``conversion/arctic.py`` ``ArcticModel.set_vocab``: only
  ``added_tokens_decoder``; a special entry is CONTROL (UNKNOWN when it is the
  config's ``unk_token``) with score 0.0, any other USER_DEFINED with -10000.0.
- ``internlm2``: ``conversion/internlm.py`` ``InternLM2Model.set_vocab``: a
  ``\\x00`` piece becomes 🐉, pieces starting ``[UNUSED`` are UNUSED,
  ``added_tokens.json`` keys are appended, then ``added_tokens_decoder`` and
  ``tokenizer.json`` ``added_tokens`` entries become USER_DEFINED (CONTROL when
  special), score -1000; the ``<|im_end|>`` id becomes the EOS.

No type is protected from being overwritten: every rule replaces whatever the
id held; the converter only skips its "replacing token" warning for an UNUSED
slot. `apply` returns every change as a `Redefinition` (what ``polytok convert``
reports). `read_sentencepiece_folder` loads such a folder: the same rule is
applied to the parsed model before it is built (only to the ids it gives a new
text: the rest load as sentencepiece has them), so under ``special="parse"``
``<|im_start|>`` is its one redefined id.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..facts import ChatFacts, NamedToken
from ..tokenizer import Tokenizer
from . import folder as folder_files
from .chat_templates import folder_templates
from .compressed import read_bytes

__all__ = ["Redefinition", "SpmVocab", "apply", "looks_special", "rule_for", "read_sentencepiece_folder",
           "TYPE_NAMES"]

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
TYPE_NAMES = {NORMAL: "NORMAL", UNKNOWN: "UNKNOWN", CONTROL: "CONTROL", USER_DEFINED: "USER_DEFINED",
              UNUSED: "UNUSED", BYTE: "BYTE"}
_CONFIG = "tokenizer_config.json"
# the files beside tokenizer.model a rule may read
_CONFIG_FILES = (_CONFIG, "added_tokens.json", "tokenizer.json", "config.json")
# config.json architectures whose converter has its own SentencePiece rule
_RULES = {"ArcticForCausalLM": "arctic", "InternLM2ForCausalLM": "internlm2"}


@dataclass(frozen=True)
class Redefinition:
    """One id whose text the folder's config changes (or, for InternLM2, appends)."""

    id: int
    old: str | None
    new: str
    type: str
    source: str


@dataclass
class SpmVocab:
    """A SentencePiece vocabulary as llama.cpp's converter writes it."""

    tokens: list[str]
    scores: list[float]
    types: list[int]
    rule: str
    redefinitions: list[Redefinition] = field(default_factory=list)
    eos_override: int | None = None


def looks_special(text: str) -> bool:
    """llama.cpp's ``does_token_look_special`` (conversion/base.py, line 1557)."""
    return (text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]") or (text.startswith("<|") and text.endswith("|>"))
            or (text.startswith("<｜") and text.endswith("｜>"))
            or (text.startswith("<unused") and text.endswith(">")))


def rule_for(architecture: str | None) -> str:
    """The redefinition rule of a ``config.json`` architecture (``generic`` by default)."""
    return _RULES.get(architecture or "", "generic")


def read_json_file(path: Path) -> Any:
    """A JSON file (gzip-compressed or not), or a `FormatError` naming it."""
    return folder_files.parse_json(path)


def _optional_object(folder: Path, name: str) -> dict[str, Any] | None:
    return folder_files.read_object(folder, name)


def _entries(folder: Path) -> list[tuple[int, str, bool, str]]:
    """``added_tokens_decoder`` of tokenizer_config.json as (id, content, special, key)."""
    path = folder_files.where(folder, "tokenizer_config.json")
    config = _optional_object(folder, "tokenizer_config.json") or {}
    decoder = config.get("added_tokens_decoder", {})
    if not isinstance(decoder, dict):
        raise FormatError("expected an object", file=str(path), key="added_tokens_decoder")
    out = []
    for key, entry in decoder.items():
        where = f"added_tokens_decoder.{key}"
        if not str(key).isdigit():
            raise FormatError("expected a token id", file=str(path), key=where)
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise FormatError("expected an object with a string 'content'", file=str(path), key=where)
        out.append((int(key), entry["content"], bool(entry.get("special")), where))
    return out


def _legacy_added(folder: Path) -> list[tuple[str, int]]:
    path = folder_files.where(folder, "added_tokens.json")
    data = _optional_object(folder, "added_tokens.json") or {}
    for text, id_ in data.items():
        if not isinstance(id_, int) or isinstance(id_, bool) or id_ < 0:
            raise FormatError("expected a non-negative token id", file=str(path), key=text)
    return list(data.items())


def _json_added(folder: Path) -> list[tuple[int, str, bool, str]]:
    path = folder_files.where(folder, "tokenizer.json")
    data = _optional_object(folder, "tokenizer.json") or {}
    out = []
    for n, entry in enumerate(data.get("added_tokens") or []):
        where = f"added_tokens[{n}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str) \
                or not isinstance(entry.get("id"), int):
            raise FormatError("expected an object with an integer 'id' and a string 'content'", file=str(path),
                              key=where)
        out.append((entry["id"], entry["content"], bool(entry.get("special")), where))
    return out


def _check_id(id_: int, size: int, folder: Path, file: str, key: str) -> None:
    if not 0 <= id_ < size:
        raise FormatError(f"token id {id_} is outside the vocabulary (0..{size - 1}): a redefinition must name "
                          "an existing id", file=str(folder_files.where(folder, file)), key=key)


def _set(vocab: SpmVocab, id_: int, text: str, score: float, type_: int, source: str) -> None:
    old = vocab.tokens[id_]
    if old != text:
        vocab.redefinitions.append(Redefinition(id_, old, text, TYPE_NAMES[type_], source))
    vocab.tokens[id_], vocab.scores[id_], vocab.types[id_] = text, score, type_


def _generic(vocab: SpmVocab, folder: Path) -> None:
    for text, id_ in _legacy_added(folder):
        _check_id(id_, len(vocab.tokens), folder, "added_tokens.json", text)
        _set(vocab, id_, text, -1000.0, USER_DEFINED, "added_tokens.json")
    for id_, text, special, key in _entries(folder):
        _check_id(id_, len(vocab.tokens), folder, "tokenizer_config.json", key)
        if special or looks_special(text):
            _set(vocab, id_, text, -1000.0, CONTROL, f"tokenizer_config.json {key}")
        else:
            _set(vocab, id_, text.replace("\u2581", " "), -1000.0, USER_DEFINED, f"tokenizer_config.json {key}")


def _arctic(vocab: SpmVocab, folder: Path) -> None:
    config = _optional_object(folder, "tokenizer_config.json") or {}
    for id_, text, special, key in _entries(folder):
        _check_id(id_, len(vocab.tokens), folder, "tokenizer_config.json", key)
        if special:
            type_ = UNKNOWN if text == config.get("unk_token") else CONTROL
            _set(vocab, id_, text, 0.0, type_, f"tokenizer_config.json {key}")
        else:
            _set(vocab, id_, text, -10000.0, USER_DEFINED, f"tokenizer_config.json {key}")


def _internlm2(vocab: SpmVocab, folder: Path) -> None:
    for n, text in enumerate(vocab.tokens):
        if text == "\x00":
            vocab.tokens[n] = "\U0001f409"
        if text.startswith("[UNUSED"):
            vocab.types[n] = UNUSED
    for text, _ in _legacy_added(folder):
        vocab.redefinitions.append(Redefinition(len(vocab.tokens), None, text, "USER_DEFINED", "added_tokens.json"))
        vocab.tokens.append(text)
        vocab.scores.append(-1000.0)
        vocab.types.append(USER_DEFINED)
    named = [(e, "tokenizer_config.json") for e in _entries(folder)] + [(e, "tokenizer.json") for e in
                                                                        _json_added(folder)]
    for (id_, text, special, key), file in named:
        _check_id(id_, len(vocab.tokens), folder, file, key)
        if text == "<|im_end|>":
            vocab.eos_override = id_
        _set(vocab, id_, text, -1000.0, CONTROL if special else USER_DEFINED, f"{file} {key}")


def apply(vocab: SpmVocab, folder: str | Path) -> SpmVocab:
    """Apply `vocab.rule`'s redefinitions from `folder`'s config files to `vocab` (in place).

    Raises:
        FormatError: a config file is not valid JSON or names an id outside the vocabulary.
    """
    {"generic": _generic, "arctic": _arctic, "internlm2": _internlm2}[vocab.rule](vocab, Path(folder))
    return vocab


def folder_architecture(folder: Path) -> str | None:
    """``architectures[0]`` of the folder's ``config.json`` (None when absent)."""
    config = _optional_object(folder, "config.json") or {}
    archs = config.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        return archs[0]
    return None


def read_sentencepiece_folder(model: Path, **options: Any) -> Tokenizer:
    """A folder's ``tokenizer.model`` with the folder's redefinitions applied (module notes).

    Without a ``tokenizer_config.json`` or ``added_tokens.json`` beside it, the model loads
    exactly as the lone file does.
    """
    from ._sentencepiece_build import build_tokenizer
    from .sentencepiece import read_model_proto, read_sentencepiece

    folder = model.parent
    if not any(folder_files.find(folder, f) for f in ("tokenizer_config.json", "added_tokens.json")):
        return read_sentencepiece(model, **options)
    if options:
        raise FormatError(f"the sentencepiece reader takes no options (got {', '.join(sorted(options))})",
                          file=str(model))
    proto = read_model_proto(read_bytes(model), str(model))
    vocab = apply(SpmVocab(list(proto.pieces), list(proto.scores), list(proto.types),
                           rule_for(folder_architecture(folder))), folder)
    # only the ids given a new text change; an entry repeating a piece's text (Llama-2's
    # <unk>/<s>/</s>) leaves it as sentencepiece has it
    for i, (old, new) in enumerate(zip(proto.pieces, vocab.tokens)):
        if old == new:
            vocab.scores[i], vocab.types[i] = proto.scores[i], proto.types[i]
    proto.pieces, proto.scores, proto.types = vocab.tokens, vocab.scores, vocab.types
    tok = build_tokenizer(proto)
    facts = tok.facts
    named, eog = dict(facts.named_tokens), facts.eog_ids
    if vocab.eos_override is not None:
        named["eos"] = NamedToken(vocab.tokens[vocab.eos_override], vocab.eos_override)
        eog = frozenset({vocab.eos_override})
    read = [folder_files.find(folder, name) for name in _CONFIG_FILES]
    tok.facts = replace(facts, source=str(folder), files=facts.files + tuple(str(p) for p in read if p is not None),
                        named_tokens=named, eog_ids=eog,
                        chat=ChatFacts(templates=folder_templates(folder, _optional_object(folder, _CONFIG) or {})),
                        details={**facts.details, "redefinitions": [r.__dict__ for r in vocab.redefinitions]})
    return tok
