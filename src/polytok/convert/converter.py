"""``polytok convert``: a Hugging Face model folder's tokenizer as the GGUF llama.cpp's converter writes.

Reproduces the vocabulary part of llama.cpp's ``convert_hf_to_gguf.py
--vocab-only`` (llama-cpp-python 0.3.36 sdist, vendor/llama.cpp): the model
family is ``config.json``'s ``architectures[0]`` (without one, the tokenizer
decides where it leaves no doubt: `_family_of_tokenizer`; else the conversion is
refused), and picks the converter's ``set_vocab``:

- Llama family (``conversion/llama.py`` ``LlamaModel.set_vocab``, line 106):
  ``add_prefix_space`` from tokenizer_config.json, then a ``tokenizer.model``
  (``_set_vocab_sentencepiece``, base.py line 2081), else a Llama BPE
  tokenizer.json (``_set_vocab_llama_hf``, line 2183), else GPT-2 BPE
  (``_set_vocab_gpt2``, line 1964);
- Qwen2/Qwen3 (``conversion/qwen.py``): SentencePiece, else GPT-2 BPE;
- GPT-2 and the default (``TextModel.set_vocab``): GPT-2 BPE;
- BERT (``conversion/bert.py``): WordPiece in phantom-space form;
- Arctic and InternLM2: their own SentencePiece rules (`formats.redefinitions`).

Every file is written beside the output first and read back (`polytok.convert.check`):
a GGUF that does not tokenize the check texts as the folder does is an error, and
nothing is left at the output path. The folder's files are found as every reader
finds them (`polytok.formats.folder`: ``NAME`` or ``NAME.gz``).

Token redefinitions (a config giving an existing id a new text) are applied in
place and listed in the `ConversionReport`; transformers 5.24's AutoTokenizer
appends such texts as new ids instead (e.g. 32000/32001), which polytok never
does. Not reproduced: the CodeLlama (vocab 32016) FIM ids and the Granite
(vocab 49152) add_bos override of ``LlamaModel.set_vocab``; the converter's
other ``general.*`` keys (only ``general.architecture`` and ``general.name``,
taken from gguf-py's ``Metadata.load`` as the converter does, are written).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import models
from ..errors import FormatError
from ..formats import folder as folder_files
from ..formats.gguf_keys import General
from ..formats.redefinitions import Redefinition
from . import gguf_writer
from .check import CheckReport, check_gguf
from .families import keys_for
from .gguf_special_vocab import SpecialVocab
from .gguf_writer import KeyValue
from .pre_structure import PreDecision

__all__ = ["ConversionReport", "to_gguf", "metadata_digests", "ARCHITECTURES"]

# config.json architecture -> (GGUF architecture, converter family)
ARCHITECTURES: dict[str, tuple[str, str]] = {
    **{a: ("llama", "llama") for a in ("LlamaForCausalLM", "LLaMAForCausalLM", "MistralForCausalLM",
                                       "MixtralForCausalLM", "LlamaModel")},
    "ArcticForCausalLM": ("arctic", "spm"), "InternLM2ForCausalLM": ("internlm2", "spm"),
    "Qwen2ForCausalLM": ("qwen2", "qwen"), "Qwen2Model": ("qwen2", "qwen"),
    "Qwen3ForCausalLM": ("qwen3", "qwen"), "Qwen3Model": ("qwen3", "qwen"),
    "GPT2LMHeadModel": ("gpt2", "gpt2"),
    **{a: ("bert", "bert") for a in ("BertModel", "BertForMaskedLM", "BertForSequenceClassification")},
}


_SCORES = {"ranks": "scores: from the tokenizer.json's merge ranks (llama.cpp's converter writes -1000 for "
                     "every entry, with which llama.cpp splits words otherwise; --like-converter writes that)",
           "converter": "scores: -1000 for every entry, as llama.cpp's converter writes them (llama.cpp joins the "
                        "leftmost pair first and splits words otherwise than the tokenizer.json)"}


@dataclass
class ConversionReport:
    """What `to_gguf` wrote."""

    out_path: str
    architecture: str
    model: str
    pre: str
    chkhsh: str | None
    n_tokens: int
    n_merges: int
    type_counts: dict[str, int]
    special_ids: dict[str, int]
    add_flags: dict[str, bool]
    redefinitions: list[Redefinition] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    #: why the architecture was inferred from the tokenizer (no config.json ``architectures``)
    inferred: str | None = None
    #: the read-back of the written file (`polytok.convert.check`)
    check: CheckReport | None = None
    #: how ``pre`` was decided (`polytok.convert.pre_structure`)
    pre_decision: PreDecision | None = None
    #: the Llama tokenizer.json path's scores: ``ranks`` (the merge ranks) or ``converter`` (-1000)
    scores: str | None = None

    def lines(self) -> list[str]:
        """The report as text lines (what ``polytok convert`` prints)."""
        out = [f"wrote {self.out_path}", f"architecture: {self.architecture}"
               + (f" ({self.inferred})" if self.inferred else ""),
               f"tokenizer.ggml.model: {self.model}", f"tokenizer.ggml.pre: {self.pre}"
               + (f" (chkhsh {self.chkhsh})" if self.chkhsh else ""),
               *([self.pre_decision.line()] if self.pre_decision is not None else []),
               f"tokens: {self.n_tokens}  merges: {self.n_merges}  types: "
               + ", ".join(f"{k}={v}" for k, v in sorted(self.type_counts.items())),
               "special ids: " + (", ".join(f"{k}={v}" for k, v in self.special_ids.items()) or "none"),
               "add flags: " + (", ".join(f"add_{k}={v}" for k, v in self.add_flags.items()) or "none"),
               *([_SCORES[self.scores]] if self.scores is not None else []),
               f"redefinitions: {len(self.redefinitions)}"]
        out += [f"  {r.id}: {r.old!r} -> {r.new!r} ({r.type}, {r.source})" for r in self.redefinitions]
        if self.check is not None:
            out.append(self.check.line())
        return out


def _hparams(folder: Path) -> dict[str, Any]:
    data = folder_files.read_object(folder, "config.json")
    if data is None:
        return {}
    return {**data, **data["text_config"]} if isinstance(data.get("text_config"), dict) else data


def _family(folder: Path, hparams: dict[str, Any]) -> tuple[str, str, str, str | None]:
    """(HF architecture, GGUF architecture, converter family, why it was inferred or None)."""
    archs = hparams.get("architectures")
    if isinstance(archs, list) and archs:
        arch = str(archs[0])
        if arch not in ARCHITECTURES:
            raise FormatError(f"architecture {arch!r} is not one polytok convert knows (known: "
                              + ", ".join(sorted(ARCHITECTURES)) + ")",
                              file=str(folder_files.where(folder, "config.json")), key="architectures")
        return (arch, *ARCHITECTURES[arch], None)
    arch, why = _family_of_tokenizer(folder)
    return (arch, *ARCHITECTURES[arch], why)


# tokenizer.json models no llama.cpp vocabulary type runs, without a tokenizer.model beside them
_NO_GGUF_MODEL = {
    "WordLevel": "llama.cpp has no vocabulary type for a WordLevel model (its types: SPM, BPE, WPM, UGM, RWKV, "
                 "PLaMo-2)",
    "Unigram": "llama.cpp's Unigram (UGM) is written from a tokenizer.model and normalizes only with its "
               "precompiled charsmap and whitespace options, and joins a run of unknown characters into one "
               "token where HF's Unigram gives one each",
}


def _refuse_model_type(folder: Path) -> None:
    """A `FormatError` for a tokenizer.json-only folder whose model no GGUF vocabulary type runs."""
    from .gguf_vocab import read_tokenizer_json_data, tokenizer_json_path

    path = tokenizer_json_path(folder)
    if path is None or folder_files.find(folder, "tokenizer.model") is not None:
        return
    kind = type(models.from_config(read_tokenizer_json_data(folder)["model"])).__name__
    if kind in _NO_GGUF_MODEL:
        raise FormatError(_NO_GGUF_MODEL[kind], file=str(path), key="model.type")


def _family_of_tokenizer(folder: Path) -> tuple[str, str]:
    """Without config.json's ``architectures``: the converter path the tokenizer files leave no doubt about.

    A tokenizer.model takes the SentencePiece path (Llama's), a WordPiece tokenizer.json
    BERT's, a byte-fallback BPE with a Sequence decoder the Llama HF path, a byte-level
    BPE GPT-2's; anything else is refused (the GGUF would be a guess).
    """
    from .gguf_vocab import is_llama_hf, read_tokenizer_json_data, tokenizer_json_path

    where = str(folder_files.where(folder, "config.json"))
    if folder_files.find(folder, "tokenizer.model") is not None:
        return "LlamaForCausalLM", "no config.json architectures: tokenizer.model takes Llama's SentencePiece path"
    if tokenizer_json_path(folder) is None:
        raise FormatError("no tokenizer.model and no tokenizer.json in this folder", file=str(folder))
    data = read_tokenizer_json_data(folder)
    kind = type(models.from_config(data["model"])).__name__  # old files name no "type": HF guesses it
    if kind == "WordPiece":
        return "BertModel", "no config.json architectures: a WordPiece tokenizer.json takes BERT's path"
    if kind == "BPE" and is_llama_hf(data):
        return "LlamaForCausalLM", "no config.json architectures: a byte-fallback BPE takes the Llama HF path"
    if kind == "BPE" and _byte_level(data):
        return "GPT2LMHeadModel", "no config.json architectures: a byte-level BPE takes GPT-2's path"
    raise FormatError(f"no config.json naming the model's architectures, and a {kind} tokenizer.json does not "
                      "tell which converter path to take: add a config.json with \"architectures\": [...]",
                      file=where, key="architectures")


def _byte_level(data: dict[str, Any]) -> bool:
    """A ByteLevel pre-tokenizer (alone or in a Sequence), as GPT-2's BPE has."""
    pre = data.get("pre_tokenizer")
    steps = pre.get("pretokenizers", []) if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]
    return any(isinstance(step, dict) and step.get("type") == "ByteLevel" for step in steps)


def _model_name(folder: Path) -> str:
    gguf = gguf_writer.require_gguf()
    try:
        meta = gguf.Metadata.load(None, folder, None, 0)
        return str(meta.name) if meta.name else folder.name
    except Exception:  # gguf's heuristics failing must not stop a conversion
        return folder.name


def to_gguf(model_dir: str | os.PathLike[str], out_path: str | os.PathLike[str], *, pre: str | None = None,
            base_gguf: str | os.PathLike[str] | None = None, like_converter: bool = False) -> ConversionReport:
    """Write the tokenizer of a Hugging Face model folder as llama.cpp's converter would.

    Args:
        model_dir: the folder (tokenizer.json and/or tokenizer.model, tokenizer_config.json,
            added_tokens.json, special_tokens_map.json, config.json).
        out_path: the GGUF to write.
        pre: the ``tokenizer.ggml.pre`` name to write instead of the one recognised from
            the pre-tokenizer's structure and hash (`polytok.convert.pre_structure`).
        base_gguf: write a copy of this GGUF with its tokenizer keys replaced, instead of
            a vocab-only file.
        like_converter: for a Llama tokenizer.json without a tokenizer.model, write every
            score -1000 as the converter does (llama.cpp then splits words otherwise than HF),
            not the scores of the merge ranks (`polytok.convert.gguf_vocab.rank_scores`).

    Returns:
        The `ConversionReport` (every redefinition, the pre name, counts).

    Raises:
        FormatError: a file is missing or invalid, an id is out of range, no llama.cpp
            pre type splits as the tokenizer and its hash is unknown (the message names the
            nearest type and what differs) and `pre` is not given,
            or there is no config.json ``architectures`` and the tokenizer does not decide.
        ConversionCheckError: the GGUF written does not read back as the folder's tokenizer
            (the message names the first differing text); nothing is written to `out_path`.
        PolytokError: the ``gguf`` package (extra ``polytok[convert]``) is missing.
    """
    folder = Path(model_dir)
    if not folder.is_dir():
        raise FormatError("not a model folder", file=str(folder))
    gguf_writer.require_gguf()
    _refuse_model_type(folder)
    hparams = _hparams(folder)
    hf_arch, arch, family, inferred = _family(folder, hparams)
    keys, facts = keys_for(folder, family, hf_arch, hparams, pre, like_converter)
    # a copy keeps the base file's general.name; a new file gets the converter's
    head = [] if base_gguf is not None else [KeyValue(General.NAME, _model_name(folder), "str")]
    redefined = {r.new: r.id for r in facts["redefinitions"] if r.old is not None}
    check = _write_checked(folder, Path(out_path), arch, head + keys, base_gguf, facts["path"], redefined,
                           facts.get("scores") == "converter")
    counts: dict[str, int] = {}
    for t in facts["types"]:
        counts[t] = counts.get(t, 0) + 1
    sv: SpecialVocab = facts["special"]
    return ConversionReport(os.fspath(out_path), arch, facts["model"], facts["pre"], facts.get("chkhsh"),
                            facts["n_tokens"], len(sv.merges), counts, dict(sv.ids), dict(sv.add),
                            facts["redefinitions"], [k.key for k in keys], inferred, check,
                            facts.get("pre_decision"), facts.get("scores"))


def _write_checked(folder: Path, out: Path, arch: str, keys: list[KeyValue],
                   base_gguf: str | os.PathLike[str] | None, path: str, redefined: dict[str, int],
                   like_converter: bool) -> CheckReport:
    """Write the GGUF beside `out`, read it back (`polytok.convert.check`), and only then move it to `out`."""
    partial = out.with_name(out.name + ".partial")
    try:
        gguf_writer.write_gguf(partial, arch, keys, base_gguf=base_gguf)
        check = check_gguf(folder, partial, path, redefined, like_converter=like_converter)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)
    return check




def metadata_digests(gguf_path: str | os.PathLike[str], chunk: int = 4096) -> dict[str, dict[str, Any]]:
    """Per-key digests of a GGUF's tokenizer metadata (``tokenizer.*`` and ``general.architecture``).

    Each key maps to ``{"type": [...], "sha256": ..., "value": scalar}`` and, for
    arrays, ``"len"`` and ``"chunks"`` (the sha256 of each `chunk` elements) so a
    difference can be located without storing the vocabulary.
    """
    import hashlib
    import json

    from ..formats.gguf_reader import read_gguf_metadata

    meta = read_gguf_metadata(gguf_path)
    out: dict[str, dict[str, Any]] = {}
    for key, value in meta.kv.items():
        if not (key.startswith("tokenizer.") or key == General.ARCHITECTURE):
            continue
        if hasattr(value, "tolist"):  # a numeric array (array.array), as a list for JSON
            value = value.tolist()

        def digest(v: Any) -> str:
            return hashlib.sha256(json.dumps(v, ensure_ascii=False).encode()).hexdigest()

        row: dict[str, Any] = {"type": [t.name for t in meta.types[key]], "sha256": digest(value)}
        if isinstance(value, list):
            row["len"] = len(value)
            row["chunks"] = [digest(value[i:i + chunk])[:16] for i in range(0, len(value), chunk)]
        elif not isinstance(value, str) or len(value) <= 200:
            row["value"] = value
        out[key] = row
    return out
