"""A GGUF vocabulary written as a Hugging Face tokenizer folder that tokenizes as llama.cpp.

Writes ``tokenizer.json`` (HF tokenizers 0.23.3), ``tokenizer_config.json`` and
``special_tokens_map.json`` from what `polytok.formats.gguf` reads as llama.cpp
(llama-cpp-python 0.3.36) loads it. The stages are `gguf_to_hf_pipeline`'s, the
special tokens `gguf_to_hf_specials`'; every llama.cpp behaviour a tokenizer.json
cannot express is a reason, and any reason refuses the conversion
(`ConversionRefused`) unless ``force``, which writes the nearest form and lists the
reasons in the notes. A decoding no decoder can give on every id sequence
(`decode_differences`: the first space after a dropped BOS) is a note naming the
sequences, not a reason: the ids are exact. docs/convert.md, "GGUF to a Hugging Face folder", explains each.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..formats.gguf import GGUFVocab, read_gguf_vocab
from .gguf_to_hf_pipeline import decode_differences, stages_of, unreachable_renames
from .gguf_to_hf_specials import added_tokens, post_processor, special_tokens_map, tokenizer_config
from .outcome import ConversionRefused, Written

__all__ = ["write_hf_folder", "hf_tokenizer_json"]

_NOTES = ("HF tokenizers returns text, llama.cpp bytes: an invalid UTF-8 sequence becomes U+FFFD "
          "(one per byte for <0xNN> tokens)",)


def hf_tokenizer_json(vocab: GGUFVocab) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The tokenizer.json and tokenizer_config.json of `vocab`, and the reasons they are not exact."""
    stages, reasons = stages_of(vocab)
    added, added_reasons = added_tokens(vocab)
    reasons += added_reasons
    tokenizer = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
                 "normalizer": stages.get("normalizer"), "pre_tokenizer": stages.get("pre_tokenizer"),
                 "post_processor": post_processor(vocab), "decoder": stages.get("decoder"),
                 "model": stages.get("model")}
    return tokenizer, tokenizer_config(vocab, added), reasons


def _renamed_note(vocab: GGUFVocab) -> list[str]:
    renames = unreachable_renames(vocab)
    if not renames:
        return []
    first = min(renames)
    return [f"{len(renames)} entries no text reaches (first {first} {vocab.texts[first]!r}) are written under the "
            f"byte symbols of llama.cpp's rendering of them ({renames[first]!r}), which HF's ByteLevel decoder "
            "gives as llama.cpp does: id_to_token shows that text"]


def write_hf_folder(source: str, out_dir: str, *, force: bool = False) -> Written:
    """Write `source` (a GGUF file) as a HF tokenizer folder at `out_dir` (created if absent).

    Raises:
        ConversionRefused: the vocabulary has llama.cpp behaviour no tokenizer.json expresses
            (nothing is written); with ``force`` the folder is written and the reasons are notes,
            except for a vocabulary type with no tokenizer.json model at all.
        FormatError: `source` is not a GGUF vocabulary polytok reads.
    """
    vocab = read_gguf_vocab(source)
    tokenizer, config, reasons = hf_tokenizer_json(vocab)
    if reasons and (not force or tokenizer["model"] is None):
        raise ConversionRefused(source, "hf", reasons)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name, data in (("tokenizer.json", tokenizer), ("tokenizer_config.json", config),
                       ("special_tokens_map.json", special_tokens_map(vocab))):
        path = out / name
        partial = path.with_name(f".{name}.partial")
        partial.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        os.replace(partial, path)
        files.append(str(path))
    notes = [f"not exact (forced): {r}" for r in reasons] + decode_differences(vocab) + _renamed_note(vocab) \
        + list(_NOTES)
    return Written(target="hf", path=str(out), files=files, notes=notes)
