"""The components of a parsed SentencePiece ``ModelProto``: checks, model, normalizer, detokenizer.

Part of the sentencepiece reader (see `polytok.formats.sentencepiece` for the rules
and their sources). The load checks follow sentencepiece 0.2.3
``model_interface.cc`` (``InitializePieces``), ``unigram_model.cc``
(``Model::Model``), ``normalizer.cc`` (``DecodePrecompiledCharsMap``) and
``sentencepiece_processor.cc`` (``Load``: a ``"\\0"`` piece becomes UNUSED under
byte_fallback; the special ids ``unk_id()``, ``bos_id()``, ... are the ids of
``unk_piece``, ``bos_piece``, ... when those pieces have the right type).
"""

from __future__ import annotations

import math
import struct
from functools import cache
from itertools import compress
from typing import TYPE_CHECKING, Any

from .. import kernels
from ..decoders import DeferredDecoder
from ..errors import FormatError
from ..facts import FormatFacts, eos_ends, named_ids
from ..special import AddedToken, SpecialTokens
from ..tokenizer import Tokenizer
from .sentencepiece import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, ModelProto, as_float32

if TYPE_CHECKING:
    from ..decoders.sentencepiece_detokenizer import SentencePieceDetokenizer
    from ..normalizers.precompiled import Precompiled

_SPACE = "\u2581"
_RESERVED = (CONTROL, UNKNOWN, BYTE)
_FLT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
_SPECIAL_PIECES = {"unk": ("unk_piece", "<unk>", UNKNOWN), "bos": ("bos_piece", "<s>", CONTROL),
                   "eos": ("eos_piece", "</s>", CONTROL), "pad": ("pad_piece", "<pad>", CONTROL)}


@cache
def _byte_pieces() -> dict[str, int]:
    """``"<0xHH>"`` to its byte (made on first use: most models have no byte pieces)."""
    return {f"<0x{b:02X}>": b for b in range(256)}


def build_tokenizer(proto: ModelProto) -> Tokenizer:
    """The `Tokenizer` of a parsed model (module notes of `polytok.formats.sentencepiece`)."""
    if proto.vocab is not None and proto.model_type not in ("bpe", "unigram"):
        proto.materialize()
    if proto.vocab is not None:
        odd = proto.vocab.odd  # no piece is "\0" (`Vocab.usual`)
    else:
        if proto.trainer("byte_fallback", False):
            proto.types = [UNUSED if p == "\0" else t for p, t in zip(proto.pieces, proto.types)]
        odd = _odd_ids(proto.types)
    unk_id = _check_pieces(proto, odd)
    model, pre_tokenizer = _model(proto, unk_id, odd)
    named = named_ids(_special_ids(proto, unk_id), proto.pieces.__getitem__)
    controls = [AddedToken(proto.pieces[i], special=True, normalized=False) for i in odd
                if proto.types[i] == CONTROL]
    return Tokenizer(model, normalizer=_normalizer(proto, proto.normalizer_spec, "normalizer_spec", odd),
                     pre_tokenizer=pre_tokenizer, added_tokens=controls,
                     decoder=DeferredDecoder(lambda: _detokenizer(proto)),
                     facts=FormatFacts(format="sentencepiece", source=proto.file, files=(proto.file,),
                                       named_tokens=named, eog_ids=eos_ends(named),
                                       default_special=SpecialTokens.AS_TEXT,
                                       details={"model_type": proto.model_type, "normalizer": proto.normalizer("name"),
                                                "trainer_spec": dict(proto.trainer_spec)}))


def _odd_ids(types: list[int]) -> list[int]:
    """The ids of the pieces that are not NORMAL, in order (most pieces are: the checks and
    lists below that concern the other types walk these alone)."""
    return list(compress(range(len(types)), map(NORMAL.__ne__, types)))


def _of_type(proto: ModelProto, odd: list[int], kind: int) -> list[str]:
    """The pieces of type `kind` (not NORMAL), in id order."""
    return [proto.pieces[i] for i in odd if proto.types[i] == kind]


def _fail(proto: ModelProto, reason: str, key: str) -> FormatError:
    return FormatError(f"{reason} (sentencepiece refuses to load it)", file=proto.file, key=key)


def _check_pieces(proto: ModelProto, odd: list[int]) -> int | None:
    """sentencepiece's load checks; returns the model's unknown id (None when there is none)."""
    if proto.vocab is None:  # else spm_model has checked every piece (`Vocab.usual`)
        from ._sentencepiece_pure import check_every_piece

        check_every_piece(proto)
    types = proto.types
    special = [i for i in odd if types[i] in (UNKNOWN, BYTE)]
    unknown = [i for i in special if types[i] == UNKNOWN]
    if len(unknown) > 1:
        raise _fail(proto, f"unk is already defined (pieces[{unknown[0]}])", f"pieces[{unknown[1]}]")
    byte_fallback = proto.trainer("byte_fallback", False)
    # spm_model counts the bytes the BYTE pieces name (None: one names none, and the walk says which)
    named = proto.vocab.byte_count if proto.vocab is not None and byte_fallback else None
    found = named if named is not None else _bytes_named(proto, special, byte_fallback)
    if not unknown and not byte_fallback:
        raise _fail(proto, "unk is not defined", "pieces")
    if byte_fallback and found != 256:
        raise _fail(proto, f"there are {found} byte pieces, not 256, although byte_fallback is true", "pieces")
    return unknown[0] if unknown else None


def _bytes_named(proto: ModelProto, special: list[int], byte_fallback: bool) -> int:
    """How many distinct bytes the BYTE pieces among `special` name; raises at a BYTE piece
    without byte_fallback, or one that is not ``<0xHH>``."""
    pieces, types = proto.pieces, proto.types
    bytes_found: set[int] = set()
    for index in special:
        if types[index] != BYTE:
            continue
        piece = pieces[index]
        if not byte_fallback:
            raise _fail(proto, f"byte piece {piece!r} is found although byte_fallback is false", f"pieces[{index}]")
        if piece not in _byte_pieces():
            raise _fail(proto, f"byte piece {piece!r} is invalid", f"pieces[{index}]")
        bytes_found.add(_byte_pieces()[piece])
    return len(bytes_found)


def _joins_space_to_text(proto: ModelProto, odd: list[int]) -> bool:
    """`_sentencepiece_pure.joins_space_to_text` (loaded when the pure reader's proto asks)."""
    from ._sentencepiece_pure import joins_space_to_text

    return joins_space_to_text(proto, odd)


def _model(proto: ModelProto, unk_id: int | None, odd: list[int]) -> tuple[Any, Any]:
    pieces, types = proto.pieces, proto.types
    byte_fallback = bool(proto.trainer("byte_fallback", False))
    user_defined = _of_type(proto, odd, USER_DEFINED)
    kind = proto.model_type
    if kind == "bpe":
        return _bpe(proto, unk_id, byte_fallback, user_defined, odd)
    if kind == "unigram":
        return _unigram(proto, unk_id, byte_fallback, odd), None
    from ..models.piece_lookup import PieceLookup

    usable = [t in (NORMAL, USER_DEFINED) for t in types]
    return PieceLookup(pieces, usable, split="word" if kind == "word" else "char", unk_id=unk_id,
                       byte_fallback=byte_fallback, whole_symbols=user_defined if kind == "char" else ()), None


def _bpe(proto: ModelProto, unk_id: int | None, byte_fallback: bool, user_defined: list[str],
         odd: list[int]) -> tuple[Any, Any]:
    from ..pre_tokenizers.split import Split

    model = _bpe_compiled(proto, unk_id, byte_fallback, user_defined, odd)
    if model is None:
        from ..models.spm import SPM
        from ._sentencepiece_pure import bpe_arguments

        model = SPM(**bpe_arguments(proto.materialize(), user_defined, odd),
                    unknown="byte_fallback" if byte_fallback else "unk", unk_id=unk_id)
    types = proto.types
    if proto.vocab is not None:
        found = proto.vocab.find(_SPACE)
        space_id = found if found >= 0 else None
        joins = proto.vocab.joins_space
    else:
        space_id = model.token_to_id(_SPACE)
        joins = None
    cut = (proto.normalizer("escape_whitespaces") and not proto.trainer("treat_whitespace_as_suffix", False)
           and space_id is not None and types[space_id] in (NORMAL, USER_DEFINED)
           and UNUSED not in types and not (_joins_space_to_text(proto, odd) if joins is None else joins))
    return model, Split("\u2581+", "merged_with_next") if cut else None


def _bpe_compiled(proto: ModelProto, unk_id: int | None, byte_fallback: bool, user_defined: list[str],
                  odd: list[int]) -> Any:
    """The `SPM` of a model read in C, its merge table built from the file's bytes
    (``Merger.from_vocab``, the same table `SPM._compiled` builds from `_sentencepiece_pure.bpe_arguments`), its
    pure lookups deferred; None: the pure reader's proto, or no compiled merge."""
    vocab = proto.vocab
    module = kernels.kernel("spm_merge") if vocab is not None and len(vocab) else None
    if module is None or (not byte_fallback and unk_id is None):
        return None
    from ..models._cache import CACHE_SIZE, CACHED_WORD_CHARS
    from ..models.spm import SPM

    try:
        merger = module.Merger.from_vocab(vocab.data, vocab.records, frozenset(s for s in user_defined if s),
                                          _byte_ids(vocab), 2 if byte_fallback else 1,
                                          -1 if unk_id is None else unk_id, CACHE_SIZE, CACHED_WORD_CHARS)
    except (ValueError, OverflowError):
        return None
    def arguments() -> dict[str, Any]:
        from ._sentencepiece_pure import bpe_arguments

        return bpe_arguments(proto.materialize(), user_defined, odd)

    return SPM.from_kernel(merger, vocab, arguments, vocab.find,
                           unknown="byte_fallback" if byte_fallback else "unk", unk_id=unk_id)


def _byte_ids(vocab: Any) -> list[int | None]:
    """The id of each byte's ``<0xHH>`` piece (None: none) in a model read in C."""
    return vocab.byte_ids()  # type: ignore[no-any-return]


def _unigram(proto: ModelProto, unk_id: int | None, byte_fallback: bool, odd: list[int]) -> Any:
    from ..models.unigram import Unigram

    if proto.vocab is not None:
        least = proto.vocab.min_normal_score
        unk_score = as_float32((_FLT_MAX if least is None else least) - 10.0)
        model = _unigram_compiled(proto, unk_id, byte_fallback, odd, unk_score)
        if model is not None:
            return model
        proto.materialize()
    if not all(map(math.isfinite, proto.scores)):
        index = next(i for i, score in enumerate(proto.scores) if not math.isfinite(score))
        raise _fail(proto, "score is NaN or Inf", f"pieces[{index}].score")
    unk_score = as_float32(min(compress(proto.scores, map(NORMAL.__eq__, proto.types)), default=_FLT_MAX) - 10.0)
    from ._sentencepiece_pure import unigram_arguments

    return Unigram(**unigram_arguments(proto, odd), unk_id=unk_id, byte_fallback=byte_fallback, unk_score=unk_score,
                   unknown_runs="collapse", float32=True)


def _unigram_compiled(proto: ModelProto, unk_id: int | None, byte_fallback: bool, odd: list[int],
                      unk_score: float) -> Any:
    """The `Unigram` of a model read in C (finite scores, distinct pieces: `Vocab.usual`), its
    `Lattice` built from the file's bytes (``Lattice.from_vocab``, the same trie and scores
    `Unigram._build_paths` builds from `_sentencepiece_pure.unigram_arguments`), its lookups deferred; None: no
    compiled Viterbi."""
    vocab = proto.vocab
    module = kernels.kernel("unigram")
    if module is None or not len(vocab):
        return None
    from ..models.unigram import Unigram

    byte_ids = _byte_ids(vocab) if byte_fallback else None
    try:
        lattice = module.Lattice.from_vocab(vocab.data, vocab.records, -1 if unk_id is None else unk_id, unk_score,
                                            True, False, True, byte_ids)
    except (ValueError, OverflowError):
        return None
    def arguments() -> dict[str, Any]:
        from ._sentencepiece_pure import unigram_arguments

        return unigram_arguments(proto.materialize(), odd)

    return Unigram.from_kernel(lattice, vocab, arguments, vocab.find,
                               unk_id=unk_id, unk_score=unk_score, byte_fallback=byte_fallback, byte_ids=byte_ids,
                               unknown_runs="collapse", float32=True)


def _normalizer(proto: ModelProto, spec: dict[str, Any], key: str, odd: list[int] | None) -> Precompiled:
    """The normalizer of `spec`; with the user-defined pieces passed through when `odd` is given."""
    from ..normalizers.precompiled import Precompiled

    blob = spec.get("precompiled_charsmap", b"")
    if blob:
        _check_charsmap(proto, blob, f"{key}.precompiled_charsmap")

    def flag(name: str) -> bool:
        return bool(spec.get(name, True))  # proto2 defaults: all three true

    passthrough = _of_type(proto, odd, USER_DEFINED) if odd is not None else []
    suffix = bool(proto.trainer("treat_whitespace_as_suffix", False)) if odd is not None else False
    return Precompiled(blob, key=key, match="longest", passthrough=passthrough, passthrough_walk=False,
                       whitespace="sentencepiece", add_space_prefix=flag("add_dummy_prefix"),
                       remove_extra_whitespaces=flag("remove_extra_whitespaces"),
                       escape_whitespaces=flag("escape_whitespaces"), treat_whitespace_as_suffix=suffix)


def _check_charsmap(proto: ModelProto, blob: bytes | memoryview, key: str) -> None:
    """``DecodePrecompiledCharsMap``'s checks."""
    if len(blob) <= 4:
        raise _fail(proto, "the blob for normalization rules is broken", key)
    (trie_size,) = struct.unpack_from("<I", blob)
    if trie_size >= len(blob) - 4:
        raise _fail(proto, f"trie data size {trie_size} exceeds the blob size {len(blob)}", key)
    if trie_size < 1024 or trie_size & 0x3FF:
        raise _fail(proto, f"trie data size {trie_size} is not a positive multiple of 1024", key)
    if blob[-1:] != b"\0":
        raise _fail(proto, "the normalized block must be NUL-terminated", key)


def _detokenizer(proto: ModelProto) -> SentencePieceDetokenizer:
    from ..decoders.sentencepiece_detokenizer import SentencePieceDetokenizer

    denormalizer = None
    spec = proto.denormalizer_spec
    if spec is not None and spec.get("precompiled_charsmap"):
        denormalizer = _normalizer(proto, spec, "denormalizer_spec", None)
    remove_extra = bool(proto.normalizer("remove_extra_whitespaces"))
    return SentencePieceDetokenizer(proto.pieces, proto.types, unk_surface=proto.trainer("unk_surface", " \u2047 "),
                                    strip_first_space=bool(proto.normalizer("add_dummy_prefix")) or remove_extra,
                                    remove_extra_whitespaces=remove_extra, denormalizer=denormalizer)


def _indices_of(proto: ModelProto, text: str) -> list[int]:
    """Every id of piece `text` (the pure reader's list may hold it twice; spm_model's index once)."""
    if proto.vocab is not None:
        at = proto.vocab.find(text)
        return [at] if at >= 0 else []
    from ._sentencepiece_pure import indices

    return indices(proto.pieces, text)


def _special_ids(proto: ModelProto, unk_id: int | None) -> dict[str, int]:
    """``unk_id()``, ``bos_id()``, ``eos_id()``, ``pad_id()`` as sentencepiece computes them (absent: -1)."""
    reserved_first = proto.model_type != "bpe"
    types = proto.types
    ids: dict[str, int] = {}
    for name, (field, default, wanted) in _SPECIAL_PIECES.items():
        text = proto.trainer(field, "") or default
        found = _indices_of(proto, text)
        if reserved_first:
            found.sort(key=lambda i: types[i] not in _RESERVED)  # PieceToId: the reserved map first
        at = found[0] if found else unk_id
        if at is not None and types[at] == wanted:
            ids[name] = at
    return ids
