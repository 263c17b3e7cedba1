"""Reader for SentencePiece ``.model`` files (a serialized ``ModelProto``).

Reproduces how sentencepiece 0.2.3 loads and applies a model
(``sentencepiece_processor.cc``: ``Load``, ``EncodeOptimized``, ``DecodeOptimized``;
``model_interface.cc``: ``InitializePieces``; ``model_factory.cc``; the field
defaults of ``sentencepiece_model.proto``), with the shared components:

* normalizer: `Precompiled` with ``match="longest"``, ``passthrough_walk=False``
  and ``whitespace="sentencepiece"`` over ``normalizer_spec`` (its proto
  defaults when a field is absent: add_dummy_prefix, remove_extra_whitespaces
  and escape_whitespaces are all true); user-defined pieces pass through it;
* model: BPE is `SPM` with sentencepiece's options, UNIGRAM is `Unigram` with
  ``float32=True`` and the rest of sentencepiece's options, WORD and CHAR are
  `PieceLookup`;
* pre-tokenizer: for BPE only, a cut before every run of ``"▁"`` (`Split` with
  ``merged_with_next``), where it cannot change a result: spaces are escaped,
  no usable piece holds a ``"▁"`` right after another character (so no merge
  crosses a cut; sentencepiece's ``has_internal_space_symbol`` is the stricter
  test, but runs of ``"▁"`` alone, as in Mistral's vocabularies, are harmless),
  ``"▁"`` is itself a piece (so a run of unknown symbols never spans a cut) and
  no piece is UNUSED (their ``rev_merge`` records are shared by the whole
  text). Sentencepiece merges the whole text at once; the cut lets each word be
  merged and cached on its own. Otherwise the model sees the whole text (always
  for UNIGRAM, whose float32 sums depend on all that precedes);
* decoder: `SentencePieceDetokenizer`.

``encode_full(text)`` gives what ``sp.encode(text, return_type="proto")`` gives
(sentencepiece_processor.cc, ``PopulateSentencePieceText``): ``tokens`` are the
pieces of ``EncodeAsPieces`` (an unknown run is its normalized text, not
``<unk>``, for every model type: `PieceListLookup.token_value`; byte fallback
gives ``<0xHH>``), and ``offsets`` are each piece's ``begin``/``end`` in
characters instead of UTF-8 bytes (the normalizer keeps sentencepiece's
``norm_to_orig``: `sentencepiece_aligned`; a byte piece before the last of its
character is empty at the character's start: `spell_bytes`).

``encode(text)`` is ``sp.encode(text)``: ``special=AS_TEXT`` (the default) reads
``<s>`` in the text as text; user-defined pieces are matched by the normalizer
and the model either way. ``special=PARSE`` also cuts out every CONTROL piece
written in the text (leftmost-longest) as its id, and encodes the text between
as ``sp.encode`` would. ``add_special`` has no effect: ``sp.encode`` adds no
BOS/EOS unless asked to.

Errors: what sentencepiece refuses at load (empty or duplicated pieces, two
unknown pieces, byte pieces without byte_fallback or not all 256 of them, no
unknown piece without byte_fallback, NaN/Inf unigram scores, a broken
charsmap) raises `FormatError`, as does a truncated or corrupt file (with the
byte offset and field path).

Performance. Load: where the kernels are built, ``polytok._kernels.spm_model`` reads the
pieces in C (`_read_compiled`): per piece an offset into the file's bytes, its score and
type, an index from text to id, and the load checks that look at every piece; the BPE merge
table (``spm_merge.Merger.from_vocab``) and the Unigram trie and scores
(``unigram.Lattice.from_vocab``) are built from those records in C, and the models' Python
lookups (a dict of every piece, ...) are deferred to their first use
(`polytok.models._deferred_tables`): a load makes no Python object per piece. The specs'
fields are read there too (``Vocab.spec_fields``, what `_read_spec` reads), so such a load
imports no `protobuf_wire` (the pure reader imports it when it runs). Anything
unusual (a broken or odd field, an empty, long, NUL-holding or repeated piece, a score that
is not finite; WORD and CHAR models) runs the pure reader and builds, with their errors.
What a load does not need waits for its first use: the charsmap kernel's table
(`Precompiled`), the CONTROL pieces' matcher (`special.TokenTrie`: read as text by default)
and the regexes of the "▁+" cut (`Split`).
The pure reader: the compiled ``polytok._kernels.wire.read_pieces`` when built (piece,
score and type in any order; it hands anything else, broken or unusual, to the pure walk,
so errors are the pure reader's), else `_read_usual_pieces` for their usual layout. Its load
checks work on whole lists (a set for duplicates, a joined string for NUL and "▁" tests,
str.count for runs of "▁"), and the checks that concern the other piece types walk the
non-NORMAL ids alone (`_sentencepiece_build._odd_ids`).
Encode: see `_sentencepiece_normalize` (identity runs), `SPM` (per-word cache
behind the ▁-run cut) and `_unigram_float32` (provably exact word cache); still
slower than sentencepiece's C++. Numbers: bench/README.md, 'Measurements behind design choices'.
"""

from __future__ import annotations

import math
import struct
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import kernels
from ..errors import FormatError
from ..tokenizer import Tokenizer
from .compressed import read_bytes

if TYPE_CHECKING:
    from .protobuf_wire import Field

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
_SPACE = "\u2581"
_FLOAT = struct.Struct("<f")

_SPEC_NAMES = {2: "trainer_spec", 3: "normalizer_spec", 5: "denormalizer_spec"}


@cache
def _schemas() -> dict[str, dict[int, Field]]:
    """The schemas of the messages read (`protobuf_wire`): ``"piece"`` and each spec's, by name.

    Made on first use, with `protobuf_wire` itself: a load read by ``spm_model`` reads its specs
    in C (``Vocab.spec_fields``, the same fields) and imports neither.
    """
    from .protobuf_wire import Field

    normalizer = {1: Field("name", "string"), 2: Field("precompiled_charsmap", "bytes"),
                  3: Field("add_dummy_prefix", "bool"), 4: Field("remove_extra_whitespaces", "bool"),
                  5: Field("escape_whitespaces", "bool")}
    trainer = {
        3: Field("model_type", "enum", values=frozenset(MODEL_TYPES)), 4: Field("vocab_size", "int32"),
        24: Field("treat_whitespace_as_suffix", "bool"), 35: Field("byte_fallback", "bool"),
        40: Field("unk_id", "int32"), 41: Field("bos_id", "int32"), 42: Field("eos_id", "int32"),
        43: Field("pad_id", "int32"), 44: Field("unk_surface", "string"), 45: Field("unk_piece", "string"),
        46: Field("bos_piece", "string"), 47: Field("eos_piece", "string"), 48: Field("pad_piece", "string"),
        30: Field("control_symbols", "string", repeated=True),
        31: Field("user_defined_symbols", "string", repeated=True),
    }
    piece = {1: Field("piece", "string"), 2: Field("score", "float"),
             3: Field("type", "enum", values=frozenset(range(1, 7)))}
    return {"piece": piece, "trainer_spec": trainer, "normalizer_spec": normalizer, "denormalizer_spec": normalizer}


def _read_spec(proto: ModelProto, data: bytes, number: int, start: int, end: int) -> None:
    """Merge the spec message ``data[start:end]`` (field `number`) into `proto`."""
    from .protobuf_wire import merge_fields, read_message

    name = _SPEC_NAMES[number]
    fields = read_message(data, start, end, _schemas()[name], file=proto.file, path=name)
    setattr(proto, name, merge_fields(getattr(proto, name) or {}, fields))


_NORMALIZER_DEFAULTS = {"name": "", "precompiled_charsmap": b"", "add_dummy_prefix": True,
                        "remove_extra_whitespaces": True, "escape_whitespaces": True}


class ModelProto:
    """The fields of a ``.model`` that encoding and decoding read (proto defaults applied by the getters).

    A plain class rather than a dataclass: building one costs about a millisecond at import,
    on every ``.model`` load.
    """

    def __init__(self, file: str, vocab: Any = None) -> None:
        self.file = file
        self.pieces: list[str] = []
        self.scores: list[float] = []
        self.types: list[int] = []
        self.trainer_spec: dict[str, Any] = {}
        self.normalizer_spec: dict[str, Any] = {}
        self.denormalizer_spec: dict[str, Any] | None = None
        # Read in C (`_read_compiled`): the ``spm_model.Vocab``, which `pieces` is too (a read-only
        # sequence) and whose bytes `types` is; `scores` stays empty until `materialize`.
        self.vocab = vocab

    def trainer(self, name: str, default: Any) -> Any:
        return self.trainer_spec.get(name, default)

    def normalizer(self, name: str) -> Any:
        return self.normalizer_spec.get(name, _NORMALIZER_DEFAULTS[name])

    @property
    def model_type(self) -> str:
        return MODEL_TYPES[self.trainer("model_type", 1)]

    def materialize(self) -> ModelProto:
        """The pure reader's lists, from `vocab` (for the builds that run on them); returns self."""
        vocab = self.vocab
        if vocab is not None:
            self.pieces, self.scores, self.types = list(vocab), vocab.scores(), list(vocab.types)
            self.vocab = None
        return self


def read_model_proto(data: bytes, file: str) -> ModelProto:
    """Parse the ``ModelProto`` fields polytok uses (see `protobuf_wire` for the wire rules)."""
    from .protobuf_wire import LENGTH, WireError, read_varint

    proto = ModelProto(file)
    pos, end = 0, len(data)
    kernel = kernels.kernel("wire")  # the pieces in one call; None: _read_usual_pieces
    while pos < end:
        if kernel is not None:
            pos = kernel.read_pieces(data, pos, end, proto.pieces, proto.scores, proto.types)
        else:
            pos = _read_usual_pieces(data, pos, end, proto)
        if pos >= end:
            break
        tag_at = pos
        tag, pos = read_varint(data, pos, end, file, "ModelProto")
        number, wire = tag >> 3, tag & 7
        if number in (1, 2, 3, 5):
            if wire != LENGTH:
                raise WireError(f"field {number} should be length-delimited, found wire type {wire}",
                                file=file, key=_FIELD_NAMES[number], offset=tag_at)
            size_at = pos
            size, pos = read_varint(data, pos, end, file, _FIELD_NAMES[number])
            if pos + size > end:
                raise WireError(f"length {size} runs {pos + size - end} bytes past the end of the file",
                                file=file, key=_FIELD_NAMES[number], offset=size_at)
            if number == 1:
                _read_piece(data, pos, pos + size, proto)
            else:
                _read_spec(proto, data, number, pos, pos + size)
            pos += size
        else:
            pos = _skip_one(data, tag_at, end, file)
    return proto


_FIELD_NAMES = {1: "pieces", 2: "trainer_spec", 3: "normalizer_spec", 5: "denormalizer_spec"}


def _skip_one(data: bytes, tag_at: int, end: int, file: str) -> int:
    """Position after the one (unknown) field that starts at `tag_at`."""
    from .protobuf_wire import WireError, read_varint, skip_field

    tag, pos = read_varint(data, tag_at, end, file, "ModelProto")
    if tag >> 3 == 0:
        raise WireError("field number 0: not a SentencePiece model, or a corrupt one", file=file,
                        key="ModelProto", offset=tag_at)
    return skip_field(data, pos, end, tag & 7, tag >> 3, file, "ModelProto")


def _read_usual_pieces(data: bytes, pos: int, end: int, proto: ModelProto) -> int:
    """Read consecutive ``pieces`` entries of the usual short layout; returns where the first other field starts.

    The layout: tag 0x0A, a one-byte length, then ``0A <len> piece 15 <float32>``
    and optionally ``18 <type>``. Anything else is left to the generic walk.
    """
    pieces, scores, types = proto.pieces, proto.scores, proto.types
    unpack = _FLOAT.unpack_from
    while pos + 9 <= end and data[pos] == 0x0A and data[pos + 1] < 0x80 and data[pos + 2] == 0x0A:
        stop = pos + 2 + data[pos + 1]
        a = pos + 4
        b = a + data[pos + 3]
        if data[pos + 3] >= 0x80 or stop > end or b + 5 > stop or data[b] != 0x15:
            break
        c = b + 5
        if c == stop:
            kind = NORMAL
        elif c + 2 == stop and data[c] == 0x18 and 1 <= data[c + 1] <= 6:
            kind = data[c + 1]
        else:
            break
        try:
            pieces.append(data[a:b].decode("utf-8"))
        except UnicodeDecodeError:
            break
        scores.append(unpack(data, b + 1)[0])
        types.append(kind)
        pos = stop
    return pos


def _read_piece(data: bytes, pos: int, stop: int, proto: ModelProto) -> None:
    """One ``SentencePiece``: the usual layout (piece, score, optional type) fast, else the generic walk."""
    if stop - pos >= 7 and data[pos] == 0x0A and data[pos + 1] < 0x80:
        a = pos + 2
        b = a + data[pos + 1]
        if b + 5 <= stop and data[b] == 0x15:
            c = b + 5
            kind = 1 if c == stop else data[c + 1] if c + 2 == stop and data[c] == 0x18 else 0
            if kind:
                try:
                    text = data[a:b].decode("utf-8")
                except UnicodeDecodeError:
                    pass
                else:
                    proto.pieces.append(text)
                    proto.scores.append(_FLOAT.unpack_from(data, b + 1)[0])
                    proto.types.append(kind if 1 <= kind <= 6 else NORMAL)
                    return
    from .protobuf_wire import read_message

    fields = read_message(data, pos, stop, _schemas()["piece"], file=proto.file, path=f"pieces[{len(proto.pieces)}]")
    proto.pieces.append(fields.get("piece", ""))
    proto.scores.append(fields.get("score", 0.0))
    proto.types.append(fields.get("type", NORMAL))


def read_sentencepiece(path: Path, **options: Any) -> Tokenizer:
    """Load a SentencePiece ``.model`` as a `Tokenizer` that encodes and decodes as sentencepiece 0.2.3.

    Args:
        path: the ``.model`` file.
        **options: none are taken; any is a `FormatError`.

    Returns:
        The `Tokenizer`: ``encode(text)`` equals ``SentencePieceProcessor.encode(text)``
        (``add_special`` has no effect: sentencepiece adds no BOS/EOS by default),
        ``decode(ids)`` equals ``.decode(ids)``.

    Raises:
        FormatError: an option was given, or the file is not a model sentencepiece loads.
    """
    if options:
        raise FormatError(f"the sentencepiece reader takes no options (got {', '.join(sorted(options))})",
                          file=str(path))
    data = read_bytes(Path(path))  # a tokenizer.model.gz too (`formats.folder`)
    proto = _read_compiled(data, str(path)) or read_model_proto(data, str(path))
    from ._sentencepiece_build import build_tokenizer

    return build_tokenizer(proto)


def _read_compiled(data: bytes, file: str) -> ModelProto | None:
    """The model read by ``polytok._kernels.spm_model`` (its pieces left in C), or None: the pure
    path, or a file it leaves to `read_model_proto` (anything unusual, broken or not, and any
    piece a per-piece load check would refuse: that reader and the build's checks raise)."""
    module = kernels.kernel("spm_model")
    vocab = module.read(data) if module is not None else None
    if vocab is None or not vocab.usual:
        return None
    proto = ModelProto(file, vocab)
    proto.pieces, proto.types = vocab, vocab.types  # read-only sequences (`ModelProto.vocab`)
    fields = vocab.spec_fields
    if fields is not None:  # read in C as `_read_spec` reads them
        proto.trainer_spec = fields.get("trainer_spec", {})
        proto.normalizer_spec = fields.get("normalizer_spec", {})
        proto.denormalizer_spec = fields.get("denormalizer_spec")
        return proto
    for number, start, end in vocab.specs:  # one the pure reader must see: it names the offset
        _read_spec(proto, data, number, start, end)
    return proto


def as_float32(value: float) -> float:
    """`value` rounded to float32 (the C++ ``float`` sentencepiece computes in)."""
    try:
        return float(_FLOAT.unpack(_FLOAT.pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)
