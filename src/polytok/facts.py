"""What a tokenizer file declares besides its pipeline: `FormatFacts`, filled by the readers.

A reader turns a file into the pipeline's components (`polytok.tokenizer`) and into
these facts: which format and files it read, the tokens the format names (``bos``,
``eos``, … with text and id), the end-of-generation ids, the reference engine's
default for special-token markers, and what a chat needs (`ChatFacts`: the
templates by name, the template variables, the control tokens, the state-token k).
Everything downstream — chat templates, ``inspect``, the corpus manifest, the
local page, the parity adapters — reads these typed fields, never a format's own
keys, so chat knows no format.

Where each fact comes from, per format, is the reader's business and is cited
there: transformers 5.24.0 ``tokenization_utils_base.py``
(``PreTrainedTokenizerBase._from_pretrained``, ``__init__``: chat templates,
named tokens, ``chat_control_tokens``) for model folders; llama.cpp (as vendored
by llama-cpp-python 0.3.36) ``src/llama-vocab.cpp`` ``impl::load`` and
``src/llama-model.cpp`` ``llama_model_chat_template`` for GGUF; the sentencepiece,
tiktoken and mistral-common loaders for theirs (`polytok.formats`).

The facts are frozen: a reader that learns more after building the tokenizer
(a folder's config files, a known rank file) replaces them with
``dataclasses.replace``.  Mapping fields hold plain dicts (a tokenizer pickles);
they are typed read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .special import SpecialTokens

__all__ = ["FormatFacts", "ChatFacts", "NamedToken", "STANDARD_NAMES", "named_ids", "eos_ends"]

#: transformers' ``SPECIAL_TOKENS_ATTRIBUTES`` without ``_token``, in its order
STANDARD_NAMES = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")


@dataclass(frozen=True, slots=True)
class NamedToken:
    """A token the format names: its text, and its id (None where the text is not in the vocabulary)."""

    text: str
    id: int | None


@dataclass(frozen=True, slots=True)
class ChatFacts:
    """What `polytok.chat.render` needs to know about a tokenizer, whatever its format."""

    #: the chat templates by name (Jinja source); a single template is named ``"default"``
    templates: Mapping[str, str] = field(default_factory=dict)
    #: the template variables the file gives (``bos_token``, ``eos_token``, … and a
    #: tokenizer_config.json's named ``extra_special_tokens``)
    variables: Mapping[str, str] = field(default_factory=dict)
    #: the markers read as text when a caller writes them, when the format declares them
    #: outright (GGUF: llama.cpp's CONTROL and UNKNOWN entries); None: transformers'
    #: ``_get_control_tokens`` over the added tokens (`listed_control_tokens`, else the
    #: ones the template writes itself)
    control_tokens: tuple[str, ...] | None = None
    #: tokenizer_config.json's ``chat_control_tokens`` (None when it has none)
    listed_control_tokens: tuple[str, ...] | None = None
    #: how content a caller wrote is encoded "as text" with ``content_special="text"``:
    #: True — the format's own text mode, ``special=AS_TEXT`` (llama.cpp's
    #: ``parse_special=false``, where USER_DEFINED entries still match); False — with no
    #: added token matched at all (transformers' ``_encode_without_added_tokens``)
    content_in_text_mode: bool = False
    #: the per-turn state tokens a chat gets (GGUF ``paperkiln.state_tokens.k``; 0: none)
    state_tokens_k: int = 0


@dataclass(frozen=True, slots=True)
class FormatFacts:
    """What a reader learnt from the file besides the pipeline (see the module notes)."""

    #: the format read: ``tokenizer.json``, ``gguf``, ``sentencepiece``, ``tiktoken``,
    #: ``tekken``, ``gpt2_vocab``, ``wordpiece_vocab`` or ``rwkv_vocab``
    format: str = "?"
    #: what was loaded: a file, a model folder, or ``builtin:NAME``
    source: str = "?"
    #: every file read, in the order read (the tokenizer file, config files, merges, templates)
    files: tuple[str, ...] = ()
    #: the tokens the format names (``bos``, ``eos``, ``eot``, ``unk``, ``pad``, ``fim_pre``, ``nl``, …)
    named_tokens: Mapping[str, NamedToken] = field(default_factory=dict)
    #: the ids that end a generation (llama.cpp's EOG set; elsewhere the EOS)
    eog_ids: frozenset[int] = frozenset()
    #: what ``special=None`` means: the reference engine's plain call (PARSE for
    #: tokenizer.json and GGUF; AS_TEXT for .model, tiktoken, tekken)
    default_special: SpecialTokens = SpecialTokens.PARSE
    chat: ChatFacts = field(default_factory=ChatFacts)
    #: the split pattern of a tiktoken rank file or a tekken.json (tiktoken's ``pat_str``)
    pattern: str | None = None
    #: tekken's special-token count: the ranks' ids start there (0 elsewhere)
    num_special_tokens: int = 0
    #: format-specific notes nothing in polytok branches on: sentencepiece's
    #: ``model_type`` and ``trainer_spec``, a rank file's ``sha256`` and known ``name``,
    #: tekken's ``version``, a folder's ``redefinitions`` …
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def special_ids(self) -> Mapping[str, int]:
        """``{name: id}`` of the named tokens that have an id (read-only)."""
        return MappingProxyType({name: t.id for name, t in self.named_tokens.items() if t.id is not None})


def named_ids(ids: Mapping[str, int | None], text_of: Callable[[int], str]) -> dict[str, NamedToken]:
    """`NamedToken`s of ``{name: id}`` (ids that are None are left out); `text_of(id)` gives the text."""
    return {name: NamedToken(text_of(id_), id_) for name, id_ in ids.items() if id_ is not None}


def eos_ends(named: Mapping[str, NamedToken]) -> frozenset[int]:
    """The end-of-generation ids of a format that declares none of its own: the EOS id, when it has one."""
    eos = named.get("eos")
    return frozenset() if eos is None or eos.id is None else frozenset({eos.id})
