"""The facts of a GGUF vocabulary (`polytok.facts.FormatFacts`): named ids, EOG set, chat facts.

Part of the GGUF reader (`polytok.formats.gguf`). As llama.cpp (llama-cpp-python
0.3.36's vendored source) has them once loaded:

- named tokens: the special ids of ``llama_vocab::impl::load`` (src/llama-vocab.cpp),
  each with its vocabulary text (``llama_vocab::token_get_text``), and the
  linefeed id as ``nl``; the EOG set of the same function;
- template variables: ``bos_token``, ``eos_token``, … the texts of those ids, as
  llama-cpp-python's ``Llama.__init__`` gives its chat formatter
  (``token_get_text(bos_id)``);
- chat templates: `polytok.formats.chat_templates.gguf_templates`
  (src/llama-model.cpp ``llama_model_chat_template``);
- control tokens: the CONTROL and UNKNOWN entries, the ones ``parse_special=false``
  leaves as text (``tokenizer_st_partition``); content written "as text" is
  ``parse_special=false`` itself, so USER_DEFINED entries still match (llama.cpp has
  no chat-content mode of its own);
- ``paperkiln.state_tokens.k``: the per-turn state tokens of a chat (0 when absent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import FormatError
from ..facts import STANDARD_NAMES, ChatFacts, FormatFacts, named_ids
from .chat_templates import gguf_templates
from .gguf_keys import Paperkiln

if TYPE_CHECKING:
    from .gguf import GGUFVocab

__all__ = ["gguf_facts"]


def gguf_facts(vocab: GGUFVocab, newline: int | None, control: tuple[str, ...]) -> FormatFacts:
    """The facts of `vocab`; `newline` is llama.cpp's linefeed id (None when it has none);
    `control` the texts of its CONTROL and UNKNOWN entries, in id order (the special-token
    partition's parsed-only entries: the vocabulary is walked once for both)."""
    named = named_ids({**vocab.specials.ids, "nl": newline}, vocab.texts.__getitem__)
    chat = ChatFacts(templates=gguf_templates(vocab.metadata),
                     variables={f"{name}_token": named[name].text for name in STANDARD_NAMES if name in named},
                     control_tokens=control, content_in_text_mode=True, state_tokens_k=_state_tokens_k(vocab))
    return FormatFacts(format="gguf", source=vocab.file, files=(vocab.file,), named_tokens=named,
                       eog_ids=frozenset(vocab.specials.eog), chat=chat)


def _state_tokens_k(vocab: GGUFVocab) -> int:
    k = vocab.metadata.get(Paperkiln.STATE_TOKENS_K, 0)
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise FormatError(f"expected a non-negative integer, found {k!r:.40}", file=vocab.file,
                          key=Paperkiln.STATE_TOKENS_K)
    return k
