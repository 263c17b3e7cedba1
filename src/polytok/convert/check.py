"""The check `polytok.convert.converter.to_gguf` runs on every GGUF it writes, before it reports success.

The written file is read back with polytok's GGUF reader (llama.cpp's rules:
llama-vocab.cpp, held to llama.cpp by the goldens of tools/gen_convert_goldens.py)
and its ids are compared with those of the tokenizer the converter read, as polytok
reads it (HF tokenizers' rules for a tokenizer.json, sentencepiece's for a
tokenizer.model, with the folder's redefinitions), on `CHECK_TEXTS` and on the
folder's special tokens, each alone. A difference is a `ConversionCheckError` that
names the first differing text; nothing is left at the output path.

llama.cpp does not run every converted tokenizer as its source engine does. Where
the converter's path makes it differ (measured on the goldens, see
tests/formats/test_convert_check.py), the check compares against what llama.cpp
does instead, or names the difference and does not compare that text:

- every path: the folder's ``truncation`` is not applied (llama.cpp has none);
- ``redefinition``: a tokenizer.json added token giving an existing id a new
  text is a new id to HF (``add_tokens`` ignores the file's id), the converter
  writes the text at that id (`polytok.formats.redefinitions`): the source's ids
  are compared with each such new id read as the base id;
- GPT-2 BPE path (`DIFFERENCES` ``normalizer``, ``ignore-merges``): llama.cpp's BPE
  session runs no normalizer, and ``ignore_merges`` is what the GGUF's pre type
  says (llama-vocab.cpp ``impl::load``: only the llama3 pre type sets it; the
  converter's hash table may name another row for the same tokenizer). The text
  is compared with the tokenizer.json read again with its normalizer dropped and
  ``ignore_merges`` as the GGUF has it;
- ``eog-text``: llama.cpp makes its end-of-generation texts (``</s>``,
  ``<|im_end|>``, … `polytok.formats.gguf_token_attrs.LLAMA_EOG_TEXTS`) control tokens whatever the
  file says, so a base-vocabulary ``</s>`` is one token in parse mode;
- ``added-made-control``: an added token HF keeps non-special (matched even with
  ``encode_special_tokens``) that the converter writes CONTROL, because it looks
  special (conversion/base.py ``does_token_look_special``) or is one of the
  tokenizer's named special tokens (gguf-py ``LlamaHfVocab``), or because llama.cpp
  promotes end-of-generation texts, is text to llama.cpp without ``parse_special``;
- ``added-space-mark``: a non-special added token holding ``▁`` (gemma's whitespace
  runs) is kept NORMAL, as llama.cpp renders a USER_DEFINED token's text as it is
  where HF's decoder makes ``▁`` a space; HF matches it whole in text that spells
  the ``▁`` itself, llama.cpp merges it from pieces there;
- ``missing-byte-symbol``: a byte-level vocabulary lacking the symbol of a byte UTF-8
  text can hold (Falcon's control characters): llama.cpp drops that byte and joins
  nothing across it, HF's BPE joins across the gap; the check tries each such byte;
- ``lstrip-space``: llama.cpp strips the ASCII spaces before a token that takes them
  (RoBERTa's ``<mask>``, written under the ``jina-v2-code`` pre name for it), HF every
  Unicode one; the check tries a no-break space before each such token;
- ``added-made-user-defined``: a special added token of the tokenizer.json that is
  none of its named special tokens is USER_DEFINED in the GGUF (gguf-py
  ``LlamaHfVocab``, the Llama HF path with ``like_converter``), which llama.cpp
  matches even without ``parse_special``;
- Llama HF path (``llama-hf-scores``): with ``like_converter``, every piece
  scores -1000 as gguf-py's ``LlamaHfVocab`` writes it, so llama.cpp's score merges
  split words otherwise than the tokenizer.json's ranked merges: the check compares
  the text the GGUF's ids spell with the tokenizer.json's pieces (with the scores of
  the merge ranks, the default, the ids are compared);
  (``leading-space``, either way: llama.cpp puts its space prefix before text that starts with
  a space, the whole text or the text after a special token, where HF's Metaspace
  ``prepend_scheme: first`` adds none: one more space in that run);
- BERT path (``bert-preprocess``): llama.cpp's own WordPiece preprocessing
  (llama-vocab.cpp ``llm_tokenizer_wpm_session::preprocess``) differs from HF's
  BertNormalizer and WordPiece on combining marks, Hangul, control and format
  characters, and words longer than ``max_input_chars_per_word``;
- SentencePiece path (``sentencepiece-modes``): sentencepiece, the source's
  engine, adds no BOS/EOS and parses no markers, so only ``add_special=False``,
  ``special="text"`` is compared.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import PolytokError
from ..formats import folder as folder_files
from ..formats.gguf_token_attrs import LLAMA_EOG_TEXTS
from ..tokenizer import Tokenizer

if TYPE_CHECKING:
    from ..formats.gguf import GGUFVocab
from .texts import CHECK_TEXTS

__all__ = ["ConversionCheckError", "CheckReport", "DIFFERENCES", "check_gguf"]

DIFFERENCES = {
    "redefinition": "a config's text for an existing id: HF appends it as a new id, the converter writes it "
                    "at that id",
    "normalizer": "llama.cpp's BPE runs no normalizer; the tokenizer.json's changes this text",
    "ignore-merges": "the tokenizer.json's BPE takes a word found whole in the vocabulary (ignore_merges); "
                     "llama.cpp merges it, its pre type having no ignore_merges",
    "eog-text": "llama.cpp makes an end-of-generation text a control token whatever the file says",
    "added-made-control": "an added token HF keeps non-special (matched even as text) is CONTROL in the GGUF "
                          "(it looks special, is a named special token or an end-of-generation text): llama.cpp "
                          "matches it only with parse_special",
    "added-made-user-defined": "a special added token of the tokenizer.json that is none of its named special "
                               "tokens is USER_DEFINED in the GGUF (gguf-py LlamaHfVocab), which llama.cpp "
                               "matches even without parse_special",
    "llama-hf-scores": "every score is -1000 (gguf-py LlamaHfVocab): llama.cpp's score merges split the text "
                       "otherwise; the pieces spell the same text",
    "leading-space": "llama.cpp puts its space prefix before text that starts with a space (the whole text, "
                     "or the text after a special token), HF's Metaspace (prepend_scheme first) does not",
    "added-space-mark": "a non-special added token holding '\u2581' (gemma's whitespace runs) is matched whole by "
                        "HF in text that spells the '\u2581' itself; the GGUF keeps it NORMAL (llama.cpp renders "
                        "a USER_DEFINED token's text as it is, where HF's decoder turns '\u2581' into a space) and "
                        "llama.cpp merges it from pieces there",
    "lstrip-space": "llama.cpp strips the ASCII spaces before a token that takes them (lstrip), HF every Unicode "
                    "space: a no-break space before RoBERTa's <mask> stays a piece to llama.cpp",
    "missing-byte-symbol": "the byte-level vocabulary has no symbol for a byte of this text: llama.cpp drops the "
                           "byte and joins nothing across it, HF's BPE joins across the gap",
    "bert-preprocess": "llama.cpp's WordPiece preprocessing differs from HF's on combining marks, Hangul, "
                       "control and format characters and over-long words",
    "sentencepiece-modes": "sentencepiece adds no BOS/EOS and parses no markers: only add_special=False, "
                           "special=text is compared",
}
# (add_special, special): llama.cpp's usual call (parse_special off) and HF's default; sentencepiece has one
_MODES = ((True, "text"), (True, "parse"))
_SENTENCEPIECE_MODES = ((False, "text"),)
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_MAX_SPECIALS = 32


class ConversionCheckError(PolytokError):
    """The GGUF written does not read back as the tokenizer it was converted from."""


@dataclass
class CheckReport:
    """What the read-back compared: (text, mode) pairs, and those that differ by a named difference."""

    compared: int = 0
    #: (text name, add_special, special, difference name) of each pair whose ids differ
    differing: list[tuple[str, bool, str, str]] = field(default_factory=list)
    #: differences that cover whole modes (no pair of them is compared)
    skipped: list[str] = field(default_factory=list)

    @property
    def known(self) -> dict[str, list[str]]:
        """The text names each named difference excused."""
        out: dict[str, list[str]] = {name: ["(whole mode)"] for name in self.skipped}
        for text, _, _, name in self.differing:
            if text not in out.setdefault(name, []):
                out[name].append(text)
        return out

    def line(self) -> str:
        known = "; ".join(f"{name} ({len(texts)})" for name, texts in self.known.items())
        return f"check: {self.compared} text x mode pairs read back" + (f"; known differences: {known}"
                                                                        if known else "; no difference")


def check_gguf(folder: Path, gguf_path: Path, path: str, redefined: dict[str, int] | None = None, *,
               like_converter: bool = False) -> CheckReport:
    """Read `gguf_path` back and compare it with the tokenizer of `folder` (module notes).

    `path` is the converter's ``set_vocab`` path (``facts["path"]`` of `keys_for`);
    `redefined` maps each text the converter wrote over an existing id to that id.

    Raises:
        ConversionCheckError: the GGUF cannot be read back, or a text differs (named).
    """
    from ..formats.gguf import build_tokenizer, read_gguf_vocab

    try:
        vocab = read_gguf_vocab(gguf_path)
        written = build_tokenizer(vocab)
    except PolytokError as exc:
        raise ConversionCheckError(f"the GGUF written cannot be read back ({exc})") from None
    return _Check(folder, written, path, redefined or {}, vocab, like_converter).run()


def _char_with_byte(b: int) -> str:
    """A character whose UTF-8 holds the byte `b` (one of `UTF8_BYTES`)."""
    if b < 0xC0:  # ASCII itself; a continuation byte ends U+0080..U+00BF
        return chr(b)
    if b < 0xE0:
        return chr((b & 0x1F) << 6)
    if b < 0xF0:
        return chr(max((b & 0x0F) << 12, 0x800))
    return chr(max((b & 0x07) << 18, 0x10000))


class _Check:
    def __init__(self, folder: Path, written: Tokenizer, path: str, redefined: dict[str, int],
                 vocab: GGUFVocab, like_converter: bool) -> None:
        self.folder, self.written, self.path = folder, written, path
        self.like_converter = like_converter  # the llama-hf path's -1000 scores, not the ranks'
        # the GGUF as llama.cpp loads it: token attributes, ignore_merges, byte-encoded words
        self.attrs = vocab.specials.attrs
        self.ignore_merges = vocab.flags["ignore_merges"]
        self.byte_level = vocab.pre is not None and vocab.pre.byte_encode
        self._missing: list[int] | None = None
        self.source = _source(folder, path)
        # the source's id of each redefined text -> the base id the converter gave it
        found = {text: self.source.token_to_id(text) for text in redefined}
        self.moved = {i: redefined[text] for text, i in found.items() if i is not None and i != redefined[text]}
        self.report = CheckReport()
        self._llama_view: Tokenizer | None = None
        self._limit: int | None = None

    def run(self) -> CheckReport:
        modes = _SENTENCEPIECE_MODES if self.path == "sentencepiece" else _MODES
        if self.path == "sentencepiece":
            self.report.skipped.append("sentencepiece-modes")
        for name, text in [*CHECK_TEXTS, *self._special_texts()]:
            for add_special, special in modes:
                self._one(name, text, add_special, special)
        return self.report

    def _special_texts(self) -> list[tuple[str, str]]:
        """Each special token of the source alone: the named ones, then the first added ones."""
        names = {id_: n for n, id_ in self.source.special_ids.items()}
        added = sorted(self.source.added.content_to_id.items(), key=lambda kv: kv[1])
        texts = [(f"special {names[i]}", t) for t, i in added if i in names]
        texts += [(f"added {i}", t) for t, i in added if i not in names][:_MAX_SPECIALS]
        # a token taking the spaces before it: after a space only Unicode calls one (no-break space)
        texts += [(f"lstrip {i}", f"a\u00a0{t} b") for t, i in added if self.source.added.id_to_entry[i].lstrip]
        texts += [(f"byte {b:#04x}", "a{0}b !{0}! 1{0}1 ({0}) \t{0}\t".format(_char_with_byte(b)))
                  for b in self._missing_bytes()[:_MAX_SPECIALS]]
        return texts

    def _missing_bytes(self) -> list[int]:
        """The bytes UTF-8 text can hold whose byte-level symbol is no entry (GPT-2 path only)."""
        if self._missing is None:
            from ..text.byte_alphabet import BYTES_TO_CHARS, UTF8_BYTES

            self._missing = [b for b in UTF8_BYTES if self.path == "gpt2" and self.byte_level
                             and self.source.token_to_id(BYTES_TO_CHARS[b]) is None]
        return self._missing

    def _one(self, name: str, text: str, add_special: bool, special: str) -> None:
        source = self.source.encode_full(text, add_special=add_special, special=special, truncation=False).ids
        got = self.written.encode(text, add_special=add_special, special=special)
        self.report.compared += 1
        if got == source:
            return
        known = self._known(text, add_special, special, source, got)
        if known is None:
            raise ConversionCheckError(_message(name, text, add_special, special, source, got))
        self.report.differing.append((name, add_special, special, known))

    def _known(self, text: str, add_special: bool, special: str, source: list[int], got: list[int]) -> str | None:
        if self.moved and [self.moved.get(i, i) for i in source] == got:
            return "redefinition"
        if special == "parse" and self._eog_text(text):
            return "eog-text"
        if special == "text" and self._added_made_control(text):
            return "added-made-control"
        if special == "text" and self._added_made_user_defined(text):
            return "added-made-user-defined"
        if self._added_space_mark(text):
            return "added-space-mark"
        if self._missing_bytes() and not set(text.encode("utf-8")).isdisjoint(self._missing_bytes()):
            return "missing-byte-symbol"
        if special == "parse" and self._lstrip_unicode_space(text):
            return "lstrip-space"
        if self.path == "llama-hf":
            return self._llama_hf(text, source, got)
        if self.path == "bert" and _bert_preprocess_differs(text, self._word_limit()):
            return "bert-preprocess"
        if self.path == "gpt2":
            view = self._view()
            if view is not None and view.encode(text, add_special=add_special, special=special) == got:
                normalizer = self.source.normalizer
                return "normalizer" if normalizer is not None and normalizer.normalize(text) != text \
                    else "ignore-merges"
        return None

    def _llama_hf(self, text: str, source: list[int], got: list[int]) -> str | None:
        # both spelled with the source's pieces: the GGUF's ids must name the same pieces
        a, b = _spelled(self.source, source), _spelled(self.source, got)
        if a == b and self.like_converter:
            return "llama-hf-scores"
        same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        if same > 0 and a[same - 1:same] == b[same:same + 1] == b" " and b[same + 1:] == a[same:]:
            return "leading-space"  # one more space in a run of spaces the source spells too
        return None

    def _eog_text(self, text: str) -> bool:
        """A marker llama.cpp promotes to control is one token in the GGUF and not in the source."""
        for marker in LLAMA_EOG_TEXTS:
            if marker in text and self.source.token_to_id(marker) is not None \
                    and marker not in self.source.added.content_to_id \
                    and len(self.written.encode(marker, add_special=False, special="parse")) == 1:
                return True
        return False

    def _added_made_control(self, text: str) -> bool:
        """An added token the source matches as text that is a control token in the GGUF: it looks
        special, is one of the tokenizer's named special tokens, or is an end-of-generation text."""
        from ..formats.redefinitions import looks_special

        named = {self.source.id_to_token(i) for i in self.source.special_ids.values()}
        for marker, id_ in self.source.added.content_to_id.items():
            if marker in text and (looks_special(marker) or marker in named or marker in LLAMA_EOG_TEXTS) \
                    and self.source.encode(marker, add_special=False, special="text") == [id_] \
                    and self.written.encode(marker, add_special=False, special="parse") == [id_] \
                    and self.written.encode(marker, add_special=False, special="text") != [id_]:
                return True
        return False

    def _word_limit(self) -> int:
        """The WordPiece model's ``max_input_chars_per_word`` (HF's default 100)."""
        from .gguf_vocab import read_tokenizer_json_data

        if self._limit is None:
            value = read_tokenizer_json_data(self.folder)["model"].get("max_input_chars_per_word", 100)
            self._limit = value if isinstance(value, int) else 100
        return self._limit

    def _lstrip_unicode_space(self, text: str) -> bool:
        """The text has a space only Unicode calls one before a token that takes the spaces before it."""
        for marker, id_ in self.source.added.content_to_id.items():
            at = text.find(marker)
            if self.source.added.id_to_entry[id_].lstrip and at > 0 and text[at - 1].isspace() \
                    and not text[at - 1].isascii():
                return True
        return False

    def _added_space_mark(self, text: str) -> bool:
        """The text spells a non-special added token holding '▁' that the GGUF keeps NORMAL."""
        from ..formats.gguf_token_attrs import ATTR_NORMAL

        for marker, id_ in self.source.added.content_to_id.items():
            if "\u2581" in marker and marker in text and id_ < len(self.attrs) and self.attrs[id_] & ATTR_NORMAL \
                    and self.source.encode(marker, add_special=False, special="text") == [id_]:
                return True
        return False

    def _added_made_user_defined(self, text: str) -> bool:
        """A special added token of the source (kept as text by ``encode_special_tokens``) that is not one of
        its named special tokens, which the GGUF matches as text: a USER_DEFINED token."""
        named = {self.source.id_to_token(i) for i in self.source.special_ids.values()}
        for marker, id_ in self.source.added.content_to_id.items():
            if marker in text and marker not in named \
                    and self.source.encode(marker, add_special=False, special="text") != [id_] \
                    and self.written.encode(marker, add_special=False, special="text") == [id_]:
                return True
        return False

    def _view(self) -> Tokenizer | None:
        """The folder's tokenizer.json as llama.cpp runs a GPT-2 BPE GGUF (None when it is the source)."""
        if self._llama_view is None:
            self._llama_view = _llama_view(self.folder, self.ignore_merges) or self.source
        return None if self._llama_view is self.source else self._llama_view


def _source(folder: Path, path: str) -> Tokenizer:
    if path == "sentencepiece":
        from ..formats.redefinitions import read_sentencepiece_folder

        return read_sentencepiece_folder(folder_files.where(folder, "tokenizer.model"))
    from ..formats.hf_json import read_model_folder

    return read_model_folder(folder)


def _llama_view(folder: Path, ignore: bool) -> Tokenizer | None:
    """The folder read with its tokenizer.json's normalizer dropped and ignore_merges as the GGUF has it."""
    from ..formats.hf_json import read_model_folder
    from .gguf_vocab import read_tokenizer_json_data

    data = read_tokenizer_json_data(folder)
    if data.get("normalizer") is None and bool(data["model"].get("ignore_merges", False)) == ignore:
        return None
    data = {**data, "normalizer": None, "model": {**data["model"], "ignore_merges": ignore}}
    with tempfile.TemporaryDirectory(prefix="polytok-check-") as tmp:
        for name in ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"):
            found = folder_files.find(folder, name)
            if found is not None:
                shutil.copyfile(found, Path(tmp) / found.name)
        (Path(tmp) / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
        return read_model_folder(tmp)


def _spelled(tok: Tokenizer, ids: list[int]) -> bytes:
    """The bytes the SentencePiece-style pieces of `ids` spell (``▁`` a space, ``<0xXX>`` a byte)."""
    out = bytearray()
    for id_ in ids:
        piece = tok.id_to_token(id_) or ""
        byte = _BYTE_PIECE.fullmatch(piece)
        out += bytes([int(byte.group(1), 16)]) if byte else piece.replace("\u2581", " ").encode("utf-8")
    return bytes(out)


def _bert_preprocess_differs(text: str, limit: int) -> bool:
    if any(len(word) > limit for word in text.split()):
        return True
    return any(_bert_sensitive(c) for c in unicodedata.normalize("NFD", text))


def _bert_sensitive(c: str) -> bool:
    category = unicodedata.category(c)
    if category[0] == "M" or category in ("Cf", "Co", "Cn") or (category == "Cc" and c not in "\t\n\r"):
        return True
    return "\u1100" <= c <= "\u11ff" or "\uac00" <= c <= "\ud7a3"


def _message(name: str, text: str, add_special: bool, special: str, source: list[int], got: list[int]) -> str:
    at = next((i for i, (a, b) in enumerate(zip(source, got)) if a != b), min(len(source), len(got)))
    lo = max(0, at - 2)
    return (f"the GGUF written does not read back as the folder's tokenizer: text {name} {text[:40]!r} "
            f"(add_special={add_special}, special={special}) gives ids {got[lo:at + 6]} from position {lo} "
            f"where the folder's tokenizer gives {source[lo:at + 6]}")

