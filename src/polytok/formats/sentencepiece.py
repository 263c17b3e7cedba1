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
fields are read there too (``Vocab.spec_fields``, what `_sentencepiece_wire.read_spec` reads), so such
a load imports neither `_sentencepiece_wire` (the pure reader) nor `protobuf_wire`. Anything
unusual (a broken or odd field, an empty, long, NUL-holding or repeated piece, a score that
is not finite; WORD and CHAR models) runs the pure reader and builds, with their errors.
What a load does not need waits for its first use: the charsmap kernel's table
(`Precompiled`), the CONTROL pieces' matcher (`special.TokenTrie`: read as text by default)
and the regexes of the "▁+" cut (`Split`).
The pure reader: the compiled ``polytok._kernels.wire.read_pieces`` when built (piece,
score and type in any order; it hands anything else, broken or unusual, to the pure walk,
so errors are the pure reader's), else `_sentencepiece_wire`'s walk of their usual layout. Its load
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
from pathlib import Path
from typing import Any

from .. import kernels
from ..errors import FormatError
from ..tokenizer import Tokenizer
from .compressed import read_bytes

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
_SPACE = "\u2581"
_FLOAT = struct.Struct("<f")

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
    """Parse the ``ModelProto`` fields polytok uses, in Python (`_sentencepiece_wire`: loaded only
    when this runs; a load read by ``spm_model`` does not import it)."""
    from ._sentencepiece_wire import read_model_proto as read

    return read(data, file)


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
    if fields is not None:  # read in C as `_sentencepiece_wire.read_spec` reads them
        proto.trainer_spec = fields.get("trainer_spec", {})
        proto.normalizer_spec = fields.get("normalizer_spec", {})
        proto.denormalizer_spec = fields.get("denormalizer_spec")
        return proto
    from ._sentencepiece_wire import read_spec

    for number, start, end in vocab.specs:  # one the pure reader must see: it names the offset
        read_spec(proto, data, number, start, end)
    return proto


def as_float32(value: float) -> float:
    """`value` rounded to float32 (the C++ ``float`` sentencepiece computes in)."""
    try:
        return float(_FLOAT.unpack(_FLOAT.pack(value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)
