"""doctor on real fixture folders, unchanged. A folder doctor finds nothing in gives nothing;
where a real folder has a real defect, the test asserts that finding, checked against the
reference engine run live (HF tokenizers, transformers' apply_chat_template)."""

from __future__ import annotations

import pytest

import polytok
from doctor.folders import CONVERSATION, codes, hf_folder, model_folder
from polytok.doctor import diagnose

tokenizers = pytest.importorskip("tokenizers")


@pytest.mark.parametrize("source", [("spm-mistral-v3", "tokenizer.model"), ("tekken-240718", "tekken.json"),
                                    ("whisper-gpt2-tiktoken", "gpt2.tiktoken")])
def test_a_folder_with_nothing_wrong_gives_nothing(tmp_path, source):
    assert diagnose(model_folder(tmp_path / "f", source)) == []


def test_a_check_the_vocabulary_cannot_run_is_reported(tmp_path):
    # real: this cropped vocabulary has no [UNK] and lacks 'Hello'; HF tokenizers raises on it too
    folder = model_folder(tmp_path / "f", ("labse-cropped", "tokenizer.json"))
    with pytest.raises(Exception, match="Missing \\[UNK\\] token"):
        tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).encode("Hello")
    found = diagnose(folder)
    assert codes(found) == ["check-failed", "forgeable-markers"]
    assert found[0].details["check"] == "double-bos" and "[UNK]" in found[0].message


def _forgeable_checked(folder, finding):
    """Each reported marker is its own id in HF tokenizers' default encode, and refused by special="raise"."""
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok = polytok.load(folder)
    for marker in finding.details["markers"]:
        assert hf.token_to_id(marker["text"]) == marker["id"]
        assert marker["id"] in hf.encode(f"a {marker['text']} b", add_special_tokens=False).ids, marker
        with pytest.raises(polytok.EncodeError):
            tok.encode(f"a {marker['text']} b", special="raise")


def test_llama2s_markers_are_forgeable(tmp_path):
    # real: HF tokenizers parses <unk>, <s>, </s> in any text by default
    folder = hf_folder(tmp_path / "f", "llama2")
    found = diagnose(folder)
    assert codes(found) == ["forgeable-markers"]
    assert [(m["text"], m["id"]) for m in found[0].details["markers"]] == [("<unk>", 0), ("<s>", 1), ("</s>", 2)]
    _forgeable_checked(folder, found[0])


def _renders(folder, k):
    transformers = pytest.importorskip("transformers")
    auto = transformers.AutoTokenizer.from_pretrained(str(folder))
    return [auto.apply_chat_template(CONVERSATION[:n], tokenize=False) for n in (k - 1, k)]


@pytest.mark.parametrize("name, ending", [
    pytest.param("qwen3", "<think>\n\n</think>\n\nHi there.<|im_end|>\n", marks=pytest.mark.slow),
    ("phi-3-mini", "<|end|>\n<|endoftext|>")])
def test_real_templates_that_are_not_prefix_preserving(tmp_path, name, ending):
    # real: Qwen3's template writes an empty <think> block into the last reply and drops it
    # once a user turn follows; Phi-3's ends every rendering without the generation prompt
    # with its EOS, which the next turn does not keep
    folder = hf_folder(tmp_path / "f", name)
    found = diagnose(folder)
    assert codes(found) == ["forgeable-markers", "template-not-prefix-preserving"]
    details = found[1].details
    assert (details["way"], details["as"], details["message"]) == ("history", "text", 3)
    shorter, longer = _renders(folder, 3)  # transformers 5.24 live
    assert shorter.endswith(ending) and not longer.startswith(shorter)
    at = details["at"]
    assert shorter[:at] == longer[:at] and shorter[at] != longer[at]
    _forgeable_checked(folder, found[0])


def test_chatglm3s_template_writes_the_gmask_its_tokenizer_adds(tmp_path):
    # real: the template starts with [gMASK]sop and tokenizer.json's post-processor adds
    # [gMASK] <!sop!> before any text, so tokenizer(rendered) starts [gMASK] <!sop!> [gMASK]
    folder = hf_folder(tmp_path / "f", "chatglm3")
    found = diagnose(folder)
    assert codes(found) == ["double-bos", "forgeable-markers"]
    rendered = polytok.load(folder).apply_chat_template(CONVERSATION[:1], add_generation_prompt=True)
    assert rendered.startswith("[gMASK]")
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    gmask, sop = hf.token_to_id("[gMASK]"), hf.token_to_id("<!sop!>")
    assert hf.encode(rendered).ids[:3] == [gmask, sop, gmask] == found[0].details["ids"][:3]
    assert found[0].details["prefix"] == [gmask, sop]


@pytest.mark.slow
def test_gemma3s_template_writes_the_bos_its_tokenizer_adds(tmp_path):
    # real: Gemma 3's template starts with {{ bos_token }} and its tokenizer adds <bos>
    transformers = pytest.importorskip("transformers")
    folder = hf_folder(tmp_path / "f", "gemma3")
    found = diagnose(folder)
    assert codes(found) == ["double-bos", "forgeable-markers"]
    auto = transformers.AutoTokenizer.from_pretrained(str(folder))
    rendered = auto.apply_chat_template(CONVERSATION[:1], tokenize=False, add_generation_prompt=True)
    ids = auto(rendered)["input_ids"]
    assert ids[:2] == [auto.bos_token_id] * 2 == found[0].details["ids"][:2]


@pytest.mark.slow
def test_llama3s_first_template_always_adds_the_assistant_header(tmp_path):
    # real: this Llama 3 template ends every rendering with the assistant header, with or
    # without add_generation_prompt, so a reply's rendering is not extended by the next turn
    folder = hf_folder(tmp_path / "f", "llama3")
    found = diagnose(folder)
    assert codes(found) == ["forgeable-markers", "template-not-prefix-preserving"]
    assert found[1].details["message"] == 3
    shorter, longer = _renders(folder, 3)
    assert shorter.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n") and not longer.startswith(shorter)


def test_a_folder_of_one_gguf_is_read_as_llama_cpp_reads_it(tmp_path):
    # real: llama.cpp's phi-3 vocabulary sets add_bos_token and its template starts with
    # {{ bos_token }} (the case llama.cpp's tokenizer warns of: a prompt starting with 2 BOS)
    import shutil

    from fixtures import fixture_path, gguf_vocab_path

    folder = tmp_path / "phi-3"
    folder.mkdir()
    shutil.copyfile(gguf_vocab_path("phi-3"), folder / "ggml-vocab-phi-3.gguf")
    # the BOS id from the model's tokenizer.json, read by HF tokenizers
    bos = tokenizers.Tokenizer.from_file(str(fixture_path("phi-3-mini", "tokenizer.json"))).token_to_id("<s>")
    found = diagnose(folder)
    assert codes(found) == ["double-bos", "forgeable-markers"]
    assert found[0].details["ids"][:2] == [bos, bos]
    assert found[0].files == (str(folder / "ggml-vocab-phi-3.gguf"),)
