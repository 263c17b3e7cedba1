"""HF tokenizers' decode: ids → pieces → the ``decoder`` chain → text.

Stage: decode, the `IdsDecoder` of the tokenizer.json, vocab.json + merges.txt and
vocab.txt readers, and of a `Tokenizer` built from a model alone.

Reproduces HF tokenizers 0.23.3 ``tokenizers/src/tokenizer/mod.rs``
(``TokenizerImpl::decode``): each id becomes its piece, the added vocabulary's first
(``AddedVocabulary::simple_id_to_token``; here its normalized form where it has one),
then the model's; an id that neither knows is dropped, silently; with `skip_special`
the pieces of special added tokens are dropped too. The chain turns the pieces into
text; without one (``"decoder": null``) the pieces are joined with spaces.

``token_bytes(id)`` has no HF call. It is what decode writes for the token in the
middle of a sequence, before the bytes are read as UTF-8:

- a chain with a ``ByteLevel`` decoder: the bytes HF's ByteLevel decoder takes the
  piece for (each character through the GPT-2 byte alphabet; a piece with a character
  outside it, its own UTF-8). The chain's other components are not applied;
- a chain with ``ByteFallback``, and a byte piece (``<0xHH>``): that byte;
- any other piece: the text the chain writes for it between two other tokens, cut out
  of the chain's output for ``[S1, piece, S2]`` (two private-use characters that no
  component rewrites): Metaspace's or Replace's ``"▁the"`` is ``" the"``, WordPiece's
  ``"##ing"`` is ``"ing"`` and its ``"the"`` is ``" the"``, BPEDecoder's ``"the</w>"``
  is ``"the "``; without a chain, a space and the piece. If the output around the two
  characters is not what they alone give (a chain that rewrites them), the piece's
  own UTF-8 is returned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DecodeError
from . import Decoder, IdsDecoder
from .byte_fallback import BYTE_TOKENS, ByteFallback
from .byte_level import ByteLevel, piece_bytes
from .sequence import Sequence

if TYPE_CHECKING:
    from ..models import Model
    from ..special import AddedVocabulary

_BEFORE, _AFTER = "\ue000", "\ue001"  # two, not one: CTC merges equal neighbours


def _flat(chain: Decoder | None) -> list[Decoder]:
    if chain is None:
        return []
    if isinstance(chain, Sequence):
        return [part for inner in chain.decoders for part in _flat(inner)]
    return [chain]


class ChainDecoder(IdsDecoder):
    """Decode through the vocabulary's pieces and an HF decoder chain.

    Args:
        chain: the ``decoder`` component, or None (pieces joined with spaces).
        model: the model, for pieces the added vocabulary does not hold.
        added: the tokenizer's added vocabulary (tokens added later are seen too).
    """

    def __init__(self, chain: Decoder | None, model: Model, added: AddedVocabulary) -> None:
        self.chain = chain
        self.model = model
        self.added = added
        parts = _flat(chain)
        self._byte_level = any(isinstance(p, ByteLevel) for p in parts)
        self._byte_fallback = any(isinstance(p, ByteFallback) for p in parts)
        self._frame: tuple[str, str | None] | None = None  # the chain's text for [S1], and what [S1, S2] adds to it

    @property
    def decoders(self) -> list[Decoder]:
        """The chain as a list (empty without one), as `polytok.parity.explain` lists components."""
        return [] if self.chain is None else [self.chain]

    def decode(self, ids: list[int], *, skip_special: bool) -> str:
        pieces = self._pieces(ids, skip_special)
        if self.chain is None:
            return " ".join(pieces)
        return "".join(self.chain.decode_chain(pieces))

    def _pieces(self, ids: list[int], skip_special: bool) -> list[str]:
        pieces: list[str] = []
        added, model = self.added, self.model
        for id_ in ids:
            s = added.decode_string(id_)
            if s is None:
                s = model.id_to_token(id_)
                if s is None:
                    continue  # HF drops ids it does not know, silently
            if skip_special and added.is_special_string(s):
                continue
            pieces.append(s)
        return pieces

    def token_bytes(self, id: int) -> bytes:
        piece = self.added.decode_string(id) if id >= 0 else None
        if piece is None and id >= 0:
            piece = self.model.id_to_token(id)
        if piece is None:
            raise DecodeError(f"token id {id} is outside the vocabulary")
        if self._byte_level:
            return piece_bytes(piece)
        if self._byte_fallback:
            byte = BYTE_TOKENS.get(piece)
            if byte is not None:
                return bytes([byte])
        return self._between(piece).encode("utf-8", "surrogatepass")

    def _between(self, piece: str) -> str:
        if self.chain is None:
            return " " + piece
        decode = self.chain.decode_chain
        if self._frame is None:
            head = "".join(decode([_BEFORE]))
            both = "".join(decode([_BEFORE, _AFTER]))
            self._frame = (head, both[len(head):] if both.startswith(head) else None)
        head, tail = self._frame
        whole = "".join(decode([_BEFORE, piece, _AFTER]))
        if tail is None or not whole.startswith(head) or not whole.endswith(tail) \
                or len(whole) < len(head) + len(tail):
            return piece
        return whole[len(head):len(whole) - len(tail)]
