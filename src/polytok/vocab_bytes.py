"""The exact bytes of every token, and which ids are special or end a generation.

What a constrained-decoding engine needs to know of a vocabulary, read from the loaded
tokenizer rather than rebuilt from its pieces (`polytok.vocab_export` writes it in each
engine's shape):

- `vocab_bytes`: ``table[id]`` for every id below `Tokenizer.n_vocab`: the bytes
  `Tokenizer.token_bytes` gives (what decoding writes for the token in the middle of a
  sequence, special tokens written out), or None where no token has the id (tiktoken's
  gap below ``<|endofprompt|>``, an unused slot). A token that writes nothing (llama.cpp's
  UNUSED entries) is ``b""``, not None: it exists but stands for no bytes.
- `special_token_ids`: the control tokens, which a model emits but no text stands for
  (a grammar never matches them as text): per format,

  * tokenizer.json and the formats read into an added vocabulary (.model, vocab.txt,
    vocab.json): the added entries with ``special=True`` — what HF's and sentencepiece's
    decode with special tokens skipped leave out (sentencepiece's CONTROL pieces);
  * GGUF: the CONTROL and UNKNOWN entries, which llama.cpp's ``token_to_piece(..,
    special=false)`` renders empty (``llama-vocab.cpp``); USER_DEFINED entries are text
    (llama.cpp matches them in text whatever ``parse_special`` says);
  * tiktoken: the special tokens (``Encoding.special_tokens_set``); tekken: every id below
    ``num_special_tokens`` (mistral-common's ``Tekkenizer``, fillers included);
  * every format: the named unknown token (``unk``), which decoding writes as a placeholder.

- `stop_token_ids`: the end-of-generation ids. `Tokenizer.eog_ids` (llama.cpp's EOG set for
  GGUF, the EOS elsewhere), with, for a model folder, the ``eos_token_id`` of its
  ``generation_config.json`` (one id or a list: what transformers' ``generate`` stops on),
  and, for a tiktoken file with no EOS of its own, ``<|endoftext|>`` (tiktoken's
  ``Encoding.eot_token``).
- `adds_prefix_space`: whether decoding drops a space that the joined token bytes hold at
  the start (sentencepiece's dummy prefix, HF's ``Metaspace``/``Prepend`` and
  WordPiece): the bytes a generation writes after a prompt keep it; a text decoded alone
  does not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from .decoders.llama_detokenizer import LlamaDetokenizer
from .decoders.token_bytes import TokenBytes
from .errors import DecodeError, FormatError
from .formats.gguf_token_attrs import ATTR_CONTROL, ATTR_UNKNOWN

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["vocab_bytes", "special_token_ids", "stop_token_ids", "generation_config_eos", "adds_prefix_space"]

_PROBES = ("Hello", "world", "a")


def vocab_bytes(tok: Tokenizer) -> list[bytes | None]:
    """The bytes of each id below ``tok.n_vocab``; None where no token has the id (module notes)."""
    table: list[bytes | None] = []
    token_bytes = tok.decoder.token_bytes
    for id_ in range(tok.n_vocab):
        try:
            table.append(token_bytes(id_))
        except DecodeError:
            table.append(None)
    return table


def special_token_ids(tok: Tokenizer) -> frozenset[int]:
    """The ids of the control tokens of `tok`'s format (module notes)."""
    found = {id_ for id_, entry in tok.added.id_to_entry.items() if entry.special}
    decoder = tok.decoder
    if isinstance(decoder, LlamaDetokenizer):
        found.update(id_ for id_, attr in enumerate(decoder.attrs) if attr & (ATTR_CONTROL | ATTR_UNKNOWN))
    elif isinstance(decoder, TokenBytes):
        found.update(decoder.special_ids)
    unk = tok.special_ids.get("unk")
    if unk is not None:
        found.add(unk)
    return frozenset(found)


def generation_config_eos(folder: str | Path) -> list[int]:
    """The ``eos_token_id`` of ``folder/generation_config.json`` as a list ([] without the file or the key).

    Raises:
        FormatError: the file is not JSON, or the key is neither an id nor a list of ids.
    """
    path = Path(folder) / "generation_config.json"
    if not path.is_file():
        return []
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormatError(f"not JSON: {exc}", file=str(path)) from None
    value = config.get("eos_token_id") if isinstance(config, dict) else None
    if value is None:
        return []
    ids = value if isinstance(value, list) else [value]
    if not all(type(i) is int and i >= 0 for i in ids):
        raise FormatError(f"an id or a list of ids expected, not {value!r}", file=str(path), key="eos_token_id")
    return list(ids)


def stop_token_ids(tok: Tokenizer) -> list[int]:
    """The end-of-generation ids of `tok`, sorted (module notes)."""
    found = set(tok.eog_ids)
    source = Path(tok.facts.source)
    if source.is_dir():
        found.update(generation_config_eos(source))
    if not found and tok.facts.format == "tiktoken":
        eot = tok.added.token_to_id("<|endoftext|>")
        if eot is not None:
            found.add(eot)
    return sorted(found)


def adds_prefix_space(tok: Tokenizer) -> bool:
    """Whether ``tok.decode`` of a text's ids drops a space their joined bytes begin with (module notes)."""
    for text in _PROBES:
        ids = tok.encode(text, add_special=False)
        if not ids:
            continue
        joined = b"".join(tok.token_bytes(i) for i in ids)
        decoded = tok.decode(ids).encode("utf-8")
        if joined != decoded:
            return joined == b" " + decoded
    return False
