"""A byte-level BPE source read for writing as tiktoken ranks or a tekken.json.

Reads a ``tokenizer.json`` (a file, or a folder holding one; HF tokenizers 0.23.3 semantics), a GGUF
whose vocabulary is byte-level BPE (llama.cpp, llama-vocab.cpp ``impl::load`` and the
``llm_tokenizer_bpe`` constructor), or a tiktoken rank file (read by `polytok.formats.tiktoken`,
for the identity). Whatever tiktoken cannot do -- a normalizer, a pre-tokenizer that is not one
regex split of the pieces tiktoken's pattern makes, affixes, dropout, byte fallback, added tokens
that strip white space or match whole words only -- is a refusal reason; the merges are checked
by `to_tiktoken_ranks`.

The pattern, by pre-tokenizer:

- ``ByteLevel(add_prefix_space=false, use_regex=true)``: GPT-2's regex (HF byte_level.rs ``RE``),
  written as tiktoken's r50k_base spells it (`regex.split_patterns.R50K`: the same matches);
- ``Sequence[Split(Regex, Isolated or Removed+invert), ByteLevel(add_prefix_space=false,
  use_regex=false)]``: the Split's regex as it is. tiktoken keeps only the matches (``find_iter``),
  as ``Removed`` with ``invert`` does; ``Isolated`` keeps the text between matches too, which every
  known pattern leaves none of (its last alternatives take any white space and any other character);
- GGUF: the one regex of its pre type, when llama.cpp runs it with a hand-written splitter that is
  that regex rule for rule (src/unicode.cpp ``unicode_regex_split_custom``: GPT-2's, written as
  r50k_base's pattern, whose ``\\s`` tail llama.cpp's splitter adds; Llama 3's two spellings;
  Qwen2's; Qwen3.5's). Its categories come from llama.cpp's Unicode 15.1 tables, tiktoken's from
  the ``regex`` crate's: a code point whose category changed between them splits differently.
  Any other regex llama.cpp runs with ``std::regex`` over its collapsed categories
  (`pre_tokenizers.llama_regex_split`), and a list of several is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import FormatError
from ..formats.compressed import read_bytes
from ..formats.folder import parse_json_bytes
from ..formats.gguf import read_gguf_vocab
from ..formats.gguf_token_attrs import ATTR_CONTROL, ATTR_LSTRIP, ATTR_RSTRIP, ATTR_UNKNOWN, ATTR_USER_DEFINED
from ..regex.split_patterns import GPT2, R50K
from ..text.byte_alphabet import CHARS_TO_BYTES

__all__ = ["ByteLevelSource", "read_source", "token_bytes_of"]

_GGUF_MAGIC = b"GGUF"
_LLAMA_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_LLAMA3_TAIL = "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
# llama-vocab.cpp regexes with a hand-written splitter (unicode.cpp unicode_regex_split_custom) -> tiktoken's pattern
_GGUF_PATTERNS = {
    GPT2.removesuffix("|\\s+"): R50K,
    _LLAMA_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+" + _LLAMA3_TAIL: None,
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+" + _LLAMA3_TAIL: None,
    _LLAMA_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+" + _LLAMA3_TAIL.replace("{1,3}", "", 1): None,
    _LLAMA_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": None,
}
_SPECIAL_ATTRS = ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_UNKNOWN


@dataclass
class ByteLevelSource:
    """A byte-level BPE as tiktoken would need it: tokens as bytes at their ids, merges in order."""

    path: str
    #: ``{token_bytes: id}`` of the tokens merges make (the special tokens left out)
    ranks: dict[bytes, int] = field(default_factory=dict)
    #: the merge list, first merged first, each pair once
    merges: list[tuple[bytes, bytes]] = field(default_factory=list)
    #: each merge's index in the file (where a pair listed twice took its place)
    merge_lines: list[int] = field(default_factory=list)
    ignore_merges: bool = False
    pattern: str | None = None
    #: ``{text: id}``: added tokens / control and user-defined tokens, matched in the text
    specials: dict[str, int] = field(default_factory=dict)
    #: the added tokens the source matches in any text, not only when parsing special tokens
    #: (HF ``special: false``, GGUF ``USER_DEFINED``)
    always_matched: set[str] = field(default_factory=set)
    #: a special token's bytes where the vocabulary also holds it (at the special's id)
    special_bytes: dict[bytes, int] = field(default_factory=dict)
    #: what the source does that tiktoken cannot, one line each
    reasons: list[str] = field(default_factory=list)
    #: what the conversion leaves out without changing ids (a post-processor, for one)
    notes: list[str] = field(default_factory=list)
    #: the ranks are exactly a tiktoken file's (the source is one): nothing to check
    from_ranks: bool = False


def token_bytes_of(piece: str) -> bytes | None:
    """The bytes a GPT-2 byte-alphabet piece spells, or None if it has another character."""
    try:
        return bytes([CHARS_TO_BYTES[c] for c in piece])
    except KeyError:
        return None


def read_source(source: str) -> ByteLevelSource:
    """Read `source`: a tokenizer.json, a folder with one, a byte-level BPE GGUF or a tiktoken file.

    Raises:
        FormatError: the file cannot be read.
    """
    path = Path(source)
    if path.is_dir():
        found = [path / name for name in ("tokenizer.json", "tokenizer.json.gz") if (path / name).is_file()]
        if not found:
            raise FormatError("no tokenizer.json in this folder", file=str(path))
        path = found[0]
    with open(path, "rb") as f:
        head = f.read(4)
    if head == _GGUF_MAGIC:
        return _read_gguf(path)
    raw = read_bytes(path)
    if raw.lstrip()[:1] == b"{":
        return _read_tokenizer_json(path, parse_json_bytes(raw, str(path)))
    return _read_rank_file(path)


def _read_rank_file(path: Path) -> ByteLevelSource:
    from .. import load
    from ..formats.tiktoken import mergeable_ranks

    tok = load(path)
    if tok.facts.format != "tiktoken":
        raise FormatError(f"expected a tokenizer.json, a GGUF or tiktoken ranks, found {tok.facts.format}",
                          file=str(path))
    return ByteLevelSource(str(path), ranks=mergeable_ranks(tok), ignore_merges=True, pattern=tok.facts.pattern,
                           specials=dict(tok.added.content_to_id), from_ranks=True)


def _read_tokenizer_json(path: Path, data: Any) -> ByteLevelSource:
    out = ByteLevelSource(str(path))
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise FormatError("expected an object with a model", file=str(path), key="model")
    model = data["model"]
    if model.get("type", "BPE") != "BPE" or "merges" not in model:
        out.reasons.append(f"the model is {model.get('type')}, not BPE")
        return out
    if "ByteLevel" not in _kind(data.get("pre_tokenizer")):
        out.reasons.append(f"not a byte-level BPE: the pre-tokenizer is {_kind(data.get('pre_tokenizer'))}")
        return out
    if data.get("normalizer") is not None:
        out.reasons.append(f"a normalizer ({_kind(data['normalizer'])}): tiktoken has none")
    out.pattern = _hf_pattern(data.get("pre_tokenizer"), out.reasons)
    if '"Isolated"' in json.dumps(data.get("pre_tokenizer")):
        out.notes.append("the Split keeps text between its matches (Isolated), tiktoken drops it: the ids are "
                         "the same while the pattern matches every character (the known patterns end with "
                         "alternatives taking any white space and any other character)")
    _hf_model_options(model, out)
    _hf_added(data.get("added_tokens") or [], out)
    if out.always_matched:
        out.notes.append(f"{len(out.always_matched)} added tokens are not special (matched in any text by the "
                         "source): tiktoken matches them only in encode(allowed_special=...), not encode_ordinary")
    _hf_vocab(model, out)
    if data.get("post_processor") is not None:
        out.notes.append(f"the post-processor ({_kind(data['post_processor'])}) is not written: tiktoken adds "
                         "no tokens; ids are the source's with add_special_tokens=False")
    return out


def _kind(component: Any) -> str:
    if not isinstance(component, dict):
        return repr(component)[:40]
    kind = str(component.get("type"))
    inner = component.get("normalizers") or component.get("pretokenizers") or component.get("processors")
    return f"{kind}[{', '.join(_kind(c) for c in inner)}]" if isinstance(inner, list) else kind


def _hf_pattern(pre: Any, reasons: list[str]) -> str | None:
    steps = pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]
    if not isinstance(steps, list):
        steps = [pre]
    if len(steps) == 1 and _byte_level(steps[0], use_regex=True):
        return R50K
    if len(steps) == 2 and _byte_level(steps[1], use_regex=False) and isinstance(steps[0], dict) \
            and steps[0].get("type") == "Split":
        split = steps[0]
        regex = split.get("pattern", {}).get("Regex") if isinstance(split.get("pattern"), dict) else None
        kept = (split.get("behavior"), bool(split.get("invert"))) in (("Isolated", False), ("Removed", True))
        if isinstance(regex, str) and kept:
            return regex
        reasons.append(f"the Split keeps {split.get('behavior')} (invert {split.get('invert')}) of "
                       f"{split.get('pattern')!r:.60}: tiktoken keeps each match of one regex")
        return None
    reasons.append(f"the pre-tokenizer {_kind(pre)} is not one regex split and ByteLevel (tiktoken's pattern "
                   "takes exactly that); ByteLevel needs add_prefix_space false")
    return None


def _byte_level(step: Any, *, use_regex: bool) -> bool:
    return (isinstance(step, dict) and step.get("type") == "ByteLevel" and step.get("add_prefix_space") is False
            and step.get("use_regex", True) is use_regex)


def _hf_model_options(model: dict[str, Any], out: ByteLevelSource) -> None:
    if model.get("dropout"):
        out.reasons.append(f"BPE dropout {model['dropout']} (random merges)")
    for affix in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(affix):
            out.reasons.append(f"BPE {affix} {model[affix]!r}: tiktoken merges bytes only")
    if model.get("byte_fallback"):
        out.reasons.append("BPE byte_fallback: a byte-level vocabulary has no <0xHH> tokens")
    out.ignore_merges = bool(model.get("ignore_merges"))


def _hf_added(added: list[Any], out: ByteLevelSource) -> None:
    stripping = []
    for i, token in enumerate(added):
        if not isinstance(token, dict) or not isinstance(token.get("content"), str) or type(token.get("id")) is not int:
            raise FormatError("expected {id, content, ...}", key=f"added_tokens[{i}]", file=out.path)
        flags = [flag for flag in ("lstrip", "rstrip", "single_word") if token.get(flag)]
        if flags:
            stripping.append(f"{token['content']!r} (id {token['id']}) has {', '.join(flags)}")
        out.specials[token["content"]] = token["id"]
        if not token.get("special"):
            out.always_matched.add(token["content"])
    if stripping:
        more = f", and {len(stripping) - 1} more" if len(stripping) > 1 else ""
        out.reasons.append(f"added token {stripping[0]}{more}: tiktoken matches a special token's exact text only")


def _hf_vocab(model: dict[str, Any], out: ByteLevelSource) -> None:
    vocab, merges = model.get("vocab"), model.get("merges")
    if not isinstance(vocab, dict) or not isinstance(merges, list):
        raise FormatError("expected model.vocab (an object) and model.merges (a list)", file=out.path, key="model")
    special_texts = {id_: text for text, id_ in out.specials.items()}
    clashed = False  # the first vocabulary token an added token displaces is named
    for piece, id_ in vocab.items():
        data = token_bytes_of(piece)
        if data is None:
            out.reasons.append(f"token {piece!r:.60} (id {id_}) is not in the byte alphabet: not a byte-level BPE")
            return
        if id_ in special_texts:
            if data != special_texts[id_].encode("utf-8") and not clashed:
                clashed = True
                out.reasons.append(f"token {piece!r:.60} has id {id_}, which the added token "
                                   f"{special_texts[id_]!r:.60} takes: tiktoken keeps one token an id")
            out.special_bytes[data] = id_
        else:
            out.ranks[data] = id_
    last: dict[tuple[bytes, bytes], int] = {}
    for k, merge in enumerate(merges):
        pair = merge.split(" ", 1) if isinstance(merge, str) else merge
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(p, str) for p in pair):
            raise FormatError("expected 'a b' or [a, b]", file=out.path, key=f"model.merges[{k}]")
        a, b = token_bytes_of(pair[0]), token_bytes_of(pair[1])
        if a is None or b is None:
            out.reasons.append(f"merge #{k} {merge!r:.60} is not in the byte alphabet")
            return
        last.pop((a, b), None)
        last[(a, b)] = k  # HF: a pair listed twice keeps its last rank (models/_bpe_merges.py)
    out.merges, out.merge_lines = list(last), list(last.values())


def _read_gguf(path: Path) -> ByteLevelSource:
    vocab = read_gguf_vocab(path)
    out = ByteLevelSource(str(path))
    if vocab.vocab_type != "bpe" or vocab.pre is None or not vocab.pre.byte_encode:
        out.reasons.append(f"the GGUF vocabulary is {vocab.model}, not a byte-level BPE")
        return out
    regexes = vocab.pre.regexes
    if len(regexes) != 1:
        out.reasons.append(f"pre type {vocab.pre.name!r} runs {len(regexes)} regexes one after another: tiktoken "
                           "takes one")
    elif regexes[0] not in _GGUF_PATTERNS:
        out.reasons.append(f"pre type {vocab.pre.name!r}: llama.cpp runs its regex with std::regex over collapsed "
                           "character classes, which tiktoken's regex does not reproduce")
    else:
        out.pattern = _GGUF_PATTERNS[regexes[0]] or regexes[0]
    for flag in ("add_space_prefix", "escape_whitespaces"):
        if vocab.flags.get(flag):
            out.reasons.append(f"{flag} is set: tiktoken adds and replaces nothing")
    out.ignore_merges = bool(vocab.flags.get("ignore_merges"))
    attrs = vocab.specials.attrs
    for id_, text in enumerate(vocab.texts):
        attr = attrs[id_]
        if attr & _SPECIAL_ATTRS:
            if attr & (ATTR_LSTRIP | ATTR_RSTRIP):
                out.reasons.append(f"token {text!r} (id {id_}) strips white space beside it: tiktoken does not")
            out.specials[text] = id_
            if attr & ATTR_USER_DEFINED:
                out.always_matched.add(text)
            continue
        data = token_bytes_of(text)
        if data is None:
            out.reasons.append(f"token {text!r:.60} (id {id_}) is not in the byte alphabet")
            return out
        out.ranks[data] = id_
    _gguf_merges(vocab.merges or [], out)
    return out


def _gguf_merges(lines: Any, out: ByteLevelSource) -> None:
    seen: set[tuple[bytes, bytes]] = set()
    for k, line in enumerate(lines):
        text = line if isinstance(line, str) else bytes(line).decode("utf-8", "replace")
        cut = text.find(" ", 1)
        a, b = (token_bytes_of(text[:cut]), token_bytes_of(text[cut + 1:])) if cut > 0 else (None, None)
        if a is None or b is None:
            out.reasons.append(f"merge #{k} {text!r:.60} is not two byte-alphabet tokens")
            return
        if (a, b) not in seen:  # llama.cpp keeps a pair's first rank
            seen.add((a, b))
            out.merges.append((a, b))
            out.merge_lines.append(k)
