"""The compiled ``.model`` reader (polytok._kernels.spm_model) and the tables built from it
(spm_merge ``Merger.from_vocab``, unigram ``Lattice.from_vocab``) against the pure reader and the
tables the pure path builds.

Every ``.model`` fixture (real and synthetic): the same pieces, scores, types and specs as
`read_model_proto`, the same ids on the bench slices and edge texts as the pure path (and so as
sentencepiece, which the parity suites check), the lookups (`token_to_id`, `id_to_token`,
`get_vocab`) before and after the deferred tables are built, pickling; hostile and unusual
files go to the pure reader (`read` gives None, or `Vocab.usual` is false) and raise its
errors; hypothesis-packed models with ties, ``-0.0``, unused, user-defined and byte pieces.
"""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import pytest
from fixtures import bench_slice, edge_texts, fixture_path
from formats.sentencepiece_pack import field, model, piece, varint
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polytok
import polytok.kernels
from polytok.formats.sentencepiece import _read_compiled, read_model_proto

from ._compiled import compiled

DATA = Path(__file__).resolve().parent.parent / "data" / "sentencepiece"
REAL = [("spm-botchan-bpe-1000", "spm.model"), ("spm-botchan-unigram-1000", "spm.model"),
        ("spm-kyoto-ja-unigram-8000", "spm.model"), ("spm-bpemb-en-100k", "spm.model"),
        ("spm-mistral-v1", "tokenizer.model"), ("spm-mistral-v3", "tokenizer.model"),
        ("spm-mistral-v7", "tokenizer.model"), ("marian-nmt", "vocab.joint.spm")]
SYNTHETIC = sorted(p.name for p in DATA.glob("*.model"))
NORMAL, UNKNOWN, CONTROL, USER, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def _path(name: str) -> Path:
    if name in SYNTHETIC:
        return DATA / name
    return fixture_path(name, dict(REAL)[name])


def _texts() -> list[str]:
    return edge_texts() + [bench_slice(name, 3000) for name in ("en", "code", "multi")]


def _both(path: Path) -> tuple[polytok.Tokenizer, polytok.Tokenizer]:
    with polytok.kernels.pure_path():
        pure = polytok.load(path)
    return polytok.load(path), pure


def _encode(tok: polytok.Tokenizer, text: str) -> list[int] | str:
    try:
        return tok.encode(text)
    except polytok.PolytokError as error:
        return type(error).__name__


@pytest.mark.parametrize("name", [n for n, _ in REAL] + SYNTHETIC)
def test_reader_gives_the_pure_readers_fields(name):
    module = compiled("spm_model")
    data = _path(name).read_bytes()
    vocab = module.read(data)
    expected = read_model_proto(data, "x")
    assert vocab is not None, "a usual file"
    assert list(vocab) == expected.pieces
    assert vocab.scores() == expected.scores
    assert list(vocab.types) == expected.types
    assert vocab.odd == [i for i, t in enumerate(expected.types) if t != NORMAL]
    proto = _read_compiled(data, "x")
    if proto is not None:
        assert (proto.trainer_spec, proto.normalizer_spec, proto.denormalizer_spec) == \
            (expected.trainer_spec, expected.normalizer_spec, expected.denormalizer_spec)
    for i in range(0, len(vocab), max(1, len(vocab) // 500)):
        assert vocab.find(expected.pieces[i]) == expected.pieces.index(expected.pieces[i])
    assert vocab.find("no such piece \u2047") == -1 and vocab.find("\ud800") == -1


@pytest.mark.parametrize("name", [n for n, _ in REAL] + SYNTHETIC)
def test_compiled_load_encodes_and_looks_up_as_the_pure_load(name):
    compiled("spm_model")
    tok, pure = _both(_path(name))
    for text in _texts():
        assert _encode(tok, text) == _encode(pure, text), text[:60]
    size = len(pure)
    assert len(tok) == size
    for i in range(0, size, max(1, size // 300)):
        piece = pure.id_to_token(i)
        assert tok.id_to_token(i) == piece
        assert tok.token_to_id(piece) == pure.token_to_id(piece)
        assert tok.decode([i, (i * 7) % size]) == pure.decode([i, (i * 7) % size])
    assert tok.token_to_id("no such piece") is None and tok.id_to_token(size) is None
    assert tok.get_vocab() == pure.get_vocab()  # builds the deferred tables
    for text in _texts()[:20]:
        assert _encode(tok, text) == _encode(pure, text)


@pytest.mark.parametrize("name", ["spm-mistral-v1", "spm-kyoto-ja-unigram-8000", "bpe-unused.model"])
def test_deferred_tables_stay_unbuilt_until_needed_and_pickle(name):
    compiled("spm_model")
    tok, pure = _both(_path(name))
    assert "_deferred" in tok.model.__dict__, "the fast load keeps the pure tables for later"
    text = bench_slice("multi", 2000)
    assert tok.encode(text) == pure.encode(text)
    clone = pickle.loads(pickle.dumps(tok))
    assert "_deferred" not in clone.model.__dict__
    assert clone.encode(text) == pure.encode(text)
    assert clone.decode(pure.encode(text)) == pure.decode(pure.encode(text))


@pytest.mark.parametrize("name", SYNTHETIC + [name for name, _ in REAL])
def test_deferred_tables_equal_the_pure_builds(name):
    """Each table the fast load defers is, once built, the pure load's: the user-defined pieces'
    scores, which pieces match, the merge ranks, the unused and byte ids."""
    compiled("spm_model")
    try:
        tok, pure = _both(_path(name))
    except polytok.PolytokError:
        return  # a file sentencepiece refuses (test_unusual_pieces_go_to_the_pure_checks)
    if "_deferred" not in tok.model.__dict__:
        return  # the pure reader's proto: built at load
    for attribute in sorted(type(tok.model)._DEFERRED):
        assert getattr(tok.model, attribute) == getattr(pure.model, attribute), attribute


def test_vocab_is_a_read_only_sequence_that_pickles_as_a_list():
    module = compiled("spm_model")
    data = model([piece("<unk>", 0.0, UNKNOWN), piece("▁a", -1.0), piece("日本", -2.0), piece("😀", -3.0)])
    vocab = module.read(data)
    assert len(vocab) == 4 and vocab[1] == "▁a" and vocab[-1] == "😀" and vocab[1:3] == ["▁a", "日本"]
    assert vocab[::-2] == ["😀", "▁a"] and list(vocab) == ["<unk>", "▁a", "日本", "😀"]
    with pytest.raises(IndexError):
        vocab[4]
    with pytest.raises(IndexError):
        vocab[-5]
    assert pickle.loads(pickle.dumps(vocab)) == ["<unk>", "▁a", "日本", "😀"]
    assert vocab.types == bytes([UNKNOWN, NORMAL, NORMAL, NORMAL]) and vocab.odd == [0]
    assert vocab.min_normal_score == -3.0 and vocab.usual and not vocab.joins_space
    assert vocab.specs == [(2, len(data) - 2, len(data) - 2), (3, len(data), len(data))]
    assert len(vocab.records) == 16 * 4
    start, length, score, kind = struct.unpack("=IIfI", vocab.records[16:32])
    assert data[start:start + length] == "▁a".encode() and (score, kind) == (-1.0, NORMAL)


def test_joins_space_counts_usable_pieces_only():
    module = compiled("spm_model")
    base = [piece("<unk>", 0.0, UNKNOWN), piece("▁▁", -1.0)]
    assert not module.read(model(base + [piece("a▁", -1.0, CONTROL)])).joins_space
    assert module.read(model(base + [piece("a▁", -1.0, UNUSED)])).joins_space
    assert module.read(model(base + [piece("▁a▁b", -1.0)])).joins_space
    assert not module.read(model(base + [piece("▁▁▁x", -1.0)])).joins_space


# Each piece's bytes are read in one pass, eight ASCII bytes at a time while they last; the usual
# layout of a piece message is read without the general walk (a two-byte length, fields in
# another order, a type written in two bytes take it).
SCANNED = [("abcdefgh\0", False), ("\0abcdefgh", False), ("abcdefg\0ijklmnop", False), ("abcdefgh", True),
           ("abcdefghijklmno\u2581", True), ("abcdefgh\u2581\u2581ij", True), ("\u2581abcdefghij", True),
           ("abcdefgh\u00e9\u2581", True), ("x" * 200 + "\0", False), ("x" * 200 + "\u2581", True)]


@pytest.mark.parametrize("text,usual", SCANNED)
def test_each_piece_is_scanned_for_nul_and_joined_spaces_past_its_first_words(text, usual):
    module = compiled("spm_model")
    expected_joins = "\u2581" in text.lstrip("\u2581") and not text.startswith("\u2581")
    vocab = module.read(model([piece("<unk>", 0.0, UNKNOWN), piece(text, -1.0)]))
    assert vocab.usual == usual and vocab.joins_space == expected_joins
    assert list(vocab) == ["<unk>", text] and vocab.find(text) == 1


@pytest.mark.parametrize("message,readable", [
    (field(2, -1.0) + field(1, b"abc"), True), (field(1, b"abc") + field(3, 1) + field(2, -1.0), True),
    (field(1, b"abc") + field(2, -1.0) + bytes([0x18, 0x84, 0x00]), True),
    (field(1, b"abc\xff\xfeabcdefgh") + field(2, -1.0), False), (field(1, b"abcdefgh\xc0\xaf") + field(2, -1.0), False),
    (field(1, b"\x80bcdefghij") + field(2, -1.0), False), (field(1, b"abcdefg\x80ij") + field(2, -1.0), False)])
def test_pieces_outside_the_usual_layout_are_read_by_the_general_walk(message, readable, tmp_path):
    data = model([piece("<unk>", 0.0, UNKNOWN)]) + field(1, message)
    vocab = compiled("spm_model").read(data)
    if readable:
        expected = read_model_proto(data, "x")
        assert list(vocab) == expected.pieces and vocab.scores() == expected.scores
        assert list(vocab.types) == expected.types
    else:
        assert vocab is None
    _same_outcome(data, tmp_path)


UNUSUAL = {
    "empty piece": model([piece("<unk>", 0.0, UNKNOWN), piece("", -1.0)]),
    "duplicate": model([piece("<unk>", 0.0, UNKNOWN), piece("a", -1.0), piece("a", -2.0)]),
    "NUL": model([piece("<unk>", 0.0, UNKNOWN), piece("a\0", -1.0)]),
    "long": model([piece("<unk>", 0.0, UNKNOWN), piece("x" * 2000, -1.0)]),
    "NaN": model([piece("<unk>", 0.0, UNKNOWN), piece("a", float("nan"))]),
    "Inf": model([piece("<unk>", 0.0, UNKNOWN), piece("a", float("-inf"))]),
}
BROKEN = {
    "truncated": model([piece("<unk>", 0.0, UNKNOWN), piece("abc", -1.0)])[:-5],
    "bad UTF-8": field(1, field(1, b"\xff") + field(2, 0.0)),
    "surrogate": field(1, field(1, b"\xed\xa0\x80") + field(2, 0.0)),
    "overlong": field(1, field(1, b"\xc0\xaf") + field(2, 0.0)),
    "type 7": field(1, field(1, b"a") + field(3, 7)),
    "unknown piece field": field(1, field(1, b"a") + field(4, 1)),
    "repeated piece field": field(1, field(1, b"a") + field(1, b"b")),
    "score as varint": field(1, field(1, b"a") + field(2, 5)),
    "group": model([piece("<unk>", 0.0, UNKNOWN)]) + bytes([0x33, 0x34]),
    "field 0": bytes([0x00, 0x01]),
    "pieces as varint": bytes([0x08, 0x01]),
    "length past the end": bytes([0x0A, 0x7F, 0x0A]),
    "long varint": bytes([0x0A]) + bytes([0x80] * 11),
}


@pytest.mark.parametrize("case", sorted(UNUSUAL))
def test_unusual_pieces_go_to_the_pure_checks(case, tmp_path):
    module = compiled("spm_model")
    vocab = module.read(UNUSUAL[case])
    assert vocab is not None and not vocab.usual
    _same_outcome(UNUSUAL[case], tmp_path)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_or_odd_files_go_to_the_pure_reader(case, tmp_path):
    module = compiled("spm_model")
    assert module.read(BROKEN[case]) is None
    _same_outcome(BROKEN[case], tmp_path)


def _outcome(path: Path) -> object:
    try:
        tok = polytok.load(path)
    except polytok.PolytokError as error:
        return str(error)
    return [_encode(tok, text) for text in ("abc a\0b", "▁a ab日", "x" * 50)]


def _same_outcome(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "m.model"
    path.write_bytes(data)
    with polytok.kernels.pure_path():
        expected = _outcome(path)
    assert _outcome(path) == expected


def test_reader_refuses_what_is_not_bytes():
    module = compiled("spm_model")
    with pytest.raises(TypeError):
        module.read(bytearray(b"\x0a\x00"))
    assert module.read(b"") is not None and len(module.read(b"")) == 0


def test_from_vocab_builders_refuse_bad_records():
    merge, unigram = compiled("spm_merge"), compiled("unigram")
    data = model([piece("<unk>", 0.0, UNKNOWN), piece("ab", -1.0), piece("a", -2.0)])
    vocab = compiled("spm_model").read(data)
    bad_start = struct.pack("=IIfI", len(data), 1, 0.0, NORMAL)
    nan = vocab.records[:16] + struct.pack("=IIfI", *struct.unpack("=IIfI", vocab.records[16:32])[:2],
                                           float("nan"), NORMAL)
    twice = vocab.records + vocab.records[16:32]
    args = (frozenset(), [None] * 256, 1, 0, 100, 10)
    for records in (bad_start, vocab.records[:-1], nan, twice):
        with pytest.raises(ValueError):
            merge.Merger.from_vocab(data, records, *args)
    for records in (bad_start, vocab.records[:-1], twice):
        with pytest.raises(ValueError):
            unigram.Lattice.from_vocab(data, records, 0, -20.0, True, False, True, None)
    with pytest.raises(ValueError):
        merge.Merger.from_vocab(b"\xff\xfe", struct.pack("=IIfI", 0, 2, 0.0, NORMAL), *args)
    with pytest.raises(ValueError):
        unigram.Lattice.from_vocab(b"\xff\xfe", struct.pack("=IIfI", 0, 2, 0.0, NORMAL), -1, -20.0, True,
                                   False, True, None)
    with pytest.raises(ValueError):
        merge.Merger.from_vocab(data, vocab.records, frozenset(), [None] * 256, 0, 0, 100, 10)  # llama's mode


TEXT = st.text(st.sampled_from("ab▁ cé日😀\u0301x"), max_size=40)
PIECES = st.lists(st.tuples(st.text(st.sampled_from("ab▁cé日x"), min_size=1, max_size=4),
                            st.sampled_from([0.0, -0.0, -1.0, -1.5, -2.0, 3.0, -100.0]),
                            st.sampled_from([NORMAL] * 6 + [USER, UNUSED, CONTROL])),
                  min_size=1, max_size=25, unique_by=lambda p: p[0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=PIECES, kind=st.sampled_from([1, 2]), byte_fallback=st.booleans(), texts=st.lists(TEXT, max_size=5))
def test_random_models_load_and_encode_as_the_pure_path(pieces, kind, byte_fallback, texts, tmp_path_factory):
    compiled("spm_model")
    packed = [piece("<unk>", 0.0, UNKNOWN)] + [piece(t, s, k) for t, s, k in pieces if t != "<unk>"]
    if byte_fallback:
        packed += [piece(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
    trainer = field(3, kind) + (field(35, 1) if byte_fallback else b"")
    path = tmp_path_factory.mktemp("m") / "m.model"
    path.write_bytes(model(packed, trainer))
    with polytok.kernels.pure_path():
        expected = _outcome(path)
    assert _outcome(path) == expected
    try:
        tok, pure = _both(path)
    except polytok.PolytokError:
        return
    for text in texts:
        assert _encode(tok, text) == _encode(pure, text)
    assert tok.get_vocab() == pure.get_vocab()


def _live(path: Path, texts: list[str]) -> None:
    """The compiled load, the pure load and sentencepiece itself give the same ids."""
    spm = pytest.importorskip("sentencepiece")
    reference = spm.SentencePieceProcessor(model_file=str(path))
    tok, pure = _both(path)
    assert "_deferred" in tok.model.__dict__
    for text in texts:
        assert tok.encode(text) == pure.encode(text) == reference.encode(text), text


def test_negative_zero_scores_below_zero_in_the_table_from_records(tmp_path):
    # "bc" (0.0) merges before "ab" (-0.0) although "ab" is further left: sentencepiece compares bit patterns
    pieces = [piece("<unk>", 0.0, UNKNOWN), piece("▁", -1.0), piece("a", -5.0), piece("b", -5.0), piece("c", -5.0),
              piece("ab", -0.0), piece("bc", 0.0), piece("▁a", -9.0)]
    path = tmp_path / "m.model"
    path.write_bytes(model(pieces, field(3, 2)))
    _live(path, ["abc", "xabcab", "ab bc abc"])
    tok = polytok.load(path)
    assert tok.encode("abc") == [7, 6]  # "▁a", "bc"


def test_user_defined_unigram_pieces_score_by_their_length_in_the_lattice_from_records(tmp_path):
    # "ab" (user-defined) scores 0.1 * (2 - 1): below "abc" (0.15) alone, above "abd" (0.05) + nothing
    pieces = [piece("<unk>", 0.0, UNKNOWN), piece("▁", -0.01), piece("a", -3.0), piece("b", -3.0), piece("c", 0.0),
              piece("d", 0.0), piece("ab", -7.0, USER), piece("abc", 0.15), piece("▁abd", -5.0), piece("▁c", -1.0)]
    path = tmp_path / "m.model"
    path.write_bytes(model(pieces, field(3, 1)))
    _live(path, ["abc", "abd", "ab", "xabcabd", "ab abc abd"])


def test_equal_scores_in_falling_order_share_a_rank(tmp_path):
    # scores never rise in id order (the table ranks them without sorting); "bc" and "ab" tie, so the
    # leftmost pair merges first although "bc" has the lower id
    pieces = [piece("<unk>", 0.0, UNKNOWN), piece("bc", -1.0), piece("ab", -1.0), piece("▁", -2.0),
              piece("a", -3.0), piece("b", -3.0), piece("c", -3.0)]
    path = tmp_path / "m.model"
    path.write_bytes(model(pieces, field(3, 2)))
    _live(path, ["abc", "bcab", "abcabc bc"])
    assert polytok.load(path).encode("abc") == [3, 2, 6]  # "▁", "ab", "c"


# -- the specs, read in C (`Vocab.spec_fields`) as the pure reader reads them ---------------------

BASE = [piece("<unk>", 0.0, UNKNOWN), piece("a", -1.0)]
KIND_VALUES = {"string": [b"", "\u2581x\u00e9".encode(), b"\xff"], "bytes": [b"", b"\x00\xff"],
               "bool": [0, 1, 2**63], "int32": [0, 5, 2**32 - 1, 2**63 + 7], "enum": [0, 1, 2, 4, 5, 2**32 - 1]}


def _spec_cases() -> list[tuple[str, bytes]]:
    """Every field of the pure reader's schemas, with values of its kind, alone and repeated."""
    from polytok.formats._sentencepiece_wire import _schemas

    cases = []
    for number, name in ((2, "trainer_spec"), (3, "normalizer_spec"), (5, "denormalizer_spec")):
        for fnum, spec in sorted(_schemas()[name].items()):
            for value in KIND_VALUES[spec.kind]:
                cases.append((f"{name}.{spec.name}={value!r}", field(number, field(fnum, value))))
                cases.append((f"{name}.{spec.name}=1,{value!r}", field(number, field(fnum, 1) + field(fnum, value))))
            cases.append((f"{name}.{spec.name} as 32-bit", field(number, varint(fnum << 3 | 5) + b"\0" * 4)))
    return cases


def _proto_specs(data: bytes) -> object:
    try:
        expected = read_model_proto(data, "x")
    except polytok.PolytokError as error:
        return str(error)
    return expected.trainer_spec, expected.normalizer_spec, expected.denormalizer_spec


def _compiled_specs(data: bytes) -> object:
    try:
        proto = _read_compiled(data, "x")
    except polytok.PolytokError as error:
        return str(error)
    assert proto is not None
    return proto.trainer_spec, proto.normalizer_spec, proto.denormalizer_spec


@pytest.mark.parametrize("case", _spec_cases(), ids=lambda c: c[0])
def test_specs_read_in_c_are_the_pure_readers_fields(case):
    compiled("spm_model")
    data = b"".join(BASE) + case[1]
    assert _compiled_specs(data) == _proto_specs(data)


SPEC_EXTRAS = {
    "two trainer specs merge": field(2, field(40, 3) + field(30, b"<a>")) + field(2, field(41, 4) + field(30, b"<b>")),
    "unknown fields of each wire type": field(3, field(9, 5) + field(10, b"xy") + field(11, 1.5)
                                              + bytes([12 << 3 | 1]) + b"\0" * 8 + field(1, b"nmt")),
    "a group": field(2, bytes([9 << 3 | 3, 9 << 3 | 4]) + field(40, 7)),
    "field 0": field(2, bytes([0x00, 0x01])),
    "truncated varint": field(2, varint(40 << 3) + bytes([0x80])),
    "length past the message": field(3, bytes([2 << 3 | 2, 9]) + b"ab"),
    "wire type 7": field(2, varint(40 << 3 | 7)),
    "an empty denormalizer": field(5, b""),
}


@pytest.mark.parametrize("case", sorted(SPEC_EXTRAS))
def test_spec_merges_unknown_and_broken_fields_as_the_pure_reader(case, tmp_path):
    module = compiled("spm_model")
    data = b"".join(BASE) + SPEC_EXTRAS[case]
    assert _compiled_specs(data) == _proto_specs(data)
    declined = case in ("a group", "field 0", "truncated varint", "length past the message", "wire type 7")
    assert (module.read(data).spec_fields is None) == declined
    _same_outcome(data, tmp_path)


SPEC_FIELD = st.tuples(st.sampled_from([1, 2, 3, 4, 5, 24, 30, 31, 35, 40, 44, 48, 99]),
                       st.one_of(st.integers(0, 2**64 - 1), st.binary(max_size=6), st.floats(width=32)))


@settings(max_examples=150, deadline=None)
@given(specs=st.lists(st.tuples(st.sampled_from([2, 3, 5]), st.lists(SPEC_FIELD, max_size=6)), max_size=4))
def test_random_specs_read_in_c_as_the_pure_reader(specs):
    compiled("spm_model")
    data = b"".join(BASE) + b"".join(field(number, b"".join(field(n, v) for n, v in fields))
                                     for number, fields in specs)
    assert _compiled_specs(data) == _proto_specs(data)


# -- the byte pieces, counted and found in C -----------------------------------------------------

def _byte_model(names: list[str], byte_fallback: bool = True) -> bytes:
    pieces = [piece("<unk>", 0.0, UNKNOWN)] + [piece(name, 0.0, BYTE) for name in names] + [piece("a", -1.0)]
    return model(pieces, trainer=field(35, int(byte_fallback)))


ALL_BYTES = [f"<0x{b:02X}>" for b in range(256)]
BYTE_CASES = {
    "all 256": (ALL_BYTES, 256), "255": (ALL_BYTES[:255], 255), "none": ([], 0),
    "lower-case hex": (ALL_BYTES[:10] + ["<0x0a>"], None), "short": (["<0x0A"], None), "not hex": (["<0xGG>"], None),
    "other text": (["<0X0A>"], None), "long": (["<0x0AB>"], None),
}


@pytest.mark.parametrize("case", sorted(BYTE_CASES))
@pytest.mark.parametrize("byte_fallback", [True, False])
def test_byte_pieces_are_counted_and_found_as_the_pure_checks_do(case, byte_fallback, tmp_path):
    names, count = BYTE_CASES[case]
    data = _byte_model(names, byte_fallback)
    vocab = compiled("spm_model").read(data)
    assert vocab.byte_count == count
    assert vocab.byte_ids() == [names.index(n) + 1 if n in names else None for n in ALL_BYTES]
    _same_outcome(data, tmp_path)


@pytest.mark.parametrize("name", [n for n, _ in REAL] + SYNTHETIC)
def test_byte_ids_are_the_ids_of_the_byte_pieces(name):
    data = _path(name).read_bytes()
    pieces = read_model_proto(data, "x").pieces
    assert compiled("spm_model").read(data).byte_ids() == [pieces.index(n) if n in pieces else None
                                                           for n in ALL_BYTES]
