"""Post-processor JSON parsing: HF's untagged order, required keys, and errors that name the key."""

from __future__ import annotations

import json

import pytest

import polytok.post_processors as PP
from polytok.errors import FormatError

tokenizers = pytest.importorskip("tokenizers")

SEP_CLS = {"sep": ["[SEP]", 5], "cls": ["[CLS]", 4]}
FLAGS = {"trim_offsets": True, "add_prefix_space": True}
SEQ_A = {"Sequence": {"id": "A", "type_id": 0}}
TPL = {"single": [SEQ_A], "pair": [SEQ_A], "special_tokens": {}}

CONFIGS = [
    {"type": "BertProcessing", **SEP_CLS},
    {"type": "BertProcessing", **SEP_CLS, **FLAGS},  # HF reads it as RobertaProcessing
    {"type": "RobertaProcessing", **SEP_CLS},  # ... and this one as BertProcessing
    {"type": "RobertaProcessing", **SEP_CLS, **FLAGS, "junk": 1},
    {"type": "ByteLevel", **SEP_CLS},  # BertProcessing
    {"type": "ByteLevel", **TPL},  # TemplateProcessing
    {"type": "Sequence", **TPL},  # TemplateProcessing
    {"type": "TemplateProcessing", **FLAGS},
    {"type": "BertProcessing", **FLAGS},
    {"type": "ByteLevel", **FLAGS},
    {"type": "ByteLevel", "add_prefix_space": True},
    {"type": "ByteLevel", "add_prefix_space": 1, "trim_offsets": True},
    {"type": "ByteLevel", **FLAGS, "use_regex": None},
    {"type": "ByteLevel", **FLAGS, "use_regex": False},
    {"type": "RobertaProcessing", "processors": []},
    {"type": "Sequence", "processors": []},
    {"type": "Sequence", "processors": [{"type": "ByteLevel", **FLAGS}, {"type": "Sequence", "processors": []}]},
    {"type": "Sequence", "processors": [{"type": "ByteLevel", "add_prefix_space": True}]},
    {"type": "BertProcessing", "sep": ["[SEP]", 5], "cls": ["[CLS]", 4, 3]},
    {"type": "BertProcessing", "sep": ["[SEP]", -5], "cls": ["[CLS]", 4]},
    {"type": "BertProcessing", "sep": ["[SEP]", 5.0], "cls": ["[CLS]", 4]},
    {"type": "BertProcessing", "sep": ["[SEP]", 2**32], "cls": ["[CLS]", 4]},
    {"type": "BertProcessing", "sep": [5, "[SEP]"], "cls": ["[CLS]", 4]},
    {"type": "BertProcessing", "sep": {"0": "[SEP]", "1": 5}, "cls": ["[CLS]", 4]},
    {"type": "TemplateProcessing", "single": [SEQ_A], "pair": [], "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [SEQ_A], "pair": []},
    {"type": "TemplateProcessing", "single": "$A", "pair": [], "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A"}}], "pair": [], "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "C", "type_id": 0}}], "pair": [],
     "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0, "x": 1}}], "pair": [],
     "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{**SEQ_A, "SpecialToken": {"id": "x", "type_id": 0}}],
     "pair": [], "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 2**32}}], "pair": [],
     "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 2**32 - 1}}], "pair": [],
     "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 1.0}}], "pair": [],
     "special_tokens": {}},
    {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[X]", "type_id": 0}}, SEQ_A], "pair": [],
     "special_tokens": {"[X]": {"id": "[Y]", "ids": [1], "tokens": ["x"], "junk": 2}}},
    {"type": "TemplateProcessing", **TPL, "special_tokens": {"[X]": {"id": "[X]", "ids": [1]}}},
    {"type": "TemplateProcessing", **TPL, "special_tokens": {"[X]": {"id": "[X]", "ids": [-1], "tokens": ["x"]}}},
    {"type": "TemplateProcessing", **TPL, "special_tokens": {"[X]": {"ids": [1], "tokens": ["x"]}}},
]


def _reference(config):
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel({"a": 0}, unk_token="a"))
    data = json.loads(tok.to_str())
    data["post_processor"] = config
    try:
        return json.loads(tokenizers.Tokenizer.from_str(json.dumps(data)).to_str())["post_processor"]
    except Exception:
        return None


@pytest.mark.parametrize("config", CONFIGS, ids=[json.dumps(c)[:80] for c in CONFIGS])
def test_parses_as_hf(config):
    expected = _reference(config)
    if expected is None:
        with pytest.raises(FormatError) as info:
            PP.from_config(config, "post_processor")
        assert info.value.key and info.value.key.startswith("post_processor")
        return
    ours = PP.from_config(config, "post_processor")
    assert type(ours).__name__ == expected["type"]


@pytest.mark.parametrize("config", [{**SEP_CLS}, {"type": "Nonsense", **SEP_CLS}])
def test_type_is_required(config):
    # HF would read both as BertProcessing; every real file names its type
    with pytest.raises(FormatError) as info:
        PP.from_config(config, "post_processor")
    assert info.value.key == "post_processor.type"


def test_error_names_the_declared_variant_key():
    config = {"type": "Sequence", "processors": [{"type": "ByteLevel", **FLAGS},
                                                 {"type": "BertProcessing", "sep": ["[SEP]", -1], **{"cls": ["c", 1]}}]}
    with pytest.raises(FormatError) as info:
        PP.from_config(config, "post_processor")
    assert info.value.key == "post_processor.processors[1].sep[1]"


def test_mismatched_special_token_lengths_rejected():
    # HF loads this and builds inconsistent encodings; polytok refuses it (SpecialToken::new's rule)
    config = {"type": "TemplateProcessing", **TPL,
              "special_tokens": {"[X]": {"id": "[X]", "ids": [1, 2], "tokens": ["x"]}}}
    with pytest.raises(FormatError) as info:
        PP.from_config(config, "post_processor")
    assert info.value.key == "post_processor.special_tokens.[X]"
