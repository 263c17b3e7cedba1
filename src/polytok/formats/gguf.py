"""A GGUF file's vocabulary as llama.cpp loads it: type, flags, special ids, attributes, EOG set.

Reader for the GGUF format (the bytes are parsed by `gguf_reader`; keys are
named in `gguf_keys`). Reproduces the load-time decisions of llama.cpp as
vendored by llama-cpp-python 0.3.36, ``src/llama-vocab.cpp``
``llama_vocab::impl::load``: the vocabulary type and its default special ids
from ``tokenizer.ggml.model``; the flag defaults per type, changed by the BPE
pre type (`polytok.pre_tokenizers.llama_pre_types`) and by the GGUF keys; the
special ids (a key naming an id outside the vocabulary is ignored); and the
attribute and EOG rules of `polytok.formats.gguf_token_attrs.llama_specials`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any, overload

import regex

if TYPE_CHECKING:
    from ..pre_tokenizers.llama_pre_types import PreType
    from ..tokenizer import Tokenizer as TokenizerType

from .. import kernels
from ..decoders.llama_detokenizer import LlamaDetokenizer
from ..errors import FormatError
from .gguf_keys import KEY_TYPES, General, Tokenizer
from .gguf_keys import Tokenizer as Tokenizer_keys
from .gguf_reader import GGUFMetadata, GGUFStrings, ValueType, read_gguf_metadata
from .gguf_token_attrs import LlamaSpecials, llama_specials

_BYTE_TYPE = 6  # llama_token_type LLAMA_TOKEN_TYPE_BYTE
_BYTE_TEXT = r"<0x[0-9A-Fa-f]{2}>"  # re's cache compiles it on first use (a file with BYTE tokens)
_STRING_ARRAY = (ValueType.ARRAY, ValueType.STRING)

# tokenizer.ggml.model → (vocabulary type, default special ids)
VOCAB_TYPES: dict[str, tuple[str, dict[str, int]]] = {
    "llama": ("spm", {"bos": 1, "eos": 2, "unk": 0}),
    "bert": ("wpm", {"bos": 101, "unk": 100, "sep": 102, "pad": 0, "mask": 103}),
    "gpt2": ("bpe", {"bos": 11, "eos": 11}),
    "hybriddna": ("bpe", {"bos": 11, "eos": 11}),
    "whitespace": ("bpe", {"bos": 11, "eos": 11}),
    "gemma4": ("bpe", {}),
    "t5": ("ugm", {"eos": 1, "unk": 2, "pad": 0}),
    "rwkv": ("rwkv", {}),
    "plamo2": ("plamo2", {"bos": 1, "eos": 2, "unk": 0, "pad": 3}),
}

# flag defaults per vocabulary type (llama-vocab.cpp load; reference/llama_vocab.md §4)
_TYPE_FLAGS: dict[str, dict[str, bool]] = {
    "spm": {"add_space_prefix": True, "add_bos": True},
    "bpe": {"clean_spaces": True},
    "wpm": {"add_bos": True, "add_sep": True, "clean_spaces": True},
    "ugm": {"add_eos": True},
    "rwkv": {},
    "plamo2": {},
}

_ID_KEYS = {"bos": Tokenizer.BOS_ID, "eos": Tokenizer.EOS_ID, "eot": Tokenizer.EOT_ID, "eom": Tokenizer.EOM_ID,
            "unk": Tokenizer.UNK_ID, "sep": Tokenizer.SEP_ID, "pad": Tokenizer.PAD_ID, "mask": Tokenizer.MASK_ID,
            "fim_pre": Tokenizer.FIM_PRE_ID, "fim_suf": Tokenizer.FIM_SUF_ID, "fim_mid": Tokenizer.FIM_MID_ID,
            "fim_pad": Tokenizer.FIM_PAD_ID, "fim_rep": Tokenizer.FIM_REP_ID, "fim_sep": Tokenizer.FIM_SEP_ID}
# deprecated spellings, read after the others
_OLD_FIM_KEYS = {"fim_pre": Tokenizer.PREFIX_ID, "fim_suf": Tokenizer.SUFFIX_ID, "fim_mid": Tokenizer.MIDDLE_ID}


@dataclass
class GGUFVocab:
    """What llama.cpp knows about a GGUF vocabulary once it is loaded."""

    file: str
    model: str
    vocab_type: str
    texts: list[str]
    token_ids: dict[str, int]  # each text's last id, as llama.cpp's token_to_id map
    token_types: list[int] | None
    scores: list[float] | None
    merges: Sequence[str] | None  # a GGUFStrings when the compiled reader kept the bytes
    pre: PreType | None
    flags: dict[str, bool]
    specials: LlamaSpecials
    metadata: dict[str, Any] = field(repr=False, default_factory=dict)

    def detokenizer(self) -> LlamaDetokenizer:
        f, ids = self.flags, self.specials.ids
        unescape: Callable[[str], bytes] | None = None
        if self.vocab_type == "rwkv":
            from ..models.rwkv import unescape
        return LlamaDetokenizer(self.texts, self.specials.attrs, self.vocab_type, rwkv_unescape=unescape,
                                escape_whitespaces=f["escape_whitespaces"], clean_spaces=f["clean_spaces"],
                                add_space_prefix=f["add_space_prefix"], add_bos=f["add_bos"], add_eos=f["add_eos"],
                                bos_id=ids.get("bos"), eos_id=ids.get("eos"))


def read_gguf_vocab(path: str | os.PathLike[str]) -> GGUFVocab:
    """The vocabulary of a GGUF file (vocab-only or a whole model), as llama.cpp loads it."""
    meta = read_gguf_metadata(path, raw_strings=(Tokenizer.MERGES,))
    kv, name = meta.kv, str(path)
    _check_types(meta)
    model = kv.get(Tokenizer.MODEL)
    if not isinstance(model, str):
        raise FormatError("no tokenizer.ggml.model: this GGUF file holds no vocabulary", file=name,
                          key=Tokenizer.MODEL)
    if model not in VOCAB_TYPES:
        raise FormatError(f"unknown tokenizer model {model!r} (llama.cpp knows {sorted(VOCAB_TYPES)})",
                          file=name, key=Tokenizer.MODEL)
    vocab_type, default_ids = VOCAB_TYPES[model]
    texts = _string_list(meta, Tokenizer.LIST)
    if "" in texts:
        texts = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(texts)]
    # llama.cpp reads scores[i] and token_type[i] for every token without checking the array lengths
    token_types = _parallel_array(kv, Tokenizer.TOKEN_TYPE, len(texts), name)
    scores = _parallel_array(kv, Tokenizer.SCORES, len(texts), name)
    _check_byte_tokens(texts, token_types, name)
    merges = kv.get(Tokenizer.MERGES)
    if merges is not None:
        merges = _string_list(meta, Tokenizer.MERGES)
    pre = None
    if vocab_type == "bpe":
        from ..pre_tokenizers.llama_pre_types import pre_type

        pre = pre_type("gemma4" if model == "gemma4" else kv.get(Tokenizer.PRE), Tokenizer.PRE)
    flags = _flags(vocab_type, pre, kv)
    ids = _special_ids(_default_ids(default_ids, pre), kv, len(texts))
    token_ids = dict(zip(texts, range(len(texts))))
    specials = llama_specials(texts, token_types, ids, pre=str(kv.get(Tokenizer.PRE) or ""),
                              architecture=str(kv.get(General.ARCHITECTURE) or ""),
                              name=str(kv.get(General.NAME) or ""), by_text=token_ids)
    return GGUFVocab(name, model, vocab_type, texts, token_ids, token_types, scores, merges, pre, flags, specials,
                     kv)


def _check_types(meta: GGUFMetadata) -> None:
    """Every key polytok reads has a type llama.cpp accepts (gguf_keys.KEY_TYPES), or a FormatError."""
    for key, allowed in KEY_TYPES.items():
        found = meta.types.get(key)
        if found is None:
            continue
        names = tuple(t.name for t in found)
        if names[:2] not in allowed or (names[0] == "ARRAY" and len(names) > 2):
            expected = " or ".join("[".join(a) + "]" * (len(a) - 1) for a in allowed)
            raise FormatError(f"expected {expected}, found {'['.join(names)}{']' * (len(names) - 1)}",
                              file=meta.file, key=key)


def _check_byte_tokens(texts: list[str], token_types: Any, file: str) -> None:
    """A BYTE token must be written ``<0xNN>``: llama.cpp reads its byte from the text when it decodes
    (llama-vocab.cpp token_to_byte, which aborts for other vocabulary types), so refuse it at load."""
    count = 0 if token_types is None else token_types.count(_BYTE_TYPE)
    if not count:
        return
    first = token_types.index(_BYTE_TYPE)
    byte_ids: Sequence[int] = range(first, first + count)  # the usual layout: one run of BYTE tokens
    if token_types[first:first + count].count(_BYTE_TYPE) != count:
        byte_ids = list(compress(range(len(token_types)), map(_BYTE_TYPE.__eq__, token_types)))
    if all(map(re.compile(_BYTE_TEXT).fullmatch, map(texts.__getitem__, byte_ids))):
        return
    for i in byte_ids:
        if not re.fullmatch(_BYTE_TEXT, texts[i]):
            raise FormatError(f"token {i} {texts[i]!r} has type BYTE but is not written <0xNN>", file=file,
                              key=f"{Tokenizer.TOKEN_TYPE}[{i}]")


def _string_list(meta: GGUFMetadata, key: str) -> Any:
    """``meta.kv[key]``, which must be an array of strings (the reader makes one list of str of
    those, or a `GGUFStrings` for a key it was asked to keep as bytes)."""
    value = meta.kv.get(key)
    if not isinstance(value, (list, GGUFStrings)) or meta.types.get(key) != _STRING_ARRAY:
        raise FormatError("expected an array of strings", file=meta.file, key=key)
    return value


def _parallel_array(kv: dict[str, Any], key: str, n: int, file: str) -> Any:
    """``kv[key]`` (or None when absent): one number per token (its type was checked by _check_types)."""
    value = kv.get(key)
    if value is None:
        return None
    if len(value) != n:
        raise FormatError(f"{len(value)} entries for {n} tokens", file=file, key=key)
    return value


def default_special(model: str, pre: PreType | None) -> tuple[dict[str, int], dict[str, bool]]:
    """The special ids and flags llama.cpp takes for a GGUF of ``tokenizer.ggml.model`` `model` (one of
    `VOCAB_TYPES`) and pre type `pre` (a BPE's) when its keys name none."""
    vocab_type, ids = VOCAB_TYPES[model]
    return _default_ids(ids, pre), _flags(vocab_type, pre, {})


def _default_ids(ids: dict[str, int], pre: PreType | None) -> dict[str, int]:
    return {k: v for k, v in ids.items() if k != "bos"} if pre is not None and pre.bos_none else ids


def _flags(vocab_type: str, pre: PreType | None, kv: dict[str, Any]) -> dict[str, bool]:
    flags = {"add_space_prefix": False, "add_bos": False, "add_eos": False, "add_sep": False,
             "ignore_merges": False, "clean_spaces": False, "remove_extra_whitespaces": False,
             "escape_whitespaces": True}
    flags.update(_TYPE_FLAGS[vocab_type])
    if pre is not None:
        flags.update(add_space_prefix=pre.add_space_prefix, escape_whitespaces=pre.escape_whitespaces,
                     clean_spaces=pre.clean_spaces, ignore_merges=pre.ignore_merges)
        for flag in ("add_bos", "add_sep"):
            if getattr(pre, flag) is not None:
                flags[flag] = getattr(pre, flag)
    for flag, key in (("add_space_prefix", Tokenizer.ADD_PREFIX),
                      ("remove_extra_whitespaces", Tokenizer.REMOVE_EXTRA_WS),
                      ("add_bos", Tokenizer.ADD_BOS), ("add_eos", Tokenizer.ADD_EOS), ("add_sep", Tokenizer.ADD_SEP)):
        if isinstance(kv.get(key), bool):
            flags[flag] = kv[key]
    if pre is not None and pre.force_add_bos:
        flags["add_bos"] = True
    return flags


def _special_ids(defaults: dict[str, int], kv: dict[str, Any], n: int) -> dict[str, int | None]:
    ids: dict[str, int | None] = {}
    for category, key in _ID_KEYS.items():
        default = defaults.get(category)
        ids[category] = default if default is not None and default < n else None
        value = kv.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            ids[category] = value
    for category, key in _OLD_FIM_KEYS.items():
        value = kv.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            ids[category] = value
    return ids


def build_tokenizer(vocab: GGUFVocab) -> TokenizerType:
    """The `Tokenizer` that encodes and decodes as llama.cpp's ``llama_tokenize`` / ``llama_detokenize``.

    Each vocabulary type's driver (llama-vocab.cpp ``impl::tokenize``) is the shared
    components with llama.cpp's options: llama.cpp's partition splits out special
    tokens; SPM escapes spaces and prefixes one after the start and after every
    special token (a `Replace` and a `Prepend`, which HF-style runs per piece);
    BPE is `LlamaRegexSplit` then `BPE` (duplicate merges keep their first rank; a
    character with no token blocks merges until the ids are written: ``unknown_chars="block"``);
    WPM is `LlamaWordPieceSplit` then `WordPiece`; UGM is `Precompiled` with
    SentencePiece's longest match then `Unigram` with llama.cpp's options; RWKV
    and PLaMo-2 are their models alone, and never add BOS/EOS.
    """
    from ..tokenizer import Tokenizer
    from .gguf_facts import gguf_facts

    builder = _BUILDERS.get(vocab.vocab_type)
    if builder is None:
        raise FormatError(f"encoding {vocab.vocab_type} vocabularies is not supported", file=vocab.file,
                          key=Tokenizer_keys.MODEL)
    model, normalizer, pre_tokenizer = builder(vocab)
    partition = vocab.specials.partition(vocab.texts)
    tok = Tokenizer(model, normalizer=normalizer, pre_tokenizer=pre_tokenizer,
                     post_processor=_special_ids_processor(vocab), special_split=partition,
                     decoder=vocab.detokenizer())
    tok.facts = gguf_facts(vocab, _newline_id(vocab, tok), tuple(e.text for e in partition.parsed_only()))
    return tok


def _newline_id(vocab: GGUFVocab, tok: TokenizerType) -> int | None:
    # subtle: llama.cpp reads this before the file's special ids, so its pad is the type's default
    pad = VOCAB_TYPES[vocab.model][1].get("pad")
    """llama.cpp's linefeed id (load): SPM's byte token for \\n, WPM's pad, else the first id of "\\n"
    (the pad id when that is empty)."""
    if vocab.vocab_type == "spm":
        by_text = tok.model.token_to_id
        found = by_text("<0x0A>")
        if found is None:
            found = by_text("\n")
        return found if found is not None else pad
    if vocab.vocab_type == "wpm":
        return pad
    if vocab.vocab_type == "bpe":
        found = _one_symbol_id(tok, "\n")
        if found is not None:
            return found
    ids = tok.encode("\n", add_special=False, special="text")
    return ids[0] if ids else pad


def _one_symbol_id(tok: TokenizerType, text: str) -> int | None:
    """The id a BPE tokenizer gives `text` when its stages leave one word of one character that
    is a vocabulary entry (a single symbol: no merge applies), else None. What ``encode`` would
    give, without building the model's merge tables at load."""
    splits = tok.split_special(text, False)
    if len(splits) != 1 or splits[0][2] is not None or tok.special_split.has_normalized:
        return None
    words = tok.pre_tokens(tok.normalize(text))
    if len(words) != 1 or len(words[0]) != 1:
        return None
    return tok.model.token_to_id(words[0])


def _build_spm(vocab: GGUFVocab) -> tuple[Any, Any, Any]:
    from ..models.spm import SPM
    from ..normalizers.prepend import Prepend
    from ..normalizers.replace import Replace
    from ..normalizers.sequence import Sequence

    steps: list[Any] = [Replace(" ", "\u2581")]
    if vocab.flags["add_space_prefix"]:
        steps.append(Prepend("\u2581"))
    model = SPM.from_columns(vocab.texts, vocab.token_ids, vocab.scores or [0.0] * len(vocab.texts))
    return model, Sequence(steps), _spm_word_cut(vocab.texts)


def _spm_word_cut(texts: list[str]) -> Any:
    """A cut before every run of ``"▁"`` when no merge can cross it, else None.

    llama.cpp merges a whole fragment in one queue; a merge across the cut would
    make a symbol holding ``"▁"`` right after another character, so when no
    entry (of any type: llama.cpp merges into all of them) holds one, every merge
    stays on one side and the queue gives the same symbols per word, in the
    same order (ties go leftmost, and positions keep their order within a
    word). Unknown symbols are spelt one by one, never joined. Each word is
    then merged and cached on its own (`SPM`'s word cache): measured much
    faster with Llama-2's vocabulary (bench/README.md, 'Measurements
    behind design choices').
    """
    from ..pre_tokenizers.split import Split

    joined = "\0".join(texts)
    if joined.count("\0") != len(texts) - 1:  # an entry holds a NUL itself: look entry by entry
        crossing = any(regex.search("[^\u2581]\u2581", text) for text in texts)
    else:
        # a "▁" after another character of the same entry, searched for from each "▁"
        crossing = regex.search("(?<=[^\0\u2581])\u2581", joined) is not None
    if crossing:
        return None
    return Split("\u2581+", "merged_with_next")


def _build_bpe(vocab: GGUFVocab) -> tuple[Any, Any, Any]:
    from ..models._bpe_merges import UnknownMergeToken
    from ..models.bpe import BPE
    from ..normalizers.replace import Replace
    from ..pre_tokenizers.llama_regex_split import LlamaRegexSplit

    assert vocab.pre is not None
    merges = _merge_list(vocab.merges or [])
    lefts, rights = (merges.lefts, merges.rights) if isinstance(merges, _MergePairs) else \
        ([a for a, _ in merges], [b for _, b in merges])
    try:
        # the model keeps the reader's {text: id} (nothing else changes it)
        model = BPE.from_columns(vocab.token_ids, lefts, rights, ignore_merges=vocab.flags["ignore_merges"],
                                 byte_fallback=not vocab.pre.byte_encode,
                                 pieces=vocab.texts if len(vocab.token_ids) == len(vocab.texts) else None)
    except UnknownMergeToken as exc:
        # llama.cpp stores merges as string pairs and never checks them against the vocabulary
        # (llama-vocab.cpp load, bpe_ranks.emplace); polytok's BPE needs ids, so it refuses the file
        pair = merges[exc.rank]
        index = next((i for i, text in enumerate(vocab.merges or []) if text == f"{pair[0]} {pair[1]}"), exc.rank)
        raise FormatError(exc.reason, file=vocab.file, key=f"{Tokenizer_keys.MERGES}[{index}]") from None
    normalizer = Replace(" ", "\u2581") if vocab.flags["escape_whitespaces"] else None
    return model, normalizer, LlamaRegexSplit(vocab.pre.regexes, byte_encode=vocab.pre.byte_encode)


def _merge_pairs(lines: list[str]) -> list[tuple[str, str]]:
    """Each merge line cut at its first space from index 1, as llama.cpp's load; ``("", "")`` without one."""
    wire = kernels.kernel("wire")
    if wire is not None:
        return wire.merge_pairs(lines)  # type: ignore[no-any-return]
    pairs = []
    for line in lines:
        cut = line.find(" ", 1)
        pairs.append((line[:cut], line[cut + 1:]) if cut >= 0 else ("", ""))
    return pairs


def _merge_list(lines: Sequence[str]) -> Sequence[tuple[str, str]]:
    """The pairs of the merge lines (`_merge_pairs`) in order, each pair once: a pair listed again
    keeps its first rank, as llama.cpp's ``bpe_ranks.emplace``. The compiled reader reads them
    from the file's bytes in one pass, as two lists (no str per line, no tuple per merge), or
    hands over to the pure path (a line with no cut: the model then names it)."""
    wire = kernels.kernel("wire")
    if wire is not None and isinstance(lines, GGUFStrings):
        found = wire.gguf_merges(lines.data, len(lines), lines.big_endian)
        if found is not None:
            return _MergePairs(*found)
    lines = lines.decoded() if isinstance(lines, GGUFStrings) else list(lines)
    return list(dict.fromkeys(_merge_pairs(lines)))


class _MergePairs(Sequence[tuple[str, str]]):
    """``(left, right)`` pairs held as two lists: no tuple per merge (a BPE load reads the
    lefts and the rights apart; iterating makes each tuple as it goes)."""

    __slots__ = ("lefts", "rights")

    def __init__(self, lefts: list[str], rights: list[str]) -> None:
        if len(lefts) != len(rights):
            raise ValueError(f"{len(lefts)} left parts for {len(rights)} right parts")
        self.lefts, self.rights = lefts, rights

    def __len__(self) -> int:
        return len(self.lefts)

    @overload
    def __getitem__(self, index: int) -> tuple[str, str]: ...
    @overload
    def __getitem__(self, index: slice) -> _MergePairs: ...
    def __getitem__(self, index: int | slice) -> tuple[str, str] | _MergePairs:
        if isinstance(index, slice):
            return _MergePairs(self.lefts[index], self.rights[index])
        return self.lefts[index], self.rights[index]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return zip(self.lefts, self.rights)


def _build_wpm(vocab: GGUFVocab) -> tuple[Any, Any, Any]:
    import sys

    from ..models.wordpiece import WordPiece
    from ..pre_tokenizers.llama_wordpiece_split import LlamaWordPieceSplit

    unk = vocab.specials.ids.get("unk")
    unk_text = vocab.texts[unk] if unk is not None else "[UNK]"
    lowercase = bool(vocab.metadata.get(Tokenizer_keys.NORMALIZER_LOWERCASE, True))
    strip_accents = bool(vocab.metadata.get(Tokenizer_keys.NORMALIZER_STRIP_ACCENTS, lowercase))
    model = WordPiece(vocab.token_ids, unk_text, "", sys.maxsize)
    return model, None, LlamaWordPieceSplit(lowercase=lowercase, strip_accents=strip_accents)


def _build_ugm(vocab: GGUFVocab) -> tuple[Any, Any, Any]:
    import struct

    from ..models.unigram import Unigram
    from ..normalizers.precompiled import Precompiled

    types = vocab.token_types or [1] * len(vocab.texts)
    scores = vocab.scores or [0.0] * len(vocab.texts)
    normal = [s for s, t in zip(scores, types) if t == 1]
    unk_score = struct.unpack("<f", struct.pack("<f", (min(normal) if normal else 0.0) - 10.0))[0]
    model = Unigram(list(zip(vocab.texts, scores)), vocab.specials.ids.get("unk"),
                    matchable=[t in (1, 4, 5) for t in types], zero_score=[t == 4 for t in types],
                    unk_score=unk_score, unknown_runs="collapse")
    blob = vocab.metadata.get(Tokenizer_keys.PRECOMPILED_CHARSMAP)
    normalizer = Precompiled(blob.tobytes() if blob is not None else b"", match="longest",
                             passthrough=[t for t, k in zip(vocab.texts, types) if k == 4],
                             add_space_prefix=vocab.flags["add_space_prefix"],
                             remove_extra_whitespaces=vocab.flags["remove_extra_whitespaces"])
    return model, normalizer, None


def _build_rwkv(vocab: GGUFVocab) -> tuple[Any, Any, Any]:
    from ..models.rwkv import RWKV

    return RWKV(vocab.texts, vocab.specials.ids.get("unk")), None, None


def _build_plamo2(vocab: GGUFVocab) -> tuple[Any, Any, Any]:
    from ..models.plamo2 import PLaMo2

    types = vocab.token_types or [1] * len(vocab.texts)
    scores = vocab.scores or [0.0] * len(vocab.texts)
    return PLaMo2(list(zip(vocab.texts, scores)), [t == 6 for t in types]), None, None


_BUILDERS = {"spm": _build_spm, "bpe": _build_bpe, "wpm": _build_wpm, "ugm": _build_ugm, "rwkv": _build_rwkv,
             "plamo2": _build_plamo2}


def _special_ids_processor(vocab: GGUFVocab) -> Any:
    """BOS/EOS (or WPM's CLS/SEP) around the ids when ``add_special``, per type (llama-vocab.cpp tokenize)."""
    from ..post_processors.template import TemplateProcessing

    ids = vocab.specials.ids
    if vocab.vocab_type == "wpm":
        wanted = [ids.get("bos")], [ids.get("sep")]
    elif vocab.vocab_type in ("spm", "bpe", "ugm"):
        wanted = ([ids.get("bos")] if vocab.flags["add_bos"] else [],
                  [ids.get("eos")] if vocab.flags["add_eos"] else [])
    else:
        return None
    first = [i for i in wanted[0] if i is not None]
    last = [i for i in wanted[1] if i is not None]
    if len(first) + len(last) != len(wanted[0]) + len(wanted[1]):
        raise FormatError("the vocabulary adds a BOS/EOS token it does not define", file=vocab.file)
    if not first and not last:
        return None

    def piece(name: str, id_: int) -> dict[str, Any]:
        return {"id": name, "ids": [id_], "tokens": [vocab.texts[id_]]}

    specials = {f"first{i}": piece(f"first{i}", i_) for i, i_ in enumerate(first)}
    specials.update({f"last{i}": piece(f"last{i}", i_) for i, i_ in enumerate(last)})
    head = [{"SpecialToken": {"id": f"first{i}", "type_id": 0}} for i in range(len(first))]
    tail = [{"SpecialToken": {"id": f"last{i}", "type_id": 0}} for i in range(len(last))]
    single = head + [{"Sequence": {"id": "A", "type_id": 0}}] + tail
    pair = head + [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 0}}] + tail
    return TemplateProcessing.from_config({"single": single, "pair": pair, "special_tokens": specials},
                                          "post_processor")
