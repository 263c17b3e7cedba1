"""The tokenizer.json stages (normalizer, pre-tokenizer, model, decoder) of a GGUF vocabulary.

Part of `polytok.convert.gguf_to_hf`. Each vocabulary type of llama.cpp
(llama-cpp-python 0.3.36, ``src/llama-vocab.cpp``; reference/llama_vocab.md §5-§9)
is spelt in the components of HF tokenizers 0.23.3, and every behaviour those
components cannot spell is returned as a reason:

- SPM: ``Prepend("▁")`` (with ``add_space_prefix``) and ``Replace(" ", "▁")`` per
  piece between special tokens (llama.cpp prefixes the text after every special
  token), no pre-tokenizer, and a ``BPE`` model with ``byte_fallback`` whose merges
  are every split of every entry into two entries, ranked by the entry's score
  (llama.cpp's ``llm_tokenizer_spm`` joins the adjacent pair whose text is the
  best-scored entry, leftmost first), tied runs of one character by `_run_ties`;
- BPE: a ``Split`` (``Isolated``: unmatched text is a piece too) per regex of the pre
  type (`gguf_to_hf_regex`), then ``ByteLevel`` without its own regex, or
  ``Replace(" ", "▁")`` first for the pre types that escape spaces; the file's
  merges, each pair once at its first rank (llama.cpp's ``bpe_ranks.emplace``);
- WPM: ``BertNormalizer`` + ``BertPreTokenizer``, ``Metaspace`` for llama.cpp's
  ``"▁"`` word prefix, and ``WordPiece`` over the file's phantom-space entries with
  no continuation prefix and no length limit;
- the decoder renders what ``llama_detokenize`` renders: entries it renders empty
  (UNUSED-only, UNDEFINED) are replaced by nothing; entries a ``ByteLevel`` decoder
  would render otherwise (added ones written in the byte alphabet, whose text
  llama.cpp renders; NORMAL ones holding a character outside it, for which llama.cpp
  writes an ``[UNK_BYTE_0x..]`` marker) are first rewritten to the byte symbols of
  llama.cpp's rendering, except NORMAL ones no text reaches, which are written under
  those byte symbols instead (`unreachable_renames`); ``clean_spaces`` is its three
  passes as ``Replace`` decoders on the fused text.
"""

from __future__ import annotations

import re
from typing import Any

from ..formats.gguf import GGUFVocab
from ..formats.gguf_token_attrs import ATTR_BYTE, ATTR_CONTROL, ATTR_NORMAL, ATTR_UNKNOWN, ATTR_USER_DEFINED
from ..text.byte_alphabet import BYTES_TO_CHARS, UTF8_BYTES
from .gguf_to_hf_regex import onig_regex

__all__ = ["Stages", "stages_of", "decode_differences", "onig_literal", "unreachable_renames"]

Stages = dict[str, Any]
_SPACE = "\u2581"
_RENDERED = ATTR_UNKNOWN | ATTR_CONTROL | ATTR_USER_DEFINED | ATTR_NORMAL | ATTR_BYTE
_ADDED = ATTR_UNKNOWN | ATTR_CONTROL | ATTR_USER_DEFINED
_CHAR_TO_BYTE = {ch: b for b, ch in enumerate(BYTES_TO_CHARS)}
# llama_detokenize's clean_spaces passes, in order, as regex replacements of the whole text
_CLEAN_SPACES = ((" (?=[?!.,])", ""), (" ' ", "'"), (" (?='(?:s|m|re|ve))", ""))
_BYTE_TEXT = re.compile("<0x[0-9A-Fa-f]{2}>")
# entries rewritten one decoder step each before a ByteLevel decoder, at most
_MAX_RENDERINGS = 64
# HF's WordPiece reads a word of more characters than this as unknown; llama.cpp has no limit
_NO_WORD_LIMIT = (1 << 63) - 1


def onig_literal(text: str) -> str:
    """`text` as an Oniguruma pattern matching exactly it."""
    return "".join(c if (c.isascii() and c.isalnum()) or ord(c) > 0x7F else f"\\x{{{ord(c):X}}}" for c in text)


def _regex(pattern: str) -> dict[str, str]:
    return {"Regex": pattern}


def _replace(pattern: str, content: str) -> dict[str, Any]:
    return {"type": "Replace", "pattern": _regex(pattern), "content": content}


def stages_of(vocab: GGUFVocab) -> tuple[Stages, list[str]]:
    """The ``normalizer``, ``pre_tokenizer``, ``model`` and ``decoder`` of `vocab`, and the reasons
    they cannot be exact."""
    kind = vocab.vocab_type
    if kind == "spm":
        stages, reasons = _spm(vocab)
    elif kind == "bpe":
        stages, reasons = _bpe(vocab)
    elif kind == "wpm":
        stages, reasons = _wpm(vocab)
    else:
        return {}, [_UNEXPRESSIBLE.get(kind, f"the {kind} vocabulary type has no tokenizer.json model")]
    stages["decoder"] = _decoder(vocab, stages.pop("decoder_steps"), reasons)
    return stages, reasons


def decode_differences(vocab: GGUFVocab) -> list[str]:
    """The id sequences on which the written decoder renders otherwise than ``llama_detokenize``.

    With ``add_space_prefix`` llama.cpp strips one leading space from the first token's piece,
    after dropping a leading BOS when ``remove_special`` (then it strips nothing); a first token
    it renders empty (a CONTROL or UNKNOWN one unless ``unparse_special``, an unused or
    undefined one always) takes the strip. ``decode(skip_special_tokens=True)`` hands the
    decoder the same tokens for ``[BOS, ▁a]`` and ``[▁a]``, which llama.cpp renders ``" a"``
    and ``"a"``, so no decoder renders both: the written one follows the sequences that start
    with text. The ``Metaspace`` step of `_escaped_space_steps` is right on every other
    sequence; a ``ByteLevel`` decoder hands on one fused text, whose first space ``Strip``
    removes even after a first token rendered empty."""
    if not vocab.flags["add_space_prefix"]:
        return []
    byte_level = vocab.vocab_type == "bpe" and vocab.pre is not None and vocab.pre.byte_encode
    which = ("whose first token renders empty (with skip_special_tokens: a CONTROL or UNKNOWN token, the BOS "
             "included; always: an unused or undefined one)" if byte_level else
             "decoded with skip_special_tokens whose first id is a CONTROL or UNKNOWN token (the BOS included)")
    return [f"decode differs from llama_detokenize only on ids {which} before text that starts with a space: "
            "llama.cpp keeps that space, the decoder removes it"]


_UNEXPRESSIBLE = {
    "ugm": "UGM (T5 Unigram): llama.cpp normalizes with the charsmap by longest match, gives user-defined "
           "entries score 0 and joins runs of unknown characters into one unknown token; HF's Unigram and "
           "Precompiled do neither",
    "rwkv": "RWKV: llama.cpp's greedy longest-match trie over escaped byte strings has no tokenizer.json model",
    "plamo2": "PLaMo-2: llama.cpp's own Aho-Corasick + dynamic programming tokenizer has no tokenizer.json model",
}


def _vocab_map(vocab: GGUFVocab, reasons: list[str]) -> dict[str, int]:
    """{text: id}; a text held by two ids cannot be written (llama.cpp's map keeps the last)."""
    if len(vocab.token_ids) != len(vocab.texts):
        shadowed = next(i for i, t in enumerate(vocab.texts) if vocab.token_ids[t] != i)
        reasons.append(f"token {shadowed} {vocab.texts[shadowed]!r} has the text of a later token; "
                       "a tokenizer.json vocabulary maps each text to one id")
    return dict(vocab.token_ids)


def _spm(vocab: GGUFVocab) -> tuple[Stages, list[str]]:
    reasons: list[str] = []
    normalizers: list[dict[str, Any]] = []
    if vocab.flags["add_space_prefix"]:
        normalizers.append({"type": "Prepend", "prepend": _SPACE})
    normalizers.append({"type": "Replace", "pattern": {"String": " "}, "content": _SPACE})
    vocab_map = _vocab_map(vocab, reasons)
    merges, merge_reasons = _spm_merges(vocab)
    reasons += merge_reasons
    unk = vocab.specials.ids.get("unk")
    model = {"type": "BPE", "dropout": None, "unk_token": vocab.texts[unk] if unk is not None else None,
             "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False,
             "byte_fallback": True, "ignore_merges": False, "vocab": vocab_map, "merges": merges}
    steps = _escaped_space_steps(vocab)
    _escaped_added(vocab, reasons, byte_fallback=True)
    return {"normalizer": {"type": "Sequence", "normalizers": normalizers}, "pre_tokenizer": None,
            "model": model, "decoder_steps": steps}, reasons


def _escaped_space_steps(vocab: GGUFVocab) -> list[dict[str, Any]]:
    """The decoder of ``"▁"``-escaped entries with byte fallback: ``"▁"`` as a space, ``<0xNN>`` as
    bytes. With ``add_space_prefix`` llama.cpp strips one leading space from the first token's
    piece (a first token rendered empty takes the strip): each token's leading space (a
    ``<0x20>`` token's too) becomes a mark no entry holds, and ``Metaspace`` with that mark
    removes it from the first token of the list and makes it a space in the others, before
    ``ByteFallback`` (whose bytes may spell the mark)."""
    if not vocab.flags["add_space_prefix"]:
        return [_replace(_SPACE, " "), {"type": "ByteFallback"}, {"type": "Fuse"}]
    held = {c for text in vocab.texts for c in text}
    mark = next(chr(c) for c in range(0xE000, 0x110000) if chr(c) not in held)
    return [_replace(_SPACE, " "), _replace("\\A ", mark), _replace("\\A<0x20>\\z", mark),
            {"type": "Metaspace", "replacement": mark, "prepend_scheme": "always", "split": False},
            {"type": "ByteFallback"}, {"type": "Fuse"}]


def _spm_merges(vocab: GGUFVocab) -> tuple[list[list[str]], list[str]]:
    """Every (left, right) pair of entries whose joined text is an entry, best joined score first.

    llama.cpp joins the best-scored pair, leftmost among equals; HF's BPE the lowest rank,
    leftmost among equals. The ranks agree when no two joined entries share a score, except
    for one entry joinable from two overlapping pairs at once (``ab|a|ba`` for ``aba``), where
    llama.cpp takes the left pair and HF the one ranked first (left part shorter first).
    Entries sharing a score that are `_run_ties` are ranked so HF joins as llama.cpp does."""
    texts, ids = vocab.texts, vocab.token_ids
    scores = vocab.scores or [0.0] * len(texts)
    found: list[tuple[float, int, int, str, str]] = []
    for text, id_ in ids.items():
        for cut in range(1, len(text)):
            left, right = text[:cut], text[cut:]
            if left in ids and right in ids:
                found.append((-scores[id_], id_, cut, left, right))
    found.sort()
    reasons = []
    by_score: dict[float, list[int]] = {}
    for score, id_, _, _, _ in found:
        joined = by_score.setdefault(score, [])
        if not joined or joined[-1] != id_:
            joined.append(id_)
    runs: dict[float, list[list[str]]] = {}
    for score, joined in by_score.items():
        if len(joined) < 2:
            continue
        pairs = _run_ties(ids, [texts[i] for i in joined])
        if pairs is None and score == found[0][0]:
            pairs = _top_ties(ids, [(left, right) for s, _, _, left, right in found if s == score])
        if pairs is None:
            pair = _reversed_pair(ids, [texts[i] for i in joined])
            why = "no ranking is known to follow it here" if pair is None else (
                f"of {pair[0]!r} and {pair[1]!r} HF joins the one ranked first in both "
                f"{pair[0] + pair[0][0]!r} and {pair[1] + pair[1][0]!r}, llama.cpp the left one")
            reasons.append(f"{len(joined)} entries (first {joined[0]} {texts[joined[0]]!r}) share the score {-score}: "
                           f"llama.cpp joins the leftmost of such pairs, HF's BPE the lower rank ({why})")
            break
        runs[score] = pairs
    lone = {c for text in ids for c in text} - ids.keys()
    held = next((t for t in ids if len(t) > 1 and not lone.isdisjoint(t) and _joinable(ids, t)), None)
    if held is not None:
        reasons.append(f"an entry holds a character that is not an entry itself: llama.cpp can join it, "
                       f"HF's BPE spells it as bytes first (entry {ids[held]} {held!r})")
    merges: list[list[str]] = []
    for score, _, _, left, right in found:
        if score not in runs:
            merges.append([left, right])
        elif runs[score]:
            merges += runs.pop(score)
            runs[score] = []
    return merges, reasons


def _joinable(ids: dict[str, int], text: str) -> bool:
    """Whether llama.cpp can join `text` from two pieces: each an entry or a single character
    (a character is a piece of its own even when it is no entry)."""
    return any((text[:cut] in ids or cut == 1) and (text[cut:] in ids or cut == len(text) - 1)
               for cut in range(1, len(text)))


def _reversed_pair(ids: dict[str, int], tied: list[str]) -> tuple[str, str] | None:
    """Two tied entries ``xy`` and ``yx`` of two entries ``x`` and ``y``, neither ``xyx`` nor ``yxy``
    an entry: on ``x|y|x`` llama.cpp joins ``xy``, on ``y|x|y`` it joins ``yx``, and HF's BPE joins
    the one it ranks first in both."""
    tied_set = set(tied)
    for text in tied:
        x, y = text[:1], text[1:]
        if len(text) == 2 and x != y and x in ids and y in ids and text[::-1] in tied_set \
                and x + y + x not in ids and y + x + y not in ids:
            return text, text[::-1]
    return None


def _run_ties(ids: dict[str, int], tied: list[str]) -> list[list[str]] | None:
    """The merges, in rank order, that make HF's BPE join like llama.cpp's leftmost-first rule
    for entries sharing one score, when they are the runs ``cc`` .. ``c`` * K of one character
    ``c`` (``c`` an entry, every length between an entry) and no other entry holds ``cc``
    (Llama-2's ``▁`` runs); else None.

    Proof. No other entry holds ``cc``, so a run piece of two or more ``c`` joins only into a
    run, and every run join has this one score: once the first of them is taken, the joins
    left at that score act on maximal stretches of single-``c`` pieces, each on its own. On
    m such pieces llama.cpp joins the leftmost pair: the first piece grows by one ``c`` at a
    time up to K, then the next, giving K, ..., K, m mod K. With only the merges (a, ``c``),
    a = K-1 first down to 1, HF's BPE does the same: the pair (a, ``c``) with a > 1 is ranked
    before (``c``, ``c``), and among single pieces it takes the leftmost pair."""
    first = tied[0][0]
    longest = max(map(len, tied))
    if first not in ids or any(t != first * len(t) for t in tied) or len(tied) != longest - 1:
        return None
    double = first * 2
    if any(double in text and (text != first * len(text) or len(text) > longest) for text in ids):
        return None
    return [[first * a, first] for a in range(longest - 1, 0, -1)]


def _top_ties(ids: dict[str, int], splits: list[tuple[str, str]]) -> list[list[str]] | None:
    """The merges, in rank order, that make HF's BPE join like llama.cpp's leftmost-first rule for
    entries sharing the best score of all joinable entries, when such a ranking is proved; else None.

    `splits` are the tied entries' (left, right) pairs of entries, best first. Proof. A pair whose
    entry has the best score is joined by llama.cpp before any other pair, and HF ranks these
    merges first, so both engines join tied pairs while there are any. At the start the pieces
    are characters: the tied pairs of two characters are joined then, and they commute when no
    two of them overlap (``ab`` and ``bc``; the same pair twice is joined leftmost by both) and
    none of their entries is a part of a tied pair (no tied pair appears because of one). After
    that, a tied pair exists only next to the piece the last join made, ``S``: ``(x, S)`` on its
    left and ``(S, y)`` on its right, both joined from ``S``, so only one is. llama.cpp takes the
    left one, HF the one ranked first: every such couple gives the constraint "``(x, S)`` before
    ``(S, y)``", and the ranking is a topological order of them (the order of `splits` among
    the unconstrained). A cycle leaves no ranking: None.
    """
    pairs = list(dict.fromkeys(splits))
    chars = [p for p in pairs if len(p[0]) == 1 and len(p[1]) == 1]
    if any(p != q and (p[1] == q[0] or q[1] == p[0]) for p in chars for q in chars):
        return None
    made = {a + b for a, b in chars}
    if any(a in made or b in made for a, b in pairs):
        return None
    before: dict[tuple[str, str], set[tuple[str, str]]] = {p: set() for p in pairs}
    for left in pairs:  # (x, S), S its right part: a piece a join made, so not one character
        for right in pairs:  # (S, y)
            if len(left[1]) > 1 and right[0] == left[1] and right != left:
                before[right].add(left)
    order: list[tuple[str, str]] = []
    placed: set[tuple[str, str]] = set()
    while len(order) < len(pairs):
        ready = next((p for p in pairs if p not in placed and before[p] <= placed), None)
        if ready is None:
            return None
        order.append(ready)
        placed.add(ready)
    return [list(p) for p in order]


def _escaped_added(vocab: GGUFVocab, reasons: list[str], byte_fallback: bool) -> None:
    """llama.cpp renders special and user-defined entries as their text (a ``"▁"`` in one would be
    turned into a space by the decoder's ``Replace``), and only BYTE entries as a byte (HF's
    ``ByteFallback``, when the decoder has one, reads any ``<0xNN>``)."""
    for id_, attr in enumerate(vocab.specials.attrs):
        if attr & _ADDED and _SPACE in vocab.texts[id_]:
            reasons.append(f"token {id_} {vocab.texts[id_]!r} is rendered as its text by llama.cpp, but the "
                           "decoder turns its '\u2581' into a space")
            break
    for id_, attr in enumerate(vocab.specials.attrs if byte_fallback else ()):
        if not attr & ATTR_BYTE and _BYTE_TEXT.fullmatch(vocab.texts[id_]):
            reasons.append(f"token {id_} {vocab.texts[id_]!r} is not a BYTE token: llama.cpp renders its text, "
                           "the decoder's ByteFallback a byte")
            break


def _bpe(vocab: GGUFVocab) -> tuple[Stages, list[str]]:
    assert vocab.pre is not None
    reasons: list[str] = []
    splits = []
    for regex in vocab.pre.regexes:
        pattern, why = onig_regex(regex)
        reasons += why
        if pattern is not None:
            splits.append({"type": "Split", "pattern": _regex(pattern), "behavior": "Isolated", "invert": False})
    normalizer = None
    if vocab.pre.byte_encode:
        missing = [BYTES_TO_CHARS[b] for b in UTF8_BYTES if BYTES_TO_CHARS[b] not in vocab.token_ids]
        splits.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False})
        if missing and vocab.flags["ignore_merges"]:
            reasons.append(f"{len(missing)} byte symbols (first {missing[0]!r}) are not entries: llama.cpp drops "
                           "such a byte and joins nothing across it, but looks its whole piece up (ignore_merges), "
                           "where the piece cut at the byte would be looked up in parts")
        elif missing:  # llama.cpp drops such a byte and joins nothing across it: cut the piece there, without it
            splits.append({"type": "Split", "pattern": _regex("[" + "".join(map(onig_literal, missing)) + "]"),
                           "behavior": "Removed", "invert": False})
        steps: list[dict[str, Any]] = [{"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                         "use_regex": False}]
        if vocab.flags["add_space_prefix"]:
            steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    else:
        steps = _escaped_space_steps(vocab)
        _escaped_added(vocab, reasons, byte_fallback=True)
    if vocab.flags["escape_whitespaces"]:
        normalizer = {"type": "Replace", "pattern": {"String": " "}, "content": _SPACE}
    vocab_map, merges = _vocab_map(vocab, reasons), _bpe_merges(vocab)
    renames = unreachable_renames(vocab)
    if renames:
        for id_, text in renames.items():
            del vocab_map[vocab.texts[id_]]
            vocab_map[text] = id_
        gone = {vocab.texts[i] for i in renames}
        merges = [m for m in merges if m[0] not in gone and m[1] not in gone and m[0] + m[1] not in gone]
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": not vocab.pre.byte_encode,
             "ignore_merges": vocab.flags["ignore_merges"], "vocab": vocab_map, "merges": merges}
    unknown = next((p for p in merges if p[0] not in vocab_map or p[1] not in vocab_map
                    or p[0] + p[1] not in vocab_map), None)
    if unknown is not None:
        reasons.append(f"the merge {unknown[0]!r} {unknown[1]!r} names a text that is not a token: llama.cpp "
                       "keeps it, HF's BPE refuses to load it")
    pre = {"type": "Sequence", "pretokenizers": splits}
    return {"normalizer": normalizer, "pre_tokenizer": pre, "model": model, "decoder_steps": steps}, reasons


def _bpe_merges(vocab: GGUFVocab) -> list[list[str]]:
    """The file's merge lines as pairs, cut at the first space after the first character, each pair
    at its first rank (llama.cpp's load: ``bpe_ranks.emplace``)."""
    from ..formats.gguf_reader import GGUFStrings

    lines = vocab.merges or []
    lines = lines.decoded() if isinstance(lines, GGUFStrings) else list(lines)
    pairs: dict[tuple[str, str], None] = {}
    for line in lines:
        cut = line.find(" ", 1)
        pairs.setdefault((line[:cut], line[cut + 1:]) if cut >= 0 else ("", ""), None)
    return [list(pair) for pair in pairs]


def _wpm(vocab: GGUFVocab) -> tuple[Stages, list[str]]:
    from ..formats.gguf_keys import Tokenizer

    reasons: list[str] = []
    lowercase = bool(vocab.metadata.get(Tokenizer.NORMALIZER_LOWERCASE, True))
    strip_accents = bool(vocab.metadata.get(Tokenizer.NORMALIZER_STRIP_ACCENTS, lowercase))
    if strip_accents:
        reasons.append("WPM strip_accents: llama.cpp keeps the first code point of each character's NFD "
                       "(Hangul syllables lose their vowels), HF's BertNormalizer the whole NFD less its Mn marks")
    if lowercase:
        reasons.append("WPM lowercase: llama.cpp lowers each code point by its own 1:1 table, HF's "
                       "BertNormalizer by Rust's full lowercase mapping (one code point can become two)")
    reasons.append("WPM words: llama.cpp prefixes '\u2581' to every word, so a word starting with a '\u2581' of "
                   "the text is matched as '\u2581\u2581...' (an [UNK] where no entry starts so: '\u2581hello', "
                   "'x,\u2581hello'); no tokenizer.json puts a mark before every word (Metaspace and ByteLevel "
                   "skip a word already starting with it, Prepend marks the text once, Replace writes a fixed "
                   "text); their punctuation, control and CJK tables differ too")
    unk = vocab.specials.ids.get("unk")
    normalizer = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                  "strip_accents": strip_accents, "lowercase": lowercase}
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "BertPreTokenizer"},
        {"type": "Metaspace", "replacement": _SPACE, "prepend_scheme": "always", "split": False}]}
    model = {"type": "WordPiece", "unk_token": vocab.texts[unk] if unk is not None else "[UNK]",
             "continuing_subword_prefix": "", "max_input_chars_per_word": _NO_WORD_LIMIT,
             "vocab": _vocab_map(vocab, reasons)}
    steps = [_replace(_SPACE, " "), {"type": "Fuse"}]
    _escaped_added(vocab, reasons, byte_fallback=False)
    return {"normalizer": normalizer, "pre_tokenizer": pre, "model": model, "decoder_steps": steps}, reasons


def _llama_bytes(text: str) -> bytes:
    """llama.cpp's GPT-2 decoding of a NORMAL entry: each character's byte, and for a character
    outside the byte alphabet ``[UNK_BYTE_0x<its UTF-8 in hex><the entry>]``."""
    out = bytearray()
    for c in text:
        b = _CHAR_TO_BYTE.get(c)
        out += b"[UNK_BYTE_0x" + c.encode("utf-8").hex().encode() + text.encode("utf-8") + b"]" if b is None \
            else bytes((b,))
    return bytes(out)


def unreachable_renames(vocab: GGUFVocab) -> dict[int, str]:
    """Id -> new text of the NORMAL entries of a byte-level BPE vocabulary that hold a character
    outside the byte alphabet, written under the byte symbols of llama.cpp's rendering of them.

    No text reaches such an entry in either engine: the pieces BPE starts from are byte
    symbols, and a merge of byte-symbol texts makes a byte-symbol text. llama.cpp renders
    one as an ``[UNK_BYTE_0x..]`` marker, which HF's ``ByteLevel`` decoder gives for its new
    text with no decoder step of its own (Command-R has 1403). Empty when the vocabulary
    looks a whole piece up (``ignore_merges``: a piece could spell the new text), when a new
    text is an entry already, or for a vocabulary that is not byte-level BPE."""
    if vocab.vocab_type != "bpe" or vocab.pre is None or not vocab.pre.byte_encode or vocab.flags["ignore_merges"]:
        return {}
    renames: dict[int, str] = {}
    for id_, attr in enumerate(vocab.specials.attrs):
        text = vocab.texts[id_]
        if attr & ATTR_NORMAL and not attr & _ADDED and text and not all(c in _CHAR_TO_BYTE for c in text):
            renames[id_] = "".join(BYTES_TO_CHARS[b] for b in _llama_bytes(text))
    taken = set(vocab.token_ids)
    if len(set(renames.values())) != len(renames) or not taken.isdisjoint(renames.values()):
        return {}
    return renames


def _byte_level_renderings(vocab: GGUFVocab, reasons: list[str]) -> list[dict[str, Any]]:
    """A ``Replace`` of each entry HF's ``ByteLevel`` decoder would render otherwise than llama.cpp,
    by the byte symbols of llama.cpp's rendering: added entries written in the byte alphabet
    (llama.cpp renders their text, ByteLevel their bytes) and NORMAL entries holding a character
    outside it (llama.cpp writes a marker, ByteLevel the text). One decoder step per entry: more
    than `_MAX_RENDERINGS` is refused (every token would go through that many regex searches)."""
    found: list[tuple[int, bytes]] = []
    renamed = unreachable_renames(vocab)
    for id_, attr in enumerate(vocab.specials.attrs):
        text = vocab.texts[id_]
        if not text or id_ in renamed:
            continue
        if attr & _ADDED:
            if all(c in _CHAR_TO_BYTE for c in text) and bytes(map(_CHAR_TO_BYTE.__getitem__, text)) != \
                    text.encode("utf-8"):
                found.append((id_, text.encode("utf-8")))
        elif attr & ATTR_NORMAL and not all(c in _CHAR_TO_BYTE for c in text):
            found.append((id_, _llama_bytes(text)))
    if len(found) > _MAX_RENDERINGS:
        first = found[0][0]
        reasons.append(f"{len(found)} entries (first {first} {vocab.texts[first]!r}) are rendered by llama.cpp "
                       "otherwise than by HF's ByteLevel decoder (a NORMAL entry outside the byte alphabet: "
                       "an [UNK_BYTE_0x..] marker; an added entry in it: its text), each needing its own "
                       "decoder step")
        return []
    return [_replace(f"\\A{onig_literal(vocab.texts[i])}\\z", "".join(BYTES_TO_CHARS[b] for b in rendered))
            for i, rendered in found]


def _decoder(vocab: GGUFVocab, steps: list[dict[str, Any]], reasons: list[str]) -> dict[str, Any]:
    """`steps` with llama.cpp's empty renderings before them and its clean-up after them."""
    texts, attrs = vocab.texts, vocab.specials.attrs
    first: list[dict[str, Any]] = []
    silent = [texts[i] for i, a in enumerate(attrs) if not a & _RENDERED and texts[i]]
    if silent:
        first.append(_replace("\\A(?:" + "|".join(map(onig_literal, silent)) + ")\\z", ""))
    if steps[0]["type"] == "ByteLevel":
        first += _byte_level_renderings(vocab, reasons)
    last = [_replace(p, c) for p, c in _CLEAN_SPACES] if vocab.flags["clean_spaces"] else []
    return {"type": "Sequence", "decoders": first + steps + last}
