"""Which ``tokenizer.ggml.pre`` a tokenizer.json's pre-tokenizer is, read from its structure.

llama.cpp's converter (conversion/base.py ``get_vocab_base_pre``, llama-cpp-python 0.3.36
sdist) names the pre type from a hash of the ids of one text, so any edit of the
vocabulary (a token added, a special token renamed) makes the hash unknown. Here the
pre-tokenizer's components are read instead and compared with the pre types llama.cpp's
loader knows (`polytok.pre_tokenizers.llama_pre_types.PRE_TYPES`, from
``llama_vocab::impl::load`` and the ``llm_tokenizer_bpe`` regex lists of
src/llama-vocab.cpp).

The rule. The folder's pre-tokenizer is written in llama.cpp's form, a *split list*
(regexes each re-splitting every piece, the text between matches kept as pieces too,
then each word's UTF-8 bytes mapped to the GPT-2 alphabet or not):

- ``Split`` with a ``Regex``, ``Isolated``, not inverted: its regex. ``Removed`` and
  inverted: the same, when the regex keeps every character of every check text (nothing
  is removed, so the pieces are those of ``Isolated``); other behaviours have no form;
- ``ByteLevel``: byte encoding, and with ``use_regex`` (its default) GPT-2's regex first;
  ``add_prefix_space`` has no form (llama.cpp's BPE adds no space);
- ``Digits``: ``\\p{N}`` one at a time, or ``\\p{N}+`` (``individual_digits`` false);
- ``Punctuation`` ``Contiguous``: ``[\\p{P}\\$\\+<=>\\^~\\|`]+`` (HF counts every ASCII
  punctuation and symbol character, pre_tokenizers/punctuation.rs, as that class does);
- ``Sequence``: its members' lists, in order (nothing may follow ``ByteLevel``: llama.cpp
  byte-encodes the words last). Any other component has no form.

Both sides' regexes are then spelt one way (`canonical`): ``(?i:'s|'t|...)`` as the
bracket form llama.cpp writes, a bracket of one class as the class, ``{1}`` dropped,
GPT-2's regex without the ``|\\s+`` tail its hand-written splitter adds (the tail
changes no piece: a lone whitespace character left over is a piece anyway), and the
HF spellings of `HF_SPELLINGS` as llama.cpp wrote them. A pre type *splits as* the
folder when the lists are equal, the byte encoding is the same and it escapes no
whitespace, and polytok's engines of both sides (the tokenizer.json pre-tokenizer and
`polytok.pre_tokenizers.llama_regex_split.LlamaRegexSplit`) give the same pieces on
the check texts (`polytok.convert.texts`) and llama.cpp's hash text. It is an *exact*
match when its ``ignore_merges`` also equals the BPE model's.

The normalizer: none, or NFC (alone or in a Sequence), which llama.cpp does not run either way (its own table
gives NFC tokenizers, Qwen2's, their pre types; the read-back check names the texts it
changes); any other normalizer makes no match. A WordPiece folder needs no pre type:
llama.cpp's WPM session sets DEFAULT whatever the key says (nor does the SentencePiece path,
whose ``llama`` model's session does the same; the converter writes ``default`` there).

`decide` then picks the name: ``pre=`` forces one; the hash's name when it splits as the
folder (structure and hash agree; llama.cpp's table knows more about the model, e.g.
which of several equal rows it is); else an exact structural match (the hash, if known,
named a different type: both are reported); else the hash's name (no exact match; the
nearest type and the difference are reported); else the conversion is refused, naming
the nearest type and what differs. Of several exact names the one written is the first
of llama.cpp's load order that its converter's table also writes.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..errors import FormatError
from ..pre_tokenizers import from_config as pre_tokenizer_from_config
from ..pre_tokenizers.llama_pre_types import PRE_TYPES, PreType
from ..pre_tokenizers.llama_regex_split import LlamaRegexSplit
from .texts import CHECK_TEXTS

__all__ = ["Structure", "PreDecision", "HF_SPELLINGS", "canonical", "structure_of", "splits_as", "nearest",
           "decide"]

GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
_CONTRACTIONS_I = "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_PUNCTUATION = "[\\p{P}\\$\\+<=>\\^~\\|`]+"
_ONE_CLASS = re.compile(r"\[(\\p\{\w+\})\]")
_UPPER_LOWER = "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"
_LOWER = "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"

#: HF ``Split`` regexes of models in llama.cpp's convert_hf_to_gguf_update.py list, and the
#: llama.cpp regex their pre type runs instead (std::regex has no \\p{Lu}: llama-vocab.cpp
#: writes the case classes as lookaheads). Xenova/gpt-4o (gpt-4o) and mistralai's Tekken
#: tokenizer.json (tekken), after `canonical`'s other rewrites.
HF_SPELLINGS: dict[str, str] = {
    f"[^\\r\\n\\p{{L}}\\p{{N}}]?{_UPPER_LOWER}*{_LOWER}+{_CONTRACTIONS}?|[^\\r\\n\\p{{L}}\\p{{N}}]?{_UPPER_LOWER}+"
    f"{_LOWER}*{_CONTRACTIONS}?|\\p{{N}}{{1,3}}| ?[^\\s\\p{{L}}\\p{{N}}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
        PRE_TYPES["gpt-4o"].regexes[0],
    f"[^\\r\\n\\p{{L}}\\p{{N}}]?{_UPPER_LOWER}*{_LOWER}+|[^\\r\\n\\p{{L}}\\p{{N}}]?{_UPPER_LOWER}+{_LOWER}*|\\p{{N}}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+":
        PRE_TYPES["tekken"].regexes[0],
}

_TOLERATED_NORMALIZERS = ("NFC",)


def _respell(regex: str) -> str:
    regex = regex.replace(_CONTRACTIONS_I, _CONTRACTIONS)
    regex = _ONE_CLASS.sub(r"\1", regex).replace("\\p{N}{1}", "\\p{N}")
    return GPT2_REGEX if regex == GPT2_REGEX + "|\\s+" else regex


def canonical(regex: str) -> str:
    """One spelling for regexes that split alike (module notes)."""
    regex = _respell(regex)
    return _respell(HF_SPELLINGS.get(regex, regex))


@dataclass(frozen=True)
class Structure:
    """A tokenizer.json's pre-tokenization in llama.cpp's form (module notes)."""

    regexes: tuple[str, ...]
    byte_encode: bool
    ignore_merges: bool
    #: the normalizer's type when llama.cpp has no equivalent of it (None: none or tolerated)
    normalizer: str | None = None
    #: components with no llama.cpp form, described
    unsupported: tuple[str, ...] = ()


def _steps(d: Any, path: str, out: list[str], flags: dict[str, Any]) -> None:
    if not isinstance(d, dict):
        flags["unsupported"].append(f"{path}: not an object")
        return
    kind = d.get("type")
    if flags["byte_encode"] and kind != "Sequence":
        flags["unsupported"].append(f"{path}: {kind} after ByteLevel (llama.cpp byte-encodes last)")
    if kind == "Sequence":
        for i, member in enumerate(d.get("pretokenizers") or []):
            _steps(member, f"{path}.pretokenizers[{i}]", out, flags)
    elif kind == "ByteLevel":
        flags["byte_encode"] = True
        if d.get("add_prefix_space", True):
            flags["unsupported"].append(f"{path}: ByteLevel add_prefix_space true")
        if d.get("use_regex", True):
            out.append(GPT2_REGEX)
    elif kind == "Split":
        pattern = d.get("pattern") or {}
        regex = pattern.get("Regex") if isinstance(pattern, dict) else None
        behavior, invert = d.get("behavior"), bool(d.get("invert", False))
        if not isinstance(regex, str):
            flags["unsupported"].append(f"{path}: Split on a string")
        elif (behavior, invert) == ("Isolated", False) \
                or ((behavior, invert) == ("Removed", True) and _keeps_everything(regex)):
            out.append(canonical(regex))
        else:
            flags["unsupported"].append(f"{path}: Split {behavior} invert={str(invert).lower()}")
    elif kind == "Digits":
        out.append("\\p{N}" if d.get("individual_digits", False) else "\\p{N}+")
    elif kind == "Punctuation" and d.get("behavior") == "Contiguous":
        out.append(_PUNCTUATION)
    else:
        flags["unsupported"].append(f"{path}: {kind}" + (f" {d['behavior']}" if "behavior" in d else ""))


def _check_texts() -> list[str]:
    from .gguf_vocab import check_text

    return [text for _, text in CHECK_TEXTS] + [check_text()]


@lru_cache(maxsize=64)
def _keeps_everything(regex: str) -> bool:
    """Whether an inverted ``Removed`` split on `regex` removes nothing from any check text."""
    split = pre_tokenizer_from_config({"type": "Split", "pattern": {"Regex": regex}, "behavior": "Removed",
                                       "invert": True})
    return all("".join(split.pre_tokenize(text, True)) == text for text in _check_texts())


def _untolerated_normalizer(d: Any) -> str | None:
    """The type of the first normalizer (a Sequence's members in turn) llama.cpp has no equivalent of."""
    if d is None:
        return None
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == "Sequence":
        return next(filter(None, map(_untolerated_normalizer, d.get("normalizers") or [])), None)
    return None if kind in _TOLERATED_NORMALIZERS else str(kind)


def structure_of(data: dict[str, Any]) -> Structure:
    """The structure of a tokenizer.json's (already parsed) pre-tokenizer, normalizer and BPE flags."""
    flags: dict[str, Any] = {"byte_encode": False, "unsupported": []}
    regexes: list[str] = []
    if data.get("pre_tokenizer") is not None:
        _steps(data["pre_tokenizer"], "pre_tokenizer", regexes, flags)
    kind = _untolerated_normalizer(data.get("normalizer"))
    model = data.get("model") or {}
    return Structure(tuple(regexes), flags["byte_encode"], bool(model.get("ignore_merges", False)),
                     kind, tuple(flags["unsupported"]))


def _same_split(structure: Structure, pre: PreType) -> bool:
    return not pre.escape_whitespaces and pre.byte_encode == structure.byte_encode \
        and tuple(canonical(r) for r in pre.regexes) == structure.regexes \
        and structure.normalizer is None and not structure.unsupported


def _pieces_differ(data: dict[str, Any], pre: PreType) -> str | None:
    """The first check text the two engines cut differently, described; None when none."""
    ours = pre_tokenizer_from_config(data["pre_tokenizer"])
    theirs = LlamaRegexSplit(pre.regexes, byte_encode=pre.byte_encode)
    for text in _check_texts():
        a, b = ours.pre_tokenize(text, True), theirs.pre_tokenize(text)
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return (f"pieces of {text[:40]!r} differ at piece {at}: {a[at:at + 3]!r} here, "
                    f"{b[at:at + 3]!r} in {pre.name}")
    return None


def _preferred_names(names: list[str]) -> list[str]:
    """`names` in llama.cpp's load order, the ones its converter's table writes first."""
    from .gguf_vocab import known_pre_names

    written = known_pre_names()
    return sorted(names, key=lambda n: (n not in written, list(PRE_TYPES).index(n)))


def splits_as(data: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(names that split as the folder, those of them that are exact matches), preferred first."""
    structure = structure_of(data)
    names = [n for n, pre in PRE_TYPES.items() if _same_split(structure, pre)]
    if names and _pieces_differ(data, PRE_TYPES[names[0]]) is not None:
        names = []
    exact = [n for n in names if PRE_TYPES[n].ignore_merges == structure.ignore_merges]
    return _preferred_names(names), _preferred_names(exact)


def _alternatives(regex: str) -> list[str]:
    """The top-level ``|`` alternatives of `regex`."""
    out, depth, start, i, bracket = [], 0, 0, 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if bracket:
            bracket = c != "]"
        elif c == "[":
            bracket = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(regex[start:i])
            start = i + 1
        i += 1
    return out + [regex[start:]]


_DIGIT_GROUP = re.compile(r"\\p\{N\}(\+|\{1,(\d+)\})?")


def _digits(alternative: str) -> str | None:
    m = _DIGIT_GROUP.fullmatch(alternative)
    if m is None:
        return None
    return "1 at a time" if m.group(1) is None else "in whole runs" if m.group(1) == "+" \
        else f"up to {m.group(2)} at a time"


def _describe_regex(a: str, b: str, name: str) -> list[str]:
    left, right = _alternatives(a), _alternatives(b)
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        mine, theirs = left[i1:i2], right[j1:j2]
        d1, d2 = (_digits(x[0]) if len(x) == 1 else None for x in (mine, theirs))
        if d1 and d2:
            out.append(f"digits split {d1} here, {d2} in {name}")
        elif mine and theirs:
            out.append(f"alternative `{'|'.join(mine)}` here, `{'|'.join(theirs)}` in {name}")
        elif mine:
            out.append(f"alternative `{'|'.join(mine)}` here, none in {name}")
        else:
            out.append(f"no alternative `{'|'.join(theirs)}` here, which {name} has")
    return out


def _differences(structure: Structure, pre: PreType) -> list[str]:
    out = [f"{u} (no llama.cpp form)" for u in structure.unsupported]
    if structure.normalizer is not None:
        out.append(f"normalizer {structure.normalizer} (llama.cpp's BPE runs none)")
    if pre.byte_encode != structure.byte_encode:
        here, there = ("byte-encoded", "raw UTF-8") if structure.byte_encode else ("raw UTF-8", "byte-encoded")
        out.append(f"words {here} here, {there} in {pre.name}")
    if pre.escape_whitespaces:
        out.append(f"{pre.name} writes spaces as U+2581 first")
    theirs = tuple(canonical(r) for r in pre.regexes)
    if len(theirs) == len(structure.regexes):
        for k, (a, b) in enumerate(zip(structure.regexes, theirs)):
            if a != b:
                out += [f"split {k + 1}: {d}" if len(theirs) > 1 else d for d in _describe_regex(a, b, pre.name)]
    else:
        out.append(f"{len(structure.regexes)} split regexes here, {len(theirs)} in {pre.name}: "
                   + ", ".join(f"`{r}`" for r in structure.regexes) + " vs " + ", ".join(f"`{r}`" for r in theirs))
    if pre.ignore_merges != structure.ignore_merges:
        out.append(f"ignore_merges {str(structure.ignore_merges).lower()} here, "
                   f"{str(pre.ignore_merges).lower()} in {pre.name}")
    return out


def _distance(structure: Structure, pre: PreType) -> int:
    theirs = [canonical(r) for r in pre.regexes]
    steps = 0
    matcher = difflib.SequenceMatcher(None, list(structure.regexes), theirs, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "replace" and i2 - i1 == j2 - j1:
            for a, b in zip(structure.regexes[i1:i2], theirs[j1:j2]):
                x, y = _alternatives(a), _alternatives(b)
                same = sum(block.size for block in difflib.SequenceMatcher(None, x, y, autojunk=False)
                           .get_matching_blocks())
                steps += max(len(x), len(y)) - same
        elif op != "equal":
            steps += 4 * max(i2 - i1, j2 - j1)
    flags = (pre.byte_encode != structure.byte_encode) * 8 + pre.escape_whitespaces * 8 \
        + (pre.ignore_merges != structure.ignore_merges)
    return steps * 2 + flags


def nearest(data: dict[str, Any]) -> tuple[str, list[str]]:
    """The llama.cpp pre type nearest the folder's structure, and what differs from it."""
    structure = structure_of(data)
    names = _preferred_names(list(PRE_TYPES))
    best = min(names, key=lambda n: _distance(structure, PRE_TYPES[n]))
    differences = _differences(structure, PRE_TYPES[best])
    if _same_split(structure, PRE_TYPES[best]):  # the lists are equal: the engines cut some text differently
        differences.insert(0, _pieces_differ(data, PRE_TYPES[best]) or "the check texts' pieces")
    return best, differences


@dataclass
class PreDecision:
    """How ``tokenizer.ggml.pre`` was decided."""

    name: str
    #: "pre=", "structure", "hash", "structure and hash" (agreeing), "wordpiece" or "sentencepiece"
    #: (the two model types whose llama.cpp session reads no pre type)
    how: str
    chkhsh: str | None = None
    #: the name llama.cpp's hash table gives (None: unknown)
    hash_name: str | None = None
    #: the names that split as the folder (exact ones first)
    structure_names: tuple[str, ...] = ()
    #: why, when structure and hash disagree or no exact type matched
    note: str | None = None

    def line(self) -> str:
        text = f"pre decided by: {self.how}"
        if self.hash_name is not None and self.how != "structure and hash":
            text += f"; hash names {self.hash_name}"
        return text + (f"; {self.note}" if self.note else "")


def decide(data: dict[str, Any], chkhsh: str | None, hash_name: str | None, override: str | None, *,
           wordpiece: bool = False, where: str | None = None, like_converter: bool = False) -> PreDecision:
    """The ``tokenizer.ggml.pre`` name for a tokenizer.json (`data` parsed), as the module notes say.

    A hash naming a type that splits as the tokenizer but whose ``ignore_merges`` differs is
    passed over for the first exact type, unless `like_converter` (the converter writes the
    hash's name, and llama.cpp then merges words the tokenizer.json takes whole, or the reverse).

    Raises:
        FormatError: no pre type splits as the folder, the hash is unknown and `override` is
            None: the message names the nearest type and what differs.
    """
    if override:
        return PreDecision(override, "pre=", chkhsh, hash_name)
    if wordpiece:
        return PreDecision(hash_name or "default", "wordpiece", chkhsh, hash_name,
                           note="llama.cpp's WordPiece session reads no pre type (impl::load sets DEFAULT)")
    names, exact = splits_as(data)
    if hash_name is not None and hash_name in names:
        note = None
        if PRE_TYPES[hash_name].ignore_merges != structure_of(data).ignore_merges:
            differs = (f"{hash_name} has ignore_merges {str(PRE_TYPES[hash_name].ignore_merges).lower()}, "
                       "the tokenizer.json the other value")
            if exact and not like_converter:
                return PreDecision(exact[0], "structure", chkhsh, hash_name, tuple(exact),
                                   f"structure wins: {differs} (--like-converter writes {hash_name})")
            note = differs + ": llama.cpp's table row kept"
        return PreDecision(hash_name, "structure and hash", chkhsh, hash_name, tuple(names), note)
    if exact:
        note = None if hash_name is None else f"structure wins: {hash_name} does not split as this tokenizer"
        return PreDecision(exact[0], "structure", chkhsh, hash_name, tuple(exact), note)
    near, differences = nearest(data)
    if hash_name is not None:
        return PreDecision(hash_name, "hash", chkhsh, hash_name, tuple(names),
                           f"no exact structural match: nearest {near}; differs: " + "; ".join(differences))
    raise FormatError(f"no llama.cpp pre-tokenizer type splits as this tokenizer (its hash {chkhsh} is not in "
                      f"llama.cpp's table either): nearest: {near}; differs: " + "; ".join(differences)
                      + "; name one with pre= / --pre", file=where, key="pre_tokenizer")
