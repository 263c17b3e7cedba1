"""Where a tokenizer's chat templates live, per format: read once, at load, into `ChatFacts.templates`.

Model folders, as transformers 5.24.0 reads them
(``tokenization_utils_base.py``, ``PreTrainedTokenizerBase.from_pretrained`` →
``_from_pretrained`` and ``__init__``): ``chat_template.jinja`` is the template
named ``default`` and each ``additional_chat_templates/NAME.jinja`` the template
NAME; when either file exists they replace ``tokenizer_config.json``'s
``chat_template`` altogether. Otherwise the config's ``chat_template`` is a
string (named ``default``) or a list of ``{"name", "template"}`` objects
(``__init__`` turns it into a dict; an entry without both raises there, here a
`FormatError` naming the entry). ``chat_template.json`` is the processor's legacy
file (``processing_utils.py``): ``AutoTokenizer`` does not read it, nor does
polytok. Each file may also be stored as ``NAME.gz`` (`polytok.formats.folder`).

GGUF, as llama.cpp reads it (llama-cpp-python 0.3.36's vendored
``src/llama-model.cpp`` ``llama_model_chat_template``: the key
``tokenizer.chat_template``, or ``tokenizer.chat_template.<name>`` for a name;
llama-cpp-python's ``Llama.__init__`` offers every such key): the default
template and every named one found by key, whatever the
``tokenizer.chat_templates`` list says (llama.cpp never reads that list).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import FormatError
from . import folder as folder_files
from .gguf_keys import Tokenizer as Keys

__all__ = ["folder_templates", "config_templates", "gguf_templates"]

_NAMED_PREFIX = Keys.CHAT_TEMPLATE + "."


def folder_templates(folder: Path, config: Mapping[str, Any]) -> dict[str, str]:
    """The chat templates of a model folder by name (transformers' precedence, module notes)."""
    found = {}
    main = folder_files.read_text(folder, "chat_template.jinja")
    if main is not None:
        found["default"] = main
    found.update(folder_files.additional_templates(folder))
    if found:
        return found
    return config_templates(config, str(folder_files.where(folder, "tokenizer_config.json")))


def config_templates(config: Mapping[str, Any], file: str) -> dict[str, str]:
    """tokenizer_config.json's ``chat_template``: a string, or a list of ``{"name", "template"}``."""
    value = config.get("chat_template")
    if isinstance(value, str):
        return {"default": value}
    if not isinstance(value, list):
        return {}
    out = {}
    for i, entry in enumerate(value):
        if not (isinstance(entry, Mapping) and isinstance(entry.get("name"), str)
                and isinstance(entry.get("template"), str)):
            raise FormatError("expected an object with string 'name' and 'template'", file=file,
                              key=f"chat_template[{i}]")
        out[entry["name"]] = entry["template"]
    return out


def gguf_templates(kv: Mapping[str, Any]) -> dict[str, str]:
    """A GGUF's chat templates by name: ``tokenizer.chat_template.<name>`` keys, then the default."""
    out = {key[len(_NAMED_PREFIX):]: value for key, value in kv.items()
           if key.startswith(_NAMED_PREFIX) and isinstance(value, str)}
    default = kv.get(Keys.CHAT_TEMPLATE)
    if isinstance(default, str):  # llama-cpp-python sets the default last: it wins over a key named ".default"
        out["default"] = default
    return out
