"""spm_train's options: names, defaults, kinds, the checks sentencepiece makes on them.

Names and defaults are those of sentencepiece 0.2.3's ``TrainerSpec`` and
``NormalizerSpec`` (src/sentencepiece_model.proto) plus ``normalization_rule_name``;
the range checks are ``VerifySpec`` (src/trainer_interface.cc). `parse_options`
turns keyword arguments into `TrainOptions`, keeping which were given: spm_train
records only the fields it was given in the model's ``trainer_spec`` and
``normalizer_spec`` (proto2 presence), and so does the writer here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .sentencepiece_normalize import RULE_NAMES

__all__ = ["TrainOptions", "parse_options", "MODEL_TYPES", "UNSUPPORTED"]

#: ``TrainerSpec.ModelType``
MODEL_TYPES = {"unigram": 1, "bpe": 2, "word": 3, "char": 4}

#: TrainerSpec fields this trainer reads, with spm_train's defaults
_TRAINER_DEFAULTS: dict[str, Any] = {
    "model_type": "unigram", "vocab_size": 8000, "character_coverage": 0.9995, "input_sentence_size": 0,
    "shuffle_input_sentence": True, "seed_sentencepiece_size": 1000000, "shrinking_factor": 0.75,
    "max_sentence_length": 4192, "num_threads": 16, "num_sub_iterations": 2, "max_sentencepiece_length": 16,
    "split_by_unicode_script": True, "split_by_number": True, "split_by_whitespace": True,
    "treat_whitespace_as_suffix": False, "allow_whitespace_only_pieces": False, "split_digits": False,
    "control_symbols": [], "user_defined_symbols": [], "required_chars": "", "byte_fallback": False,
    "vocabulary_output_piece_score": True, "hard_vocab_limit": True, "use_all_vocab": False,
    "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1, "unk_piece": "<unk>", "bos_piece": "<s>",
    "eos_piece": "</s>", "pad_piece": "<pad>", "unk_surface": " \u2047 ", "pretokenization_delimiter": "",
    "train_extremely_large_corpus": False,
}

#: NormalizerSpec fields given as options (``normalization_rule_name`` fills ``name``)
_NORMALIZER_DEFAULTS: dict[str, Any] = {
    "normalization_rule_name": "nmt_nfkc", "add_dummy_prefix": True, "remove_extra_whitespaces": True,
    "escape_whitespaces": True,
}

#: spm_train options this trainer refuses, with why
UNSUPPORTED: dict[str, str] = {
    "input": "pass the sentences as `texts`",
    "model_prefix": "the model is returned as bytes",
    "input_format": "pass the sentences as `texts`",
    "normalization_rule_tsv": "only the built-in rules (normalization_rule_name) are supported",
    "denormalization_rule_tsv": "only the built-in rules (normalization_rule_name) are supported",
    "seed_sentencepieces_file": "not supported",
    "auto_character_coverage": "not supported",
    "enable_differential_privacy": "not supported",
    "differential_privacy_noise_level": "not supported",
    "differential_privacy_clipping_threshold": "not supported",
}


@dataclass(frozen=True)
class TrainOptions:
    """Every option's value (given or default) and the specs as spm_train records them."""

    values: dict[str, Any]
    trainer_spec: dict[str, Any]
    normalizer_spec: dict[str, Any]

    def __getitem__(self, name: str) -> Any:
        return self.values[name]


def _convert(name: str, value: Any, default: Any) -> Any:
    if isinstance(default, bool):
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if not isinstance(value, bool):
            raise ValueError(f"option {name}: expected a bool, got {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"option {name}: expected an int, got {value!r}")
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"option {name}: expected an int, got {value!r}") from None
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"option {name}: expected a number, got {value!r}")
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"option {name}: expected a number, got {value!r}") from None
    if isinstance(default, list):
        if isinstance(value, str):
            return [item for item in value.split(",") if item]
        if not isinstance(value, Sequence) or not all(isinstance(item, str) for item in value):
            raise ValueError(f"option {name}: expected a list of strings or a comma-separated string, "
                             f"got {value!r}")
        return list(value)
    if not isinstance(value, str):
        raise ValueError(f"option {name}: expected a string, got {value!r}")
    return value


def _check(values: Mapping[str, Any]) -> None:
    """``VerifySpec``: the ranges sentencepiece accepts."""
    ranges = {"character_coverage": (0.98, 1.0), "max_sentencepiece_length": (1, 512),
              "num_sub_iterations": (1, 10), "num_threads": (1, 1024), "shrinking_factor": (0.5, 0.95),
              "max_sentence_length": (10, 1073741824)}
    if values["vocab_size"] <= 0:
        raise ValueError(f"option vocab_size: must be positive, got {values['vocab_size']}")
    for name, (low, high) in ranges.items():
        if not low <= values[name] <= high:
            raise ValueError(f"option {name}: {values[name]} is outside [{low}, {high}]")
    if values["model_type"] not in ("bpe", "unigram"):
        raise ValueError(f"option model_type: {values['model_type']!r} is not supported "
                         "(this trainer makes 'bpe' and 'unigram' models)")
    if values["use_all_vocab"]:
        raise ValueError("option use_all_vocab: true is valid for WORD/CHAR models only")
    if 0 < values["input_sentence_size"] <= 100:
        raise ValueError(f"option input_sentence_size: must be 0 or above 100, got {values['input_sentence_size']}")
    for name in ("unk_piece", "bos_piece", "eos_piece", "pad_piece"):
        if not values[name]:
            raise ValueError(f"option {name}: must not be empty")
    if values["normalization_rule_name"] not in RULE_NAMES:
        raise ValueError(f"option normalization_rule_name: no rule named {values['normalization_rule_name']!r} "
                         f"(sentencepiece knows {', '.join(RULE_NAMES)})")
    if not values["escape_whitespaces"]:
        raise ValueError("option escape_whitespaces: sentencepiece's trainers need escaped whitespace "
                         "(a normalized sentence must not hold spaces)")


def parse_options(options: Mapping[str, Any]) -> TrainOptions:
    """Values and recorded specs for keyword `options`.

    Raises:
        ValueError: an unknown or unsupported option (named), a value of the wrong kind, or
            one sentencepiece would refuse.
    """
    values = {**_TRAINER_DEFAULTS, **_NORMALIZER_DEFAULTS}
    trainer_spec: dict[str, Any] = {}
    normalizer_spec: dict[str, Any] = {}
    for name, raw in options.items():
        if name in UNSUPPORTED:
            raise ValueError(f"option {name}: {UNSUPPORTED[name]}")
        if name not in values:
            raise ValueError(f"unknown option {name!r} (not an spm_train flag this trainer reads)")
        value = _convert(name, raw, values[name])
        if name == "model_type":
            value = value.lower()
        values[name] = value
        if name == "normalization_rule_name":
            normalizer_spec["name"] = value
        elif name in _NORMALIZER_DEFAULTS:
            normalizer_spec[name] = value
        elif name == "model_type":
            trainer_spec[name] = MODEL_TYPES.get(value, 0)
        else:
            trainer_spec[name] = value
    _check(values)
    normalizer_spec.setdefault("name", values["normalization_rule_name"])
    return TrainOptions(values, trainer_spec, normalizer_spec)
