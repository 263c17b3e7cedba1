"""`tok(texts)` where transformers 5.24.0 rebuilds the pipeline from the tokenizer class, live.

Every fixture folder with a ``tokenizer_config.json``, and copies of fixture folders with
the config changed (``legacy``, ``add_prefix_space``, ``do_lower_case``, ``keep_accents``,
``tokenizer_class`` swapped to another class that rebuilds), against
``AutoTokenizer.from_pretrained(folder)(texts)`` on the edge texts and bench slices, with
and without special tokens. Expected ids come from transformers only.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from fixtures import ALL_HF_JSON, SHARED_FIXTURES, bench_slice, edge_texts, fixture_path
from sweeps import sweep

import polytok
from polytok.tokenizer.transformers_classes import CLASSES, as_transformers, rebuild_for

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

FILES = {f.name: f.files for f in ALL_HF_JSON}
CONFIGURED = [f.name for f in ALL_HF_JSON if "tokenizer_config.json" in f.files]

# (fixture, config changes, what is compared): "all" texts with and without special tokens;
# "plain" leaves out texts with markers ("<", "["), "bare" also compares only without special
# tokens: where a class's __init__ names default special tokens the files lack, or sets a
# post-processor from them (polytok follows neither; docs/transformers.md)
VARIANTS: dict[str, tuple[str, dict[str, Any], str]] = {
    "llama2-legacy-false": ("llama2", {"legacy": False}, "all"),
    "llama2-legacy-absent": ("llama2", {"legacy": None}, "all"),
    "llama2-no-prefix-space": ("llama2", {"add_prefix_space": False}, "all"),
    "llama2-legacy-false-prefix-space": ("llama2", {"legacy": False, "add_prefix_space": True}, "all"),
    "llama2-eos-no-bos": ("llama2", {"add_bos_token": False, "add_eos_token": True}, "all"),  # the file's kept
    "gemma3-no-bos": ("gemma3", {"add_bos_token": False}, "all"),
    "phi-3-legacy-true": ("phi-3-mini", {"legacy": True}, "all"),
    "phi-3-no-prefix-space": ("phi-3-mini", {"add_prefix_space": False}, "all"),
    "llama2-as-code-llama": ("llama2", {"tokenizer_class": "CodeLlamaTokenizer"}, "all"),
    "llama2-as-gemma": ("llama2", {"tokenizer_class": "GemmaTokenizer"}, "plain"),
    "gemma3-as-llama": ("gemma3", {"tokenizer_class": "LlamaTokenizer"}, "all"),
    "bert-as-bert": ("bert-base-uncased", {"tokenizer_class": "BertTokenizer"}, "all"),
    "bert-cased-rules": ("bert-base-uncased", {"tokenizer_class": "BertTokenizer", "do_lower_case": False}, "all"),
    "roberta-as-roberta": ("roberta-base", {"tokenizer_class": "RobertaTokenizer"}, "all"),
    "roberta-as-bart-prefix": ("roberta-base", {"tokenizer_class": "BartTokenizer", "add_prefix_space": True}, "all"),
    "llama3-as-gpt2": ("llama3", {"tokenizer_class": "GPT2Tokenizer"}, "plain"),  # ignore_merges: a new model
    "llama3-as-qwen2": ("llama3", {"tokenizer_class": "Qwen2Tokenizer"}, "plain"),
    "qwen3-as-gpt2": ("qwen3", {"tokenizer_class": "GPT2Tokenizer"}, "all"),
    "qwen3-prefix-space": ("qwen3", {"add_prefix_space": True}, "all"),
    "gpt2-as-qwen2": ("gpt2", {"tokenizer_class": "Qwen2Tokenizer"}, "all"),
    "falcon-as-gpt-neox": ("falcon", {"tokenizer_class": "GPTNeoXTokenizer"}, "all"),
    "falcon-as-cohere": ("falcon", {"tokenizer_class": "CohereTokenizer"}, "all"),
    "albert-as-xlm-roberta": ("albert-base-v2-tf5", {"tokenizer_class": "XLMRobertaTokenizer"}, "all"),
    "albert-as-t5": ("albert-base-v2-tf5", {"tokenizer_class": "T5Tokenizer"}, "plain"),
    "albert-as-camembert": ("albert-base-v2-tf5", {"tokenizer_class": "CamembertTokenizer"}, "all"),
    "albert-as-xlnet": ("albert-base-v2-tf5", {"tokenizer_class": "XLNetTokenizer"}, "all"),
    "albert-as-deberta-v2": ("albert-base-v2-tf5", {"tokenizer_class": "DebertaV2Tokenizer"}, "all"),
    "albert-as-big-bird": ("albert-base-v2-tf5", {"tokenizer_class": "BigBirdTokenizer"}, "all"),
    "albert-as-pegasus": ("albert-base-v2-tf5", {"tokenizer_class": "PegasusTokenizer"}, "all"),
    "albert-as-mbart": ("albert-base-v2-tf5", {"tokenizer_class": "MBartTokenizer"}, "bare"),
    "clip-as-clip": ("clip", {"tokenizer_class": "CLIPTokenizer"}, "all"),
    "whisper-as-whisper": ("whisper-tiny", {"tokenizer_class": "WhisperTokenizer"}, "all"),
    "bert-as-mpnet": ("bert-base-uncased", {"tokenizer_class": "MPNetTokenizer"}, "bare"),
    "bert-as-funnel": ("bert-base-uncased", {"tokenizer_class": "FunnelTokenizer", "unk_token": "[UNK]"}, "bare"),
    "bert-as-funnel-named": ("bert-base-uncased", {"tokenizer_class": "FunnelTokenizer", "unk_token": "[UNK]",
                                                   "cls_token": "[CLS]", "sep_token": "[SEP]"}, "plain"),
    "qwen3-as-qwen3-5": ("qwen3", {"tokenizer_class": "Qwen3_5Tokenizer"}, "all"),
    "llama2-as-nllb": ("llama2", {"tokenizer_class": "NllbTokenizer"}, "bare"),
    "roberta-as-blenderbot": ("roberta-base", {"tokenizer_class": "BlenderbotTokenizer"}, "all"),
    "gpt2-as-codegen": ("gpt2", {"tokenizer_class": "CodeGenTokenizer"}, "all"),
    "albert-as-barthez": ("albert-base-v2-tf5", {"tokenizer_class": "BarthezTokenizer"}, "all"),
    "albert-as-rembert": ("albert-base-v2-tf5", {"tokenizer_class": "RemBertTokenizer"}, "all"),
    "albert-as-xglm": ("albert-base-v2-tf5", {"tokenizer_class": "XGLMTokenizer"}, "all"),
    "albert-accents-cased": ("albert-base-v2-tf5", {"keep_accents": True, "do_lower_case": False}, "all"),
    "albert-no-prefix-space": ("albert-base-v2-tf5", {"add_prefix_space": False}, "all"),
}


def _folder(root: Path, name: str, changes: dict[str, Any] | None = None) -> Path:
    """A copy of fixture `name`'s folder files (tokenizer.json uncompressed), its config changed as asked
    (a None value removes the key)."""
    folder = root / name
    folder.mkdir(parents=True)
    for file in FILES[name]:
        shutil.copy(fixture_path(name, file), folder / file)
    if changes is not None:
        path = folder / "tokenizer_config.json"
        config = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        config.update(changes)
        config = {key: value for key, value in config.items() if value is not None}
        path.write_text(json.dumps(config), encoding="utf-8")
    return folder


def _reference(folder: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return transformers.AutoTokenizer.from_pretrained(str(folder))
        except Exception as exc:  # remote code, or a folder transformers cannot read
            pytest.skip(f"transformers cannot load {folder.name}: {type(exc).__name__}")


def _texts(markers: bool = True) -> list[str]:
    texts = list(edge_texts())
    if (SHARED_FIXTURES / "texts").is_dir():
        for corpus in ("en", "code", "multi"):
            text = bench_slice(corpus, 6000)
            texts += [text, *text.splitlines()[:40]]
    return texts if markers else [t for t in texts if "<" not in t and "[" not in t]


def _around_specials(tok: Any) -> list[str]:
    """Texts with the folder's own named special tokens inside: each piece between them is
    pre-tokenized on its own, where Metaspace's ``first`` and ``always`` part."""
    out = []
    for named in tok.facts.named_tokens.values():
        s = named.text
        out += [f"x{s}y", f"Use {s} to stop.", f"{s}starts", f"{s} starts", f"a {s}  b {s}", f" {s}"]
    return out


def _check(tok: Any, ref: Any, texts: list[str], add_special: bool) -> None:
    expected = ref(texts, add_special_tokens=add_special)["input_ids"]
    got = tok(texts, add_special=add_special)["input_ids"]
    bad = [(t, e, g) for t, e, g in zip(texts, expected, got) if e != g]
    if bad:
        text, want, have = bad[0]
        at = next((i for i, (a, b) in enumerate(zip(want, have)) if a != b), min(len(want), len(have)))
        pytest.fail(f"{len(bad)} of {len(texts)} differ; first {text!r:.80}, from position {at}:\n"
                    f"  transformers {want[at:at + 8]} {ref.convert_ids_to_tokens(want[at:at + 8])}\n"
                    f"  polytok      {have[at:at + 8]} {[tok.id_to_token(i) for i in have[at:at + 8]]}")


# the large vocabularies (gemma3, gpt4o, albert, mistral-v3) under -m slow; their classes keep cases below
QUICK = [n for n in CONFIGURED if n not in ("gemma3", "gpt4o", "albert-base-v2-tf5", "mistral-v3-hf-converted")]


@pytest.mark.parametrize("name", sweep(CONFIGURED, QUICK))
@pytest.mark.parametrize("add_special", [True, False])
def test_fixture_folders_equal_transformers(tmp_path, name, add_special):
    folder = _folder(tmp_path, name)
    ref = _reference(folder)
    tok = polytok.load(folder)
    _check(tok, ref, _texts() + _around_specials(tok), add_special)


@pytest.mark.parametrize("key", sweep(VARIANTS, [k for k in VARIANTS if k not in (
    "gemma3-as-llama", "llama2-no-prefix-space", "qwen3-as-gpt2", "albert-as-pegasus", "albert-as-rembert",
    "phi-3-legacy-true")]))
def test_changed_configs_equal_transformers(tmp_path, key):
    name, changes, compared = VARIANTS[key]
    folder = _folder(tmp_path, name, changes)
    ref = _reference(folder)
    tok = polytok.load(folder)
    texts = _texts() + _around_specials(tok) if compared == "all" else _texts(markers=False)
    for add_special in (False, True) if compared != "bare" else (False,):
        _check(tok, ref, texts, add_special)


def test_llama2_single_space_is_transformers_not_the_file(tmp_path):
    """The file's Prepend normalizer gives ``▁▁`` (259) for " "; LlamaTokenizer's
    Metaspace("always") leaves a text that starts with ▁ alone: ``▁`` (28705)."""
    folder = _folder(tmp_path, "llama2")
    tok = polytok.load(folder)
    assert tok(" ")["input_ids"] == [1, 28705]
    assert tok.encode(" ") == tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).encode(" ").ids


def test_encode_stays_hf_tokenizers(tmp_path):
    folder = _folder(tmp_path, "llama2")
    tok = polytok.load(folder)
    reference = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    texts = edge_texts()
    tok(texts)
    assert tok.encode_batch(texts) == [e.ids for e in reference.encode_batch(texts)]


def test_classes_that_keep_the_file_keep_the_tokenizer(tmp_path):
    tok = polytok.load(_folder(tmp_path, "claude"))  # ClaudeTokenizer: TokenizersBackend
    assert rebuild_for(tok) is None
    assert as_transformers(tok) is tok


def test_the_rebuild_is_built_once_and_shares_the_model(tmp_path):
    tok = polytok.load(_folder(tmp_path, "llama2"))
    built = as_transformers(tok)
    assert built is not tok and as_transformers(tok) is built
    assert built.model is tok.model
    assert rebuild_for(tok) is not None and rebuild_for(tok)[0] == "LlamaTokenizer"  # type: ignore[index]


def test_a_model_type_the_class_does_not_build_keeps_the_file(tmp_path):
    """transformers would build a BPE without merges from a Unigram vocabulary: not reproduced."""
    tok = polytok.load(_folder(tmp_path, "albert-base-v2-tf5", {"tokenizer_class": "LlamaTokenizer"}))
    assert as_transformers(tok) is tok


def test_every_class_name_is_a_transformers_class_that_rebuilds():
    from transformers.models.auto.tokenization_auto import tokenizer_class_from_name

    for name in CLASSES:
        cls = tokenizer_class_from_name(name)
        assert cls is not None, name
        assert "__init__" in cls.__dict__, name


CHAT = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


@pytest.mark.parametrize("content", [" ", "  two", "Hi</s> there", "\n x"])
def test_chat_tokenize_uses_the_class_pipeline(tmp_path, content):
    folder = _folder(tmp_path, "llama2")
    tok, ref = polytok.load(folder), _reference(folder)
    messages = [{"role": "user", "content": content}]
    expected = ref.apply_chat_template(messages, chat_template=CHAT, tokenize=True)
    expected = expected["input_ids"] if not isinstance(expected, list) else expected
    for special in ("parse", "text"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sanitized = ref.apply_chat_template(messages, chat_template=CHAT, tokenize=True,
                                                sanitize_control_tokens=special == "text")
        sanitized = sanitized["input_ids"] if not isinstance(sanitized, list) else sanitized
        assert tok.apply_chat_template(messages, template=CHAT, tokenize=True, content_special=special) == sanitized
        got = tok.apply_chat_template(messages, template=CHAT, tokenize=True, return_dict=True,
                                      content_special=special)
        assert got["input_ids"] == sanitized
    assert tok.apply_chat_template(messages, template=CHAT, tokenize=True, content_special="parse") == expected


def test_compare_names_the_class_rebuild(tmp_path):
    """transformers (LlamaTokenizer) against HF tokenizers on the same llama2 folder: the
    divergences on runs of spaces are named; a text where the two agree is not reported."""
    from polytok.parity import compare, reference_side

    folder = _folder(tmp_path, "llama2")
    tok = polytok.load(folder)
    a = reference_side("hf", str(folder), "A", tok)  # a folder: transformers' AutoTokenizer
    b = reference_side("hf", str(folder / "tokenizer.json"), "B", tok)
    assert (a.engine, b.engine) == ("transformers", "hf")
    report = compare(a, b, [" ", "  ", "plain text"], add_special=True)
    found = {r.text: r.reasons for r in report.diverging}
    assert set(found) == {" ", "  "}
    assert all("transformers-class-rebuild" in reasons for reasons in found.values()), found


def test_tokens_added_after_the_first_call_are_used(tmp_path):
    folder = _folder(tmp_path, "llama2")
    tok, ref = polytok.load(folder), _reference(folder)
    tok(["warm"])
    tok.add_tokens([polytok.AddedToken("<|new|>", special=True, normalized=False)])
    ref.add_tokens([transformers.AddedToken("<|new|>", special=True, normalized=False)])
    texts = ["a<|new|>b", " <|new|> ", "<|new|>"]
    assert tok(texts)["input_ids"] == ref(texts)["input_ids"]


@pytest.mark.parametrize("name", sweep(CONFIGURED, QUICK))
def test_the_class_pipeline_decodes_as_transformers(tmp_path, name):
    """`as_transformers()` carries the class's decoder too (``tok.decode`` stays HF tokenizers')."""
    folder = _folder(tmp_path, name)
    ref = _reference(folder)
    built = polytok.load(folder).as_transformers()
    texts = list(edge_texts())
    for ids in ref(texts)["input_ids"]:
        assert built.decode(ids) == ref.decode(ids), ids
