"""Make the small synthetic SentencePiece models of tests/data/sentencepiece/.

Each model pins one rule of sentencepiece's encoder or decoder (tests/formats/
test_sentencepiece_rules.py). They are trained by sentencepiece's own trainer
(the test extra ``sentencepiece``, 0.2.3) on a small text this script writes, with
one option changed per model; some get a post-edit that the trainer cannot make
(UNUSED pieces; a ``-0.0`` score; escape_whitespaces off). Expected ids never come from here: the tests
run sentencepiece on the same files.

Run: ``python tools/make_synthetic_spm.py [OUT_DIR]`` (default tests/data/sentencepiece).
"""

from __future__ import annotations

import io
import os
import struct
import sys
import tempfile
from pathlib import Path

import sentencepiece as spm

LINES = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello world, hello there, hello again!",
    "I said  hello   to the    world twice.",
    "Numbers: 12345 and 67890, also 3.14159.",
    "A foo bar baz sentence with foo and bar and baz.",
    "Ｆｕｌｌｗｉｄｔｈ letters and ｎｕｍｂｅｒｓ １２３.",
    "Café, naïve, résumé, coöperate, façade.",
    "日本語のテキストも少しあります。東京と京都。",
    "Tabs\tand\tnewlines\nin the middle.",
    "Repeat repeat repeat the words the words.",
    "<sep> marks a boundary; [CTRL] is a control symbol.",
    "abc abcd abcde ab a xyz xy x",
]

# A small normalization rule set (TSV of hex code points): multi-character keys
# for the longest match, a key mapping to two spaces, full-width letters, a key
# that starts with a space (" !" -> "!").
RULES = """41 42 43\t78 79 7A
41 42\t71
FF21\t41
FF22\t42
3000\t20
2003\t20 20
2460\t31
20 21\t21
"""
# A denormalization rule set: turns the letter q back into Q, and "xyz" into "ABC".
DENORM_RULES = """71\t51
78 79 7A\t41 42 43
"""

BASE = dict(vocab_size=120, character_coverage=1.0, normalization_rule_name="identity", minloglevel=2,
            hard_vocab_limit=False)

MODELS: dict[str, dict[str, object]] = {
    "word": dict(model_type="word", vocab_size=60),
    "char": dict(model_type="char", user_defined_symbols=["<sep>", "foo"]),
    "bpe-byte-fallback": dict(model_type="bpe", byte_fallback=True, vocab_size=400, character_coverage=0.98),
    "unigram-byte-fallback": dict(model_type="unigram", byte_fallback=True, vocab_size=400,
                                  character_coverage=0.98),
    "bpe-user-control": dict(model_type="bpe", user_defined_symbols=["<sep>", "foo", "baz qux"],
                             control_symbols=["[CTRL]", "<ctl>", "ll"]),
    "unigram-user-control": dict(model_type="unigram", user_defined_symbols=["<sep>", "foo", "abc"],
                                 control_symbols=["[CTRL]", "<ctl>"]),
    "bpe-suffix": dict(model_type="bpe", treat_whitespace_as_suffix=True),
    "unigram-suffix": dict(model_type="unigram", treat_whitespace_as_suffix=True),
    "bpe-no-dummy-prefix": dict(model_type="bpe", add_dummy_prefix=False),
    "unigram-no-dummy-prefix": dict(model_type="unigram", add_dummy_prefix=False),
    "bpe-keep-spaces": dict(model_type="bpe", remove_extra_whitespaces=False),
    "unigram-keep-spaces-no-prefix": dict(model_type="unigram", remove_extra_whitespaces=False,
                                          add_dummy_prefix=False),
    "unigram-no-escape": dict(model_type="unigram"),
    "unigram-rules": dict(model_type="unigram", normalization_rule_tsv="RULES", user_defined_symbols=["ＡＢ"]),
    "bpe-rules-keep-spaces": dict(model_type="bpe", normalization_rule_tsv="RULES",
                                  remove_extra_whitespaces=False),
    "unigram-denormalizer": dict(model_type="unigram", denormalization_rule_tsv="DENORM"),
    "bpe-unk-surface": dict(model_type="bpe", unk_surface="<?>"),
    "unigram-unk-surface": dict(model_type="unigram", unk_surface=""),
    "unigram-split-digits-pad": dict(model_type="unigram", split_digits=True, pad_id=3, bos_id=-1),
    "bpe-unused": dict(model_type="bpe", vocab_size=200),
    "unigram-unused": dict(model_type="unigram", vocab_size=200),
    "word-unused": dict(model_type="word", vocab_size=60),
    "unigram-whole-text": dict(model_type="unigram", split_by_whitespace=False, vocab_size=200),
    "bpe-whole-text": dict(model_type="bpe", split_by_whitespace=False, vocab_size=200),
}

# Models whose charsmap alone is ~240 kB: not committed; the tests train them with `train`.
LARGE: dict[str, dict[str, object]] = {
    "bpe-nfkc-cf": dict(model_type="bpe", normalization_rule_name="nfkc_cf"),
    "unigram-nmt-nfkc": dict(model_type="unigram", normalization_rule_name="nmt_nfkc"),
}


def train(name: str, options: dict[str, object], workdir: Path) -> bytes:
    """Train one model in memory (the sentences come from an iterator and the rule files are
    named relative to `workdir`, so no temporary path ends up in the file)."""
    args = {**BASE, **options}
    for key, text in (("normalization_rule_tsv", RULES), ("denormalization_rule_tsv", DENORM_RULES)):
        if key in args:
            (workdir / f"{key}.tsv").write_text(text, encoding="utf-8")
            args[key] = f"{key}.tsv"
    model = io.BytesIO()
    here = os.getcwd()
    os.chdir(workdir)
    try:
        spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES * 3), model_writer=model, **args)
    finally:
        os.chdir(here)
    return model.getvalue()


# -- post-edits: a minimal protobuf writer for the top-level pieces --------------------------

def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def edit_pieces(data: bytes, edit) -> bytes:  # type: ignore[no-untyped-def]
    """Re-serialize the ``pieces`` fields (1) with ``edit(index, piece, score, type)`` applied."""
    out = bytearray()
    pos, index = 0, 0
    while pos < len(data):
        start = pos
        tag, pos = _read_varint(data, pos)
        size, body = _read_varint(data, pos)
        if tag != 0x0A:
            pos = body + size
            out += data[start:pos]
            continue
        piece, score, kind, at = "", 0.0, 1, body
        while at < body + size:
            ftag, at = _read_varint(data, at)
            if ftag == 0x0A:
                n, at = _read_varint(data, at)
                piece, at = data[at:at + n].decode(), at + n
            elif ftag == 0x15:
                score, at = struct.unpack_from("<f", data, at)[0], at + 4
            else:
                kind, at = _read_varint(data, at)
        piece, score, kind = edit(index, piece, score, kind)
        raw = piece.encode()
        msg = b"\x0a" + _varint(len(raw)) + raw + b"\x15" + struct.pack("<f", score) + b"\x18" + _varint(kind)
        out += b"\x0a" + _varint(len(msg)) + msg
        pos, index = body + size, index + 1
    return bytes(out)


def mark_unused(data: bytes) -> bytes:
    """Make a few multi-character merged pieces UNUSED (type 5), to pin the resegmentation."""
    wanted = {"▁hello", "▁the", "ll", "▁wor", "ep", "▁fo", "oo", "▁world", "▁words", "he"}
    return edit_pieces(data, lambda i, p, s, t: (p, s, 5 if p in wanted else t))


def negative_zero(data: bytes) -> bytes:
    """Give "▁h" the score -0.0 and "el" 0.0, so only the sign of zero orders the two merges."""
    scores = {"▁h": -0.0, "el": 0.0}
    return edit_pieces(data, lambda i, p, s, t: (p, scores.get(p, s), t))


def no_escape(data: bytes) -> bytes:
    """Append ``normalizer_spec { escape_whitespaces: false }`` (the trainers refuse to train so).

    A singular message field seen twice is merged by protobuf, so this one flag changes.
    """
    return data + b"\x1a\x02\x28\x00"


def main(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, options in MODELS.items():
            data = train(name, options, Path(tmp))
            if name == "unigram-no-escape":
                data = no_escape(data)
            if name in ("unigram-unused", "word-unused"):
                data = mark_unused(data)
            if name == "bpe-unused":
                (out_dir / "bpe-negative-zero.model").write_bytes(negative_zero(data))
                data = mark_unused(data)
            (out_dir / f"{name}.model").write_bytes(data)
            print(f"{name}.model: {len(data)} bytes")


if __name__ == "__main__":
    default = Path(__file__).resolve().parent.parent / "tests/data/sentencepiece"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
