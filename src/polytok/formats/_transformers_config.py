"""The transformers settings beside a classic vocabulary file (``vocab.txt``, ``vocab.json``).

Format: a model folder's ``tokenizer_config.json``, ``special_tokens_map.json``
and ``added_tokens.json``, read as transformers 5.24.0's ``from_pretrained``
reads them for a folder without ``tokenizer.json``:
``tokenization_utils_base.py`` (``PreTrainedTokenizerBase._from_pretrained``:
the config is the keyword arguments, the caller's keywords override it,
``additional_special_tokens`` becomes ``extra_special_tokens``,
``added_tokens_decoder`` entries become ``AddedToken(**entry)`` and, only when
the config has none, ``special_tokens_map.json`` and ``added_tokens.json`` are
read; named special tokens are replaced by the added-token entry of the same
text) and ``tokenization_utils_tokenizers.py`` (``TokenizersBackend.__init__``:
the added tokens are the ``added_tokens_decoder`` entries in id order, then
each named special token not yet among them, then the extra special tokens,
all added in one ``add_tokens`` call; a named token's entry is made special).

An entry keeps HF's rule that ``normalized``, when not given, follows
``special`` at the time the token is added (``AddedToken`` in the tokenizers
binding). The readers (`wordpiece_vocab`, `gpt2_vocab`) take the settings they
use from `Settings.values`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..decoders import Decoder
from ..decoders.fuse import Fuse
from ..decoders.replace import Replace
from ..decoders.sequence import Sequence
from ..errors import FormatError
from ..facts import FormatFacts, NamedToken
from ..special import AddedToken, SpecialTokens
from . import folder as folder_files

__all__ = ["Settings", "read_settings", "with_clean_up", "check_options", "NAMED_TOKENS"]

# PreTrainedTokenizerBase.SPECIAL_TOKENS_ATTRIBUTES, in its order (the order tokens are added)
NAMED_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
# PreTrainedTokenizerBase.clean_up_tokenization, in its order, on the whole decoded text
_CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
             (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))
_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


def with_clean_up(decoder: Decoder) -> Sequence:
    """`decoder`, then transformers' ``clean_up_tokenization`` on the joined text (Fuse + Replace)."""
    return Sequence([decoder, Fuse()] + [Replace(old, new) for old, new in _CLEAN_UP])


@dataclass(slots=True)
class Entry:
    """A tokenizers ``AddedToken`` as the Python binding keeps it (``normalized`` may be unset)."""

    content: str
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool | None = None

    def resolved(self) -> AddedToken:
        normalized = (not self.special) if self.normalized is None else self.normalized
        return AddedToken(self.content, self.special, self.single_word, self.lstrip, self.rstrip, normalized)


@dataclass(slots=True)
class Settings:
    """The keyword arguments transformers would pass to the tokenizer class, resolved."""

    values: dict[str, Any] = field(default_factory=dict)
    named: dict[str, Entry] = field(default_factory=dict)
    added: list[AddedToken] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def token(self, name: str) -> str | None:
        entry = self.named.get(name)
        return None if entry is None else entry.content

    def facts(self, format: str, *files: Path) -> FormatFacts:
        """The facts of a tokenizer read from `files` (the vocabulary first) with these settings."""
        split = self.values.get("split_special_tokens")
        return FormatFacts(format=format, source=str(files[0]), files=tuple(map(str, files)) + tuple(self.files),
                           default_special=SpecialTokens.AS_TEXT if split else SpecialTokens.PARSE)

    def named_tokens(self, token_to_id: Callable[[str], int | None]) -> dict[str, NamedToken]:
        """``{"unk": …, "cls": …}``: the named tokens, with their ids (None for a text not in the vocabulary)."""
        return {name.removesuffix("_token"): NamedToken(entry.content, token_to_id(entry.content))
                for name, entry in self.named.items()}


def check_options(reader: str, options: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(options) - known)
    if unknown:
        raise FormatError(f"the {reader} reader takes no option {', '.join(unknown)} "
                          f"(it takes {', '.join(sorted(known))})")


def _json_object(folder_path: Path, name: str) -> tuple[dict[str, Any] | None, Path]:
    """A config file of the folder (`formats.folder`: NAME or NAME.gz), and its path."""
    return folder_files.read_object(folder_path, name), folder_files.where(folder_path, name)


def _entry(value: Any, where: str, file: str, *, special: bool | None = None) -> Entry:
    """An ``AddedToken(**value)`` from a string or an object with ``content`` and flags."""
    if isinstance(value, str):
        return Entry(value, special=bool(special))
    if not isinstance(value, dict) or not isinstance(value.get("content"), str):
        raise FormatError(f"expected a token string or an object with a 'content' string, found {value!r:.60}",
                          file=file, key=where)
    flags: dict[str, Any] = {}
    for flag in _FLAGS:
        if flag in value:
            if not isinstance(value[flag], bool):
                raise FormatError(f"expected a boolean, found {value[flag]!r:.40}", file=file, key=f"{where}.{flag}")
            flags[flag] = value[flag]
    if special is not None:
        flags["special"] = special
    return Entry(value["content"], **flags)


def read_settings(folder: Path, options: dict[str, Any], defaults: dict[str, str | None]) -> Settings:
    """The settings of the tokenizer in `folder`, with `options` as the caller's keywords.

    `defaults` holds the class's default named tokens (e.g. BERT's ``[UNK]``…).
    """
    settings = Settings()
    found, config_path = _json_object(folder, "tokenizer_config.json")
    config = found or {}
    if config:
        settings.files.append(str(config_path))
    values = {k: v for k, v in config.items() if k not in ("tokenizer_class", "init_inputs")}
    values.update(options)
    if "additional_special_tokens" in values and not values.get("extra_special_tokens"):
        values["extra_special_tokens"] = values.pop("additional_special_tokens")
    by_id, by_text = _added_tokens_decoder(values, str(config_path))
    if not by_id:
        _legacy_files(folder, values, options, by_id, by_text, settings)
    for name, default in defaults.items():
        values.setdefault(name, default)
    named = _named_entries(values, by_text, str(config_path))
    settings.values, settings.named = values, named
    settings.added = _tokens_to_add(by_id, named, _extra_entries(values, str(config_path)))
    return settings


def _added_tokens_decoder(values: dict[str, Any], file: str) -> tuple[dict[int, Entry], dict[str, Entry]]:
    raw = values.get("added_tokens_decoder")
    by_id: dict[int, Entry] = {}
    if raw is None:
        return by_id, {}
    if not isinstance(raw, dict):
        raise FormatError("expected an object of id: token", file=file, key="added_tokens_decoder")
    for key, value in raw.items():
        where = f"added_tokens_decoder.{key}"
        try:
            id_ = int(key)
        except ValueError:
            raise FormatError(f"expected an integer id, found {key!r}", file=file, key=where) from None
        by_id[id_] = _entry(value, where, file)
    return by_id, {e.content: e for e in by_id.values()}


def _legacy_files(folder: Path, values: dict[str, Any], options: dict[str, Any], by_id: dict[int, Entry],
                  by_text: dict[str, Entry], settings: Settings) -> None:
    """special_tokens_map.json, then added_tokens.json: read only when the config has no added_tokens_decoder."""
    special_map, map_path = _json_object(folder, "special_tokens_map.json")
    if special_map is not None:
        settings.files.append(str(map_path))
        for key, value in special_map.items():
            if options.get(key):
                continue  # the caller's keyword wins
            if key in ("extra_special_tokens", "additional_special_tokens") and isinstance(value, list):
                existing = list(values.get("extra_special_tokens") or [])
                existing += [v for v in value if v not in existing]
                values["extra_special_tokens"] = existing
            elif isinstance(value, dict):
                values[key] = _entry(value, key, str(map_path), special=True)
            else:
                values[key] = value
    legacy, added_path = _json_object(folder, "added_tokens.json")
    if legacy is None:
        return
    settings.files.append(str(added_path))
    specials = {_text(values.get(k)) for k in NAMED_TOKENS}
    specials |= {_text(t) for t in values.get("extra_special_tokens") or []}
    for text, id_ in legacy.items():
        if not isinstance(id_, int) or isinstance(id_, bool):
            raise FormatError(f"expected an integer id, found {id_!r:.40}", file=str(added_path), key=text)
        is_special = text in specials
        by_id[id_] = by_text[text] = Entry(text, special=is_special, normalized=not is_special)


def _text(value: Any) -> str | None:
    if isinstance(value, Entry):
        return value.content
    if isinstance(value, dict):
        content = value.get("content")
        return content if isinstance(content, str) else None
    return value if isinstance(value, str) else None


def _named_entries(values: dict[str, Any], by_text: dict[str, Entry], file: str) -> dict[str, Entry]:
    """The named special tokens (standard names first, then other ``*_token`` keys)."""
    names = list(NAMED_TOKENS) + [k for k in values if k.endswith("_token") and k not in NAMED_TOKENS
                                  and isinstance(values[k], (str, Entry, dict))]
    named: dict[str, Entry] = {}
    for name in names:
        value = values.get(name)
        if value is None:
            continue
        if isinstance(value, Entry):
            entry = value
        elif isinstance(value, dict) and value.get("__type", "AddedToken") == "AddedToken":
            entry = _entry({k: v for k, v in value.items() if k != "__type"}, name, file)
        else:
            entry = _entry(value, name, file)
        named[name] = by_text.get(entry.content, entry) if by_text else entry
    return named


def _extra_entries(values: dict[str, Any], file: str) -> list[Entry]:
    raw = values.get("extra_special_tokens") or []
    if isinstance(raw, dict):
        raw = list(raw.values())
    if not isinstance(raw, list):
        raise FormatError("expected a list of tokens", file=file, key="extra_special_tokens")
    out = []
    for i, value in enumerate(raw):
        if isinstance(value, Entry):
            out.append(value)
        elif isinstance(value, dict):
            out.append(_entry({k: v for k, v in value.items() if k != "__type"}, f"extra_special_tokens[{i}]",
                              file, special=True))
        else:
            out.append(_entry(value, f"extra_special_tokens[{i}]", file, special=True))
    return out


def _tokens_to_add(by_id: dict[int, Entry], named: dict[str, Entry], extra: list[Entry]) -> list[AddedToken]:
    """TokenizersBackend.__init__'s list: added_tokens_decoder by id, then named, then extra specials."""
    entries = [by_id[i] for i in sorted(by_id)]
    seen = {e.content for e in entries}
    for entry in list(named.values()) + extra:
        if entry.content not in seen:
            entries.append(entry)
            seen.add(entry.content)
    named_texts = {e.content for e in named.values()}
    for entry in entries:
        if not entry.special and entry.content in named_texts:
            entry.special = True  # normalized, when unset, follows (AddedToken's binding)
    return [e.resolved() for e in entries]
