"""RWKV's decoder: ids → the bytes of their tokens → text, for the RWKV world vocabulary.

Stage: decode (the `IdsDecoder` of the ``rwkv_vocab_*.txt`` reader; a GGUF RWKV
vocabulary decodes through `LlamaDetokenizer`).

Reproduces rwkv 0.8.32, ``rwkv/rwkv_tokenizer.py`` (``TRIE_TOKENIZER.decodeBytes``):
the bytes of every id, joined. Divergence, on purpose (see
`polytok.formats.rwkv_vocab`): ``TRIE_TOKENIZER.decode`` gives the single string
``"\\ufffd"`` when the joined bytes are not valid UTF-8; here each invalid sequence
is one U+FFFD and the rest is kept, and an id without a token raises `DecodeError`
(naming its position) where the reference's ``decodeBytes`` raises ``KeyError``.
There are no special tokens: `skip_special` changes nothing.

``token_bytes(id)`` is the reference's ``idx2token[id]``: the token's bytes.
"""

from __future__ import annotations

from ..errors import DecodeError
from ..models.rwkv import RWKV
from . import IdsDecoder


class RWKVDetokenizer(IdsDecoder):
    def __init__(self, model: RWKV) -> None:
        self.model = model

    def token_bytes(self, id: int) -> bytes:
        try:
            return self.model.token_bytes(id)
        except KeyError:
            raise DecodeError(f"RWKV: token id {id} has no token in this vocabulary") from None

    def decode(self, ids: list[int], *, skip_special: bool) -> str:
        of = self.model.token_bytes
        try:
            data = b"".join(map(of, ids))
        except KeyError:
            position, bad = next((p, i) for p, i in enumerate(ids) if not _has_token(self.model, i))
            raise DecodeError(f"position {position}: RWKV: id {bad!r} has no token in this vocabulary") from None
        return data.decode("utf-8", "replace")


def _has_token(model: RWKV, id_: int) -> bool:
    try:
        model.token_bytes(id_)
    except KeyError:
        return False
    return True
