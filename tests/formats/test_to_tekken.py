"""write_tekken: mistral-common 1.13.1's Tekkenizer on the written tekken.json against the source, live.

The source is a tokenizer.json in tekken's id layout (special tokens first, then the 256 bytes in
byte order), as Mistral's own tokenizer.json files are: transformers 5.24's ``TikTokenConverter``
made from the ranks of the tekken-240718 fixture, its ids shifted past 1000 special tokens. Expected
ids: HF tokenizers 0.23.3 on that file (``add_special_tokens=False``, special-token text read as
text, as ``Tekkenizer.encode`` reads it). The default run takes the first 3000 ranks; the slow
test the whole vocabulary.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import tokenizers
from fixtures import bench_slice, edge_texts, fixture_path
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
from transformers.convert_slow_tokenizer import TikTokenConverter

import polytok
from polytok.convert.outcome import ConversionRefused
from polytok.convert.to_tekken import write_tekken
from polytok.formats.tekken import DEPRECATED_SPECIAL_TOKENS

NUM_SPECIAL = 1000


def tekken_layout_source(tmp_path: Path, n_ranks: int | None) -> Path:
    """A tokenizer.json of the tekken fixture's first `n_ranks` ranks at ids ``NUM_SPECIAL + rank``."""
    tekken = json.loads(polytok.formats.compressed.read_bytes(fixture_path("tekken-240718", "tekken.json")))
    vocab = tekken["vocab"][:n_ranks]
    ranks_file = tmp_path / "ranks.tiktoken"
    ranks_file.write_text("".join(f"{entry['token_bytes']} {entry['rank']}\n" for entry in vocab), encoding="ascii")
    hf = TikTokenConverter(vocab_file=str(ranks_file), pattern=tekken["config"]["pattern"]).converted()
    data = json.loads(hf.to_str())
    data["model"]["vocab"] = {piece: id_ + NUM_SPECIAL for piece, id_ in data["model"]["vocab"].items()}
    data["added_tokens"] = [{"id": i, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                             "normalized": False, "special": True} for i, text in enumerate(DEPRECATED_SPECIAL_TOKENS)]
    source = tmp_path / "tokenizer.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    return source


def check(tmp_path: Path, n_ranks: int | None, n_chars: int) -> None:
    source = tekken_layout_source(tmp_path, n_ranks)
    written = write_tekken(str(source), str(tmp_path / "tekken.json"))
    hf = tokenizers.Tokenizer.from_file(str(source))
    hf.encode_special_tokens = True
    tekkenizer = Tekkenizer.from_file(written.path)
    tok = polytok.load(written.path)
    texts = edge_texts() + [bench_slice(name, n_chars) for name in ("en", "code", "multi")]
    texts += ["<s>[INST] hi [/INST]</s>", "x<unk>y"]
    for text in texts:
        expected = hf.encode(text, add_special_tokens=False).ids
        assert tekkenizer.encode(text, bos=False, eos=False) == expected, text[:80]
        assert tok.encode(text, add_special=False) == expected, text[:80]
    assert tekkenizer.bos_id == 1 and tekkenizer.num_special_tokens == NUM_SPECIAL


def test_tekkenizer_gives_the_source_ids(tmp_path):
    check(tmp_path, 3000, 2000)


@pytest.mark.slow
def test_tekkenizer_gives_the_source_ids_whole_vocabulary(tmp_path):
    check(tmp_path, None, 20000)


def test_written_file_layout(tmp_path):
    source = tekken_layout_source(tmp_path, 300)
    write_tekken(str(source), str(tmp_path / "tekken.json"))
    data = json.loads((tmp_path / "tekken.json").read_text(encoding="utf-8"))
    assert data["config"]["default_num_special_tokens"] == NUM_SPECIAL
    assert data["config"]["default_vocab_size"] == NUM_SPECIAL + 300 == NUM_SPECIAL + len(data["vocab"])
    assert [entry["token_str"] for entry in data["special_tokens"][:3]] == ["<unk>", "<s>", "</s>"]
    assert data["special_tokens"][999] == {"rank": 999, "token_str": "<SPECIAL_999>", "is_control": True}
    assert [base64.b64decode(entry["token_bytes"]) for entry in data["vocab"][:256]] == [bytes([b]) for b in range(256)]


def test_ids_not_in_tekken_layout_are_refused(tmp_path):
    with pytest.raises(ConversionRefused) as caught:
        write_tekken(str(fixture_path("gpt2", "tokenizer.json")), str(tmp_path / "tekken.json"))
    assert caught.value.reasons == [
        "special token '<|endoftext|>' has id 50256, after the first ordinary token (id 0): tekken gives special "
        "tokens the ids before every rank",
        "id 0 holds b'!', where tekken needs the byte b'\\x00': its first 256 ranks are the bytes in byte order, "
        "and keeping the source's ids would need a remapping"]
    assert not (tmp_path / "tekken.json").exists()


def test_an_added_token_matched_in_any_text_is_refused(tmp_path):
    source = tekken_layout_source(tmp_path, 300)
    data = json.loads(source.read_text(encoding="utf-8"))
    data["added_tokens"][5]["special"] = False
    source.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConversionRefused) as caught:
        write_tekken(str(source), str(tmp_path / "tekken.json"))
    assert caught.value.reasons == ["added token '[AVAILABLE_TOOLS]' (id 5) is matched in any text; Tekkenizer never "
                                    "matches its special tokens"]
