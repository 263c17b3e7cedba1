"""The hostile-file corpus: small bad files of every format, each with where its error must point.

Every case is made here from scratch (tiny synthetic tokenizers written by this module,
then broken in one place), so nothing GitHub-origin is committed or needed. A case is
``Case(id, files, entry, where)``: ``files`` maps file names to bytes (written side by
side into one folder), ``entry`` is the file handed to `polytok.load` (with ``options``),
and ``where`` the attributes the `FormatError` must carry (``key``, ``offset``, ``line``;
``file`` must end with ``error_file``, default ``entry``). Offsets are computed from the
bytes this module lays out, not read back from polytok.

tools/make_hostile_corpus.py writes the corpus to a folder to look at or feed elsewhere.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from formats.gguf_pack import ARRAY, FLOAT32, INT32, STRING, UINT32, pack_gguf, pack_header, pack_kv, pack_string
from formats.sentencepiece_pack import field as pb_field
from formats.sentencepiece_pack import model as pb_model
from formats.sentencepiece_pack import piece as pb_piece
from formats.sentencepiece_pack import varint

__all__ = ["Case", "CASES"]


@dataclass(frozen=True)
class Case:
    id: str
    files: dict[str, bytes]
    entry: str
    where: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)
    error_file: str | None = None


CASES: list[Case] = []


def case(id: str, files: dict[str, bytes], entry: str, error_file: str | None = None,
         options: dict[str, Any] | None = None, **where: Any) -> None:
    CASES.append(Case(id, files, entry, where, options or {}, error_file))


# --- tokenizer.json ----------------------------------------------------------------------------

def hf_base() -> dict[str, Any]:
    """A tiny valid byte-level BPE tokenizer.json (GPT-2 style)."""
    vocab = {c: i for i, c in enumerate(["a", "b", "c", "Ġ", "ab", "abc", "<unk>"])}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 7, "content": "<|end|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]},
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                           "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": ["a b", "ab c"]},
    }


def hf(edit: Callable[[dict[str, Any]], Any]) -> dict[str, bytes]:
    data = hf_base()
    edit(data)
    return {"tokenizer.json": json.dumps(data).encode()}


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        node = data
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    return edit


def _delete(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.pop(key)


TJ = "tokenizer.json"
case("json-invalid", {TJ: b'{"version": "1.0",\n "model": {,}}'}, TJ, line=2, offset=30)
case("json-not-utf8", {TJ: b'{"version": "1.0", "model": "\xff"}'}, TJ, offset=29)
case("json-top-level-list", {TJ: b"[1, 2]"}, TJ, key=None)
case("json-version", hf(_set(["version"], "2.0")), TJ, key="version")
case("json-missing-model", hf(_delete("model")), TJ, key="model")
case("json-model-type-unknown", hf(_set(["model", "type"], "Nope")), TJ, key="model.type")
case("json-model-type-list", hf(_set(["model", "type"], [])), TJ, key="model.type")
case("json-pretok-type-unknown", hf(_set(["pre_tokenizer", "pretokenizers", 1, "type"], "Nope")), TJ,
     key="pre_tokenizer.pretokenizers[1].type")
case("json-pretok-type-object", hf(_set(["pre_tokenizer", "pretokenizers", 0, "type"], {})), TJ,
     key="pre_tokenizer.pretokenizers[0].type")
case("json-normalizer-type-unknown", hf(_set(["normalizer", "normalizers", 1, "type"], "Upper")), TJ,
     key="normalizer.normalizers[1].type")
case("json-decoder-type-number", hf(_set(["decoder", "type"], 5)), TJ, key="decoder.type")
case("json-post-type-list", hf(_set(["post_processor", "type"], ["x"])), TJ, key="post_processor.type")
case("json-merge-missing-token", hf(_set(["model", "merges"], ["a b", "ab z"])), TJ, key="model.merges[1]")
case("json-merge-not-pair", hf(_set(["model", "merges"], ["a b", "abc"])), TJ, key="model.merges[1]")
case("json-vocab-list", hf(_set(["model", "vocab"], [["a", 0]])), TJ, key="model.vocab")
case("json-vocab-id-string", hf(_set(["model", "vocab", "b"], "1")), TJ, key="model.vocab.b")
case("json-added-id-string", hf(_set(["added_tokens", 0, "id"], "7")), TJ, key="added_tokens[0].id")
case("json-added-not-list", hf(_set(["added_tokens"], {"id": 7})), TJ, key="added_tokens")
case("json-added-content-missing", hf(lambda d: d["added_tokens"][0].pop("content")), TJ,
     key="added_tokens[0]")  # a missing key is named by its object's path (the message names the key)
case("json-split-regex-invalid", hf(_set(["pre_tokenizer", "pretokenizers", 0, "pattern"], {"Regex": "(a"})),
     TJ, key="pre_tokenizer.pretokenizers[0].pattern.Regex")
case("json-split-behavior", hf(_set(["pre_tokenizer", "pretokenizers", 0, "behavior"], "Sideways")), TJ,
     key="pre_tokenizer.pretokenizers[0].behavior")
case("json-bytelevel-flag-type", hf(_set(["decoder", "add_prefix_space"], "yes")), TJ,
     key="decoder.add_prefix_space")
case("json-normalizers-not-list", hf(_set(["normalizer", "normalizers"], {"type": "NFC"})), TJ,
     key="normalizer.normalizers")


def _unigram(edit: Callable[[dict[str, Any]], Any]) -> dict[str, bytes]:
    data = hf_base()
    data["model"] = {"type": "Unigram", "unk_id": 0, "byte_fallback": False,
                     "vocab": [["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["ab", -1.5]]}
    edit(data)
    return {TJ: json.dumps(data).encode()}


case("json-unigram-entry-shape", _unigram(_set(["model", "vocab", 2], ["b"])), TJ, key="model.vocab[2]")
case("json-unigram-unk-range", _unigram(_set(["model", "unk_id"], 9)), TJ, key="model.unk_id")


# --- GGUF ----------------------------------------------------------------------------------------

GG = "vocab.gguf"
TOKENS = ["<unk>", "<s>", "</s>", "▁a", "▁b", "a", "b"]


def gguf_kvs(tokens: list[Any] | None = None) -> list[tuple[Any, Any, Any]]:
    toks = TOKENS if tokens is None else tokens
    return [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "llama"),
            ("tokenizer.ggml.tokens", (ARRAY, STRING), toks),
            ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0] * len(toks)),
            ("tokenizer.ggml.token_type", (ARRAY, INT32), [2, 3, 3] + [1] * (len(toks) - 3))]


def _gguf_tokens_offset() -> int:
    """Offset of the tokens array's count field in the valid file."""
    kvs = gguf_kvs()
    head = pack_header(len(kvs)) + pack_kv(*kvs[0]) + pack_kv(*kvs[1])
    return len(head) + len(pack_string("tokenizer.ggml.tokens")) + 4 + 4


VALID_GGUF = pack_gguf(gguf_kvs())
COUNT_AT = _gguf_tokens_offset()
FIRST_TOKEN_AT = COUNT_AT + 8
case("gguf-empty", {GG: b""}, GG, key="header", offset=0)
case("gguf-truncated-header", {GG: VALID_GGUF[:10]}, GG, key="header", offset=8)
case("gguf-wrong-magic", {GG: b"GGUX" + VALID_GGUF[4:]}, "vocab.gguf", key="header", offset=0)
case("gguf-version-1", {GG: VALID_GGUF[:4] + struct.pack("<I", 1) + VALID_GGUF[8:]}, GG, key="header", offset=4)
case("gguf-version-9", {GG: VALID_GGUF[:4] + struct.pack("<I", 9) + VALID_GGUF[8:]}, GG, key="header", offset=4)
case("gguf-kv-count-huge", {GG: VALID_GGUF[:16] + struct.pack("<Q", 2**62) + VALID_GGUF[24:]}, GG,
     key="header", offset=16)
case("gguf-key-length-huge", {GG: VALID_GGUF[:24] + struct.pack("<Q", 2**63) + VALID_GGUF[32:]}, GG,
     key="kv[0]", offset=32)  # offsets point where the missing bytes would start
case("gguf-array-count-huge",
     {GG: VALID_GGUF[:COUNT_AT] + struct.pack("<Q", 2**60) + VALID_GGUF[COUNT_AT + 8:]}, GG,
     key="tokenizer.ggml.tokens", offset=COUNT_AT)
case("gguf-string-length-huge",
     {GG: VALID_GGUF[:FIRST_TOKEN_AT] + struct.pack("<Q", 2**40) + VALID_GGUF[FIRST_TOKEN_AT + 8:]}, GG,
     key="tokenizer.ggml.tokens[0]", offset=FIRST_TOKEN_AT + 8)
case("gguf-array-past-end", {GG: VALID_GGUF[:FIRST_TOKEN_AT + 20]}, GG, key="tokenizer.ggml.tokens",
     offset=COUNT_AT)  # 7 strings need at least 56 bytes: refused before reading one
# <unk> <s> </s> ▁a ▁b take 13 + 11 + 12 + 12 + 12 bytes; the 6th length field is cut
case("gguf-truncated-in-tokens", {GG: VALID_GGUF[:FIRST_TOKEN_AT + 60 + 3]}, GG, key="tokenizer.ggml.tokens[5]",
     offset=FIRST_TOKEN_AT + 60)
case("gguf-token-not-utf8", {GG: pack_gguf(gguf_kvs(["<unk>", b"\xff\xfe", "</s>", "a"]))}, GG,
     key="tokenizer.ggml.tokens[1]", offset=FIRST_TOKEN_AT + 8 + 5 + 8)
case("gguf-value-type-unknown",
     {GG: pack_header(1) + pack_string("general.architecture") + struct.pack("<I", 99)}, GG,
     key="general.architecture", offset=24 + 8 + 20)
case("gguf-duplicate-key", {GG: pack_gguf(gguf_kvs() + [("tokenizer.ggml.model", STRING, "gpt2")])}, GG,
     key="tokenizer.ggml.model", offset=len(VALID_GGUF))
case("gguf-model-unknown", {GG: pack_gguf([(k, t, "nope" if k == "tokenizer.ggml.model" else v)
                                          for k, t, v in gguf_kvs()])}, GG, key="tokenizer.ggml.model")
case("gguf-tokens-missing", {GG: pack_gguf([kv for kv in gguf_kvs() if kv[0] != "tokenizer.ggml.tokens"])}, GG,
     key="tokenizer.ggml.tokens")
case("gguf-scores-short", {GG: pack_gguf([(k, t, v[:3] if k == "tokenizer.ggml.scores" else v)
                                         for k, t, v in gguf_kvs()])}, GG, key="tokenizer.ggml.scores")
case("gguf-tokens-wrong-type", {GG: pack_gguf([(k, (ARRAY, UINT32), [1, 2]) if k == "tokenizer.ggml.tokens"
                                              else (k, t, v) for k, t, v in gguf_kvs()])}, GG,
     key="tokenizer.ggml.tokens")
case("gguf-bpe-merge-missing-token",
     {GG: pack_gguf([("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, "gpt-2"),
                     ("tokenizer.ggml.tokens", (ARRAY, STRING), ["a", "b", "ab"]),
                     ("tokenizer.ggml.merges", (ARRAY, STRING), ["a b", "ab q"])])}, GG,
     key="tokenizer.ggml.merges[1]")
case("gguf-token-type-strings", {GG: pack_gguf([(k, (ARRAY, STRING), ["x"] * 7) if k == "tokenizer.ggml.token_type"
                                               else (k, t, v) for k, t, v in gguf_kvs()])}, GG,
     key="tokenizer.ggml.token_type")


# --- SentencePiece -------------------------------------------------------------------------------

SP = "tokenizer.model"
GOOD_PIECES = [pb_piece("<unk>", 0.0, 2), pb_piece("<s>", 0.0, 3), pb_piece("</s>", 0.0, 3),
               pb_piece("▁a", -1.0), pb_piece("b", -2.0)]
TRAINER = pb_field(3, 1)  # model_type UNIGRAM
VALID_SPM = pb_model(GOOD_PIECES, TRAINER)
case("spm-garbage", {SP: b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"}, SP, key="pieces", offset=1)
case("spm-field-zero", {SP: b"\x00\x01\x02"}, SP, key="ModelProto", offset=0)
case("spm-truncated", {SP: VALID_SPM[:len(GOOD_PIECES[0]) + 4]}, SP, key="pieces",
     offset=len(GOOD_PIECES[0]) + 1)  # the length field of the second piece
case("spm-length-past-end", {SP: b"\x0a" + varint(1000) + b"\x0a\x01a"}, SP, key="pieces", offset=1)
case("spm-piece-not-utf8", {SP: pb_model(GOOD_PIECES[:3] + [pb_field(1, pb_field(1, b"\xc3("))], TRAINER)}, SP,
     key="pieces[3].piece", offset=sum(map(len, GOOD_PIECES[:3])) + 4)
case("spm-wrong-wire-type", {SP: pb_model(GOOD_PIECES[:1] + [pb_field(1, 7)], TRAINER)}, SP, key="pieces",
     offset=len(GOOD_PIECES[0]))
case("spm-no-pieces", {SP: pb_model([], TRAINER)}, SP, key="pieces")


# --- tiktoken ------------------------------------------------------------------------------------

TK = "ranks.tiktoken"
TK_OPTIONS = {"pattern": r"\w+|\s+|[^\w\s]+", "special_tokens": {"<|end|>": 1000}}
RANK_LINES = [b"YQ== 0", b"Yg== 1", b"Yw== 2", b"YWI= 3"]
# then every other single byte (polytok refuses a rank file without one, tiktoken-missing-byte)
RANK_LINES += [b"%s %d" % (base64.b64encode(bytes([b])), rank)
               for rank, b in enumerate((b for b in range(256) if b not in b"abc"), start=4)]


def _ranks(lines: list[bytes]) -> dict[str, bytes]:
    return {TK: b"\n".join(lines) + b"\n"}


case("tiktoken-not-base64", _ranks(RANK_LINES[:2] + [b"Y@@ 2"] + RANK_LINES[3:]), TK, options=TK_OPTIONS, line=3)
case("tiktoken-rank-not-int", _ranks(RANK_LINES[:3] + [b"YWI= three"]), TK, options=TK_OPTIONS, line=4)
case("tiktoken-no-space", _ranks([b"YQ==0"] + RANK_LINES[1:]), TK, options=TK_OPTIONS, line=1)
case("tiktoken-bad-padding", _ranks(RANK_LINES[:1] + [b"Yg= 1"] + RANK_LINES[2:]), TK, options=TK_OPTIONS, line=2)
case("tiktoken-unknown-no-pattern", _ranks(RANK_LINES), TK, key=None, line=None)
case("tiktoken-special-id-type", _ranks(RANK_LINES), TK, options={"pattern": r"\w+", "special_tokens": {"x": "1"}},
     key="special_tokens")


# --- tekken.json ---------------------------------------------------------------------------------

TE = "tekken.json"


def tekken(edit: Callable[[dict[str, Any]], Any] = lambda d: None) -> dict[str, bytes]:
    import base64

    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None}
             for i in range(256)]
    vocab.append({"rank": 256, "token_bytes": base64.b64encode(b"ab").decode(), "token_str": "ab"})
    data = {"config": {"pattern": r"\w+|\s+|[^\w\s]+", "num_vocab_tokens": 257, "default_vocab_size": 1257,
                       "default_num_special_tokens": 1000, "version": "v3"}, "vocab": vocab}
    edit(data)
    return {TE: json.dumps(data).encode()}


case("tekken-invalid-json", {TE: b'{"config": '}, TE, line=1, offset=11)
case("tekken-config-missing", tekken(_delete("config")), TE, key="config")
case("tekken-pattern-type", tekken(_set(["config", "pattern"], 3)), TE, key="config.pattern")
case("tekken-version", tekken(_set(["config", "version"], "seven")), TE, key="config.version")
case("tekken-token-not-base64", tekken(_set(["vocab", 5, "token_bytes"], "***")), TE, key="vocab[5].token_bytes")
case("tekken-rank-wrong", tekken(_set(["vocab", 9, "rank"], 10)), TE, key="vocab[9].rank")
case("tekken-specials-huge", tekken(_set(["config", "default_num_special_tokens"], 2**70)), TE,
     key="config.default_num_special_tokens")
case("tekken-vocab-short", tekken(_set(["config", "default_vocab_size"], 1300)), TE, key="vocab")


# --- vocab.txt, vocab.json + merges.txt, RWKV ------------------------------------------------------

VT = "vocab.txt"
case("wordpiece-not-utf8", {VT: b"[PAD]\n[UNK]\nab\n\xe9t\xe9\n"}, VT, line=4)
case("wordpiece-empty", {VT: b""}, VT, line=1)

VJ, MT = "vocab.json", "merges.txt"
GPT2_VOCAB = json.dumps({"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3}).encode()
case("gpt2-vocab-invalid-json", {VJ: b'{"a": 0,\n "b" 1}', MT: b"#version: 0.2\na b\n"}, VJ, line=2, offset=14)
case("gpt2-vocab-id-negative", {VJ: b'{"a": 0, "b": -1}', MT: b"a b\n"}, VJ, key="b")
case("gpt2-merge-three-parts", {VJ: GPT2_VOCAB, MT: b"#version: 0.2\na b\na b c\n"}, VJ, error_file=MT, line=3)
case("gpt2-merge-missing-token", {VJ: GPT2_VOCAB, MT: b"#version: 0.2\na b\nab z\n"}, VJ, error_file=MT, line=3)
case("gpt2-merges-not-utf8", {VJ: GPT2_VOCAB, MT: b"a b\n\xff b\n"}, VJ, error_file=MT, line=2)

RW = "rwkv_vocab_v20230424.txt"
RWKV_GOOD = [b"1 '\\x00' 1", b"2 'a' 1", b"3 b'\\xff' 1"]
case("rwkv-bad-literal", {RW: b"\n".join(RWKV_GOOD + [b"4 'ab 2"]) + b"\n"}, RW, line=4)
case("rwkv-length-mismatch", {RW: b"\n".join(RWKV_GOOD + [b"4 'ab' 3"]) + b"\n"}, RW, line=4)
case("rwkv-id-not-number", {RW: b"\n".join(RWKV_GOOD[:1] + [b"x 'a' 1"]) + b"\n"}, RW, line=2)
case("rwkv-not-utf8", {RW: b"\n".join(RWKV_GOOD + [b"4 '\xff' 1"]) + b"\n"}, RW, line=4, offset=34)


# --- limits: nesting, numbers, padding, missing bytes (tests/robustness/test_hostile_limits.py) -----

_DEEP = b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
case("json-nested-too-deep", {TJ: _DEEP}, TJ, offset=6 + 127)
case("tekken-nested-too-deep", {TE: _DEEP}, TE, offset=6 + 127)
case("json-integer-too-long", {TJ: b'{"version": "1.0", "model": ' + b"9" * 5000 + b"}"}, TJ, offset=28)
case("json-nan", {TJ: b'{"version": "1.0", "model": NaN}'}, TJ, offset=28)
case("tiktoken-missing-byte", _ranks([b"%s %d" % (base64.b64encode(bytes([b])), b)
                                      for b in range(255)]), TK, options=TK_OPTIONS, key="ranks")
