"""The compiled charsmap normalizer (``polytok._kernels.charsmap``) against the pure `Precompiled`.

Every charsmap of the fixtures: the SentencePiece ``.model`` files (shared ``spm-*``, marian's
``vocab.joint.spm`` and the synthetic models of tests/data/sentencepiece, which cover the space
options and user-defined symbols) on sentencepiece's path, and the same blobs plus marian's
``tokenizer.json`` on HF's grapheme path. Texts: bench slices, the edge texts, every key of each
charsmap, hand-picked cases and hypothesis text; then sentencepiece's own ``normalize`` and HF's
``normalize_str`` live, hostile blobs (same result or same error as the pure path), pickling.
"""

from __future__ import annotations

import base64
import functools
import json
import pickle
import random
import struct
from pathlib import Path
from typing import Any

import fixtures
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
import polytok.kernels
from kernels._compiled import compiled
from polytok.errors import EncodeError, FormatError
from polytok.normalizers import Precompiled
from polytok.normalizers.precompiled import _JOINER

charsmap_kernel = compiled("charsmap")

SHARED_MODELS = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
                 ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
                 ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v3", "tokenizer.model"),
                 ("marian-nmt", "vocab.joint.spm")]
SYNTHETIC = sorted((Path(__file__).parent.parent / "data" / "sentencepiece").glob("*.model"))
HF_BLOBS = ["marian-nmt", "spm-botchan-bpe-1000", "spm-kyoto-ja-unigram-8000", "spm-bpemb-en-100k"]

TARGETED = [
    "", " ", "  ", "   a  b   ", "a", " a", "a ", "\u3000", "\u3000a\u3000\u3000b\u3000", "x\u00a0\u00a0y",
    "\x01abc", "a\x01bc", "\x00", "a\x00b", "\x00\u0301", "Ａ\u0301", "e\u0301\u0301", "ﬁ ① ㍿ ℌ",
    "\u1100\u1161\u11a8 각 ᄀ", "👨\u200d👩\u200d👧 🇫🇷🇩", "क्षि ந்தி", "a\u0301\u0302\u0303", "\r\n", "x\r\ny\r",
    "Ｈｅｌｌｏ\u3000ｗｏｒｌｄ", "“quote” — ‘x’", "Hello World!", "\u00a0\u2002x\u200by\ufeff", "\ufffd\ufffd",
    "▁", " ▁ ", "a▁▁", "▁▁ ", "\t\n\x0b\x0c", "\U0001d400\U0001f600\U00010000", "\u0301", "\u0301a", "ｱﾞ ｶﾞｷﾞ",
    "a" * 5000 + " " * 5000 + "\u3000" * 3000 + "b", " " * 10_000, "ａ" * 6000,
]
POOL = ("aAeÉ\u0301\u0302\u0308Ａｂ①ﬁ\x00\x01\x1f\r\n\t \u00a0\u3000ᄀ\u1161\u11a8각👨\u200d🇫🇷क्\u093f“”▁\ufffd"
        "\U0001d400\U00010000ｱﾞ㍿")


def _find(obj: Any, depth: int = 0) -> Precompiled | None:
    """The `Precompiled` inside a loaded tokenizer's normalizer (possibly in a Sequence)."""
    if isinstance(obj, Precompiled):
        return obj
    if depth > 3:
        return None
    values = obj if isinstance(obj, (list, tuple)) else getattr(obj, "__dict__", {}).values()
    for value in values:
        if isinstance(value, (list, tuple)) or hasattr(value, "__dict__"):
            found = _find(value, depth + 1)
            if found is not None:
                return found
    return None


def _model_path(entry: Any) -> Path:
    if isinstance(entry, Path):
        return entry
    return fixtures.fixture_path(*entry)


def _spm_pair(entry: Any) -> tuple[Precompiled, Precompiled]:
    path = _model_path(entry)
    fast = _find(polytok.load(path).normalizer)
    with polytok.kernels.pure_path():
        pure = _find(polytok.load(path).normalizer)
    assert fast is not None and pure is not None
    assert fast._kernel is not None and pure._kernel is None
    return fast, pure


def _blob(name: str) -> bytes:
    if name == "marian-nmt":
        with open(fixtures.fixture_path("marian-nmt", "tokenizer.json"), encoding="utf-8") as f:
            spec = json.load(f)["normalizer"]["normalizers"][0]
        return base64.b64decode(spec["precompiled_charsmap"])
    pair = next(p for p in SHARED_MODELS if p[0] == name)
    fast, _ = _spm_pair(pair)
    assert fast.charsmap is not None
    units = fast.charsmap.units
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + fast.charsmap.pool


def _hf_pair(blob: bytes) -> tuple[Precompiled, Precompiled]:
    fast = Precompiled(blob)
    with polytok.kernels.pure_path():
        pure = Precompiled(blob)
    assert fast._kernel is not None and pure._kernel is None
    return fast, pure


def _outcome(normalizer: Precompiled, text: str) -> tuple[str, str]:
    try:
        return "ok", normalizer.normalize(text)
    except (EncodeError, UnicodeError) as exc:
        return "error", type(exc).__name__


def _same(fast: Precompiled, pure: Precompiled, texts: list[str]) -> None:
    for text in texts:
        assert _outcome(fast, text) == _outcome(pure, text), f"on {text[:60]!r}"


@functools.cache
def charsmap_keys(blob: bytes, limit: int = 8) -> tuple[str, ...]:
    """The keys of the blob's double array that are whole UTF-8 characters (up to `limit` bytes):
    a walk over the bytes UTF-8 allows at each step."""
    (size,) = struct.unpack_from("<I", blob)
    units = struct.unpack_from(f"<{size // 4}I", blob, 4)
    leads = [*range(1, 0x80), *range(0xC2, 0xF5)]

    def offset(unit: int) -> int:
        return (unit >> 10) << ((unit & 0x200) >> 6)

    found: set[bytes] = set()
    stack = [(offset(units[0]), b"", 0)]
    while stack:
        pos, key, due = stack.pop()  # due: continuation bytes the current character still needs
        if len(key) >= limit:
            continue
        for byte in range(0x80, 0xC0) if due else leads:
            at = pos ^ byte
            if at < len(units) and units[at] & 0x800000FF == byte:
                left = due - 1 if due else 0 if byte < 0x80 else 1 if byte < 0xE0 else 2 if byte < 0xF0 else 3
                if (units[at] >> 8) & 1 and left == 0:
                    found.add(key + bytes([byte]))
                stack.append((at ^ offset(units[at]), key + bytes([byte]), left))
    return tuple(sorted(raw.decode("utf-8") for raw in found if _is_utf8(raw)))


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _key_texts(keys: tuple[str, ...], seed: int) -> list[str]:
    """Every key alone, then next to another, a space, a letter or a mark; and random mixes."""
    rng = random.Random(seed)
    texts = ["".join(keys), " ".join(keys), "a".join(keys) + "a", "\u0301".join(keys)]
    extra = [*keys, " ", "a", "\u0301", "  ", "\u3000"]
    for _ in range(100):
        texts.append("".join(rng.choice(extra) for _ in range(rng.randint(1, 12))))
    return texts


def _random_texts(seed: int, n: int = 300) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(POOL) for _ in range(rng.randint(1, 16))) for _ in range(n)]


def _corpus_texts() -> list[str]:
    out = []
    for corpus in ("en", "multi", "code"):
        text = fixtures.bench_slice(corpus, 30_000)
        out += [text, *text.splitlines()[:200]]
    return out


# -- sentencepiece's path -------------------------------------------------------------


@pytest.mark.parametrize("entry", SHARED_MODELS + SYNTHETIC, ids=lambda e: e.stem if isinstance(e, Path) else e[0])
def test_sentencepiece_path_matches_pure(entry):
    fast, pure = _spm_pair(entry)
    texts = TARGETED + fixtures.edge_texts() + _random_texts(1) + _corpus_texts()
    if fast.charsmap is not None:
        units = fast.charsmap.units
        blob = struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + fast.charsmap.pool
        texts += _key_texts(charsmap_keys(blob), seed=2)
    _same(fast, pure, texts)


@pytest.mark.parametrize("entry", SHARED_MODELS + SYNTHETIC, ids=lambda e: e.stem if isinstance(e, Path) else e[0])
def test_sentencepiece_path_matches_sentencepiece(entry):
    spm = pytest.importorskip("sentencepiece")
    path = _model_path(entry)
    fast, _ = _spm_pair(entry)
    processor = spm.SentencePieceProcessor(model_file=str(path))
    texts = TARGETED + [t for t in fixtures.edge_texts() if "\0" not in t] + _corpus_texts()
    if fast.charsmap is not None:
        units = fast.charsmap.units
        blob = struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + fast.charsmap.pool
        texts += _key_texts(charsmap_keys(blob), seed=3)
    for text in texts:
        if not text or "\0" in text:
            continue  # sentencepiece returns "" for "" before its rules; its C string API stops at NUL
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        assert fast.normalize(text) == processor.normalize(text), f"on {text[:60]!r}"


def test_user_defined_symbols_longer_than_the_window():
    """A whole symbol longer than the pure path's first 32-character window, with a shorter symbol
    inside it: the longest one passes through (sentencepiece ``PrefixMatcher``)."""
    long = "ab" + "c" * 40
    fast = Precompiled(b"", match="longest", passthrough=["ab", long], passthrough_walk=False,
                       whitespace="sentencepiece", add_space_prefix=True, remove_extra_whitespaces=True)
    with polytok.kernels.pure_path():
        pure = Precompiled(b"", match="longest", passthrough=["ab", long], passthrough_walk=False,
                           whitespace="sentencepiece", add_space_prefix=True, remove_extra_whitespaces=True)
    text = f"x {long}x ab  abc"
    assert fast.normalize(text) == pure.normalize(text) == f"▁x▁{long}x▁ab▁abc"
    assert pure._longest is not None and pure._longest.fast_chunks(text) == pure._longest.chunks(text)


def test_lone_surrogates_take_the_pure_error():
    fast, pure = _spm_pair(SHARED_MODELS[0])
    for text in ["a\ud800b", "\udcff", "x" * 5000 + "\udc80"]:
        assert fast._kernel.sentencepiece(text, *fast._spaces) is None
        with pytest.raises(EncodeError, match="lone surrogate"):
            fast.normalize(text)
        assert _outcome(fast, text) == _outcome(pure, text)


# -- HF's grapheme path ---------------------------------------------------------------


@pytest.mark.parametrize("name", HF_BLOBS)
def test_grapheme_path_matches_pure(name):
    blob = _blob(name)
    fast, pure = _hf_pair(blob)
    texts = TARGETED + fixtures.edge_texts() + _random_texts(4) + _corpus_texts()
    texts += _key_texts(charsmap_keys(blob), seed=5)
    texts += ["a\ud800b", "\ud800\u0301", "\u0301\udfff"]  # lone surrogates: the pure path's outcome
    _same(fast, pure, texts)


@pytest.mark.parametrize("name", HF_BLOBS)
def test_grapheme_path_matches_hf(name):
    tokenizers = pytest.importorskip("tokenizers")
    blob = _blob(name)
    fast, _ = _hf_pair(blob)
    reference = tokenizers.normalizers.Precompiled(blob)
    texts = TARGETED + fixtures.edge_texts() + _random_texts(6, 200) + _corpus_texts()
    texts += _key_texts(charsmap_keys(blob), seed=7)
    for text in texts:
        assert fast.normalize(text) == reference.normalize_str(text), f"on {text[:60]!r}"


def test_joiner_class_is_the_pure_one():
    for cp in range(0x110000):
        assert charsmap_kernel.is_joiner(cp) == bool(_JOINER.match(chr(cp))), hex(cp)


# -- hypothesis -----------------------------------------------------------------------

_TEXT = st.text(st.one_of(st.sampled_from(POOL), st.characters(codec=None, blacklist_categories=()),
                          st.sampled_from([" ", "\u3000", "\ud800", "\udc80"])), max_size=80)


@pytest.fixture(scope="module")
def pairs() -> list[tuple[Precompiled, Precompiled]]:
    out = [_spm_pair(entry) for entry in SHARED_MODELS[:2] + [SHARED_MODELS[4]]]
    out += [_spm_pair(path) for path in SYNTHETIC if "user" in path.stem or "keep-spaces" in path.stem
            or "suffix" in path.stem or "no-escape" in path.stem]
    out += [_hf_pair(_blob(name)) for name in ("marian-nmt", "spm-kyoto-ja-unigram-8000")]
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_random_text(pairs, text):
    for fast, pure in pairs:
        assert _outcome(fast, text) == _outcome(pure, text), repr(text)


# -- hostile blobs --------------------------------------------------------------------


def _hand_blob(values: dict[int, int], pool: bytes) -> bytes:
    """A darts-clone array of one-byte keys, made by hand: ``values[byte]`` is the key's pool index.
    The root's children sit at 256 ^ byte, each value 512 further (units 768 + byte)."""
    units = [0] * 1024
    units[0] = 256 << 10  # the root's offset: 256
    for byte, value in values.items():
        child = 256 ^ byte
        units[child] = byte | 0x100 | (512 << 10)  # label, has a value, offset 512
        units[child ^ 512] = 0x80000000 | value
    return struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + pool


def _hostile_blobs(seed: int, n: int) -> list[bytes]:
    rng = random.Random(seed)
    base = _blob("spm-botchan-bpe-1000")
    (size,) = struct.unpack_from("<I", base)
    pool = "é a\0ｂ\0".encode()  # c3 a9 20 61 00 ef bd 82 00
    out = [b"\0\0\0\0", struct.pack("<I", 4) + b"\0\0\0\0", struct.pack("<II", 4, 0xFFFFFFFF) + b"a\0",
           # a value inside "é", "ｂ", the pool's end, an empty string; a key of the NUL byte itself
           _hand_blob({ord("a"): 1, ord("b"): 5, ord("c"): len(pool), ord("d"): 4, 0: 5, ord(" "): 5}, pool),
           _hand_blob({ord("b"): 5, ord("d"): 4, 0: 5, 0xC3: 5}, pool)]
    for _ in range(n):
        blob = bytearray(base)
        kind = rng.randrange(4)
        if kind == 0:  # flip bytes of the units
            for _ in range(rng.randint(1, 40)):
                blob[4 + rng.randrange(size)] = rng.randrange(256)
        elif kind == 1:  # cut the array short (units that point past the end)
            keep = rng.randrange(1, size // 4)
            blob = bytearray(struct.pack("<I", 4 * keep) + bytes(blob[4:4 + 4 * keep]) + bytes(blob[4 + size:]))
        elif kind == 2:  # shorten the pool (values past it)
            blob = blob[:4 + size + rng.randrange(len(blob) - 4 - size)]
        else:  # random units
            units = [rng.getrandbits(32) for _ in range(rng.randint(1, 300))]
            blob = bytearray(struct.pack(f"<I{len(units)}I", 4 * len(units), *units) + "é a\0ｂ\0".encode())
        out.append(bytes(blob))
    return out


def _build(blob: bytes, **options: Any) -> tuple[str, Any]:
    try:
        return "ok", Precompiled(blob, **options)
    except FormatError as exc:
        return "format", str(exc)


@pytest.mark.parametrize("options", [
    {},
    {"match": "longest", "whitespace": "sentencepiece", "passthrough_walk": False, "add_space_prefix": True,
     "remove_extra_whitespaces": True},
    {"match": "longest", "whitespace": "sentencepiece", "passthrough_walk": False, "passthrough": ["é a", "ab"],
     "escape_whitespaces": False},
], ids=["grapheme", "sentencepiece", "sentencepiece-symbols"])
def test_hostile_blobs_same_result_or_error(options):
    texts = ["abc", "a b  c", "Ａ\u0301 ① ﬁ", "\x00\x01 é", " é a ", "\u3000" * 40, "x" * 40 + "\u0301",
             "dcba\x00 ", "bd\x00 b d", "b\x00", " é", fixtures.bench_slice("multi", 3000)]
    for blob in _hostile_blobs(11, 150):
        fast_built = _build(blob, **options)
        with polytok.kernels.pure_path():
            pure_built = _build(blob, **options)
        assert fast_built[0] == pure_built[0]
        if fast_built[0] != "ok":
            assert fast_built == pure_built
            continue
        _same(fast_built[1], pure_built[1], texts)


# -- pickling and threads -------------------------------------------------------------


def test_pickle_rebuilds_the_kernel():
    fast, _ = _spm_pair(SHARED_MODELS[0])
    hf, _ = _hf_pair(_blob("marian-nmt"))
    for normalizer in (fast, hf):
        copy = pickle.loads(pickle.dumps(normalizer))
        assert copy._kernel is not None
        text = "Ｈｅｌｌｏ\u3000 world  e\u0301 ①"
        assert copy.normalize(text) == normalizer.normalize(text)


def test_threads_share_one_kernel():
    from concurrent.futures import ThreadPoolExecutor

    fast, pure = _spm_pair(SHARED_MODELS[1])
    hf, hf_pure = _hf_pair(_blob("marian-nmt"))
    texts = [fixtures.bench_slice(c, 40_000) for c in ("en", "multi", "code")]
    want = [(pure.normalize(t), hf_pure.normalize(t)) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda t: (fast.normalize(t), hf.normalize(t)), texts * 4))
    assert got == want * 4
