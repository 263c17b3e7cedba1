"""Small tekken.json files made here: the rules of Tekkenizer.from_file / __init__ (compared with
mistral-common 1.13.1 live where it accepts the file) and polytok.FormatError where it does not."""

from __future__ import annotations

import base64
import gzip
import json

import pytest
from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
from mistral_common.tokens.tokenizers.tekken import Tekkenizer

import polytok
from polytok.formats.tekken import read_tekken

PATTERN = r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
MERGES = [b"ab", b"abc", b" a", b" ab", b"\xc3\xa9", b"\xc3", b"bc"]


def _file(tmp_path, *, version="v13", n_special=6, extra=3, specials=("<unk>", "<s>", "</s>", "[INST]"),
          vocab=None, name="tekken.json", **config):
    if vocab is None:
        tokens = [bytes([b]) for b in range(256)] + MERGES
        vocab = [{"rank": i, "token_bytes": base64.b64encode(t).decode(), "token_str": None}
                 for i, t in enumerate(tokens)]
    data = {"config": {"pattern": PATTERN, "default_vocab_size": 256 + extra + n_special,
                       "default_num_special_tokens": n_special, "version": version, **config},
            "vocab": vocab}
    if specials is not None:
        data["special_tokens"] = [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(specials)]
    path = tmp_path / name
    raw = json.dumps(data).encode()
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    return path


@pytest.mark.parametrize("version,specials", [("v13", ("<unk>", "<s>", "</s>", "[INST]")), ("v7", None),
                                              ("v3", None)])
def test_small_file_equals_tekkenizer(tmp_path, version, specials):
    n_special = 6 if specials else 23
    path = _file(tmp_path, version=version, specials=specials, n_special=n_special)
    tok, ref = polytok.load(path), Tekkenizer.from_file(path)
    assert len(tok) == ref.n_words
    for text in ["abc ab abcé bc", "[INST] é<SPECIAL_5>", "  \n\nabc"]:
        for add in (True, False):
            assert tok.encode(text, add_special=add) == ref.encode(text, bos=add, eos=False)
        ids = ref.encode(text, bos=True, eos=True) + list(range(n_special))
        assert tok.decode(ids) == ref.decode(ids, SpecialTokenPolicy.KEEP)
        assert tok.decode(ids, skip_special=True) == ref.decode(ids, SpecialTokenPolicy.IGNORE)
    # truncation: only the first default_vocab_size - n_special entries are the vocabulary
    assert tok.encode("abc", add_special=False) == ref.encode("abc", bos=False, eos=False)
    filler = f"<SPECIAL_{n_special - 1}>"
    assert tok.token_to_id(filler) == ref.get_special_token(filler)


def test_gzipped_file(tmp_path):
    tok = polytok.load(_file(tmp_path, name="tekken.json.gz"))
    assert tok.facts.format == "tekken" and len(tok) == 256 + 3 + 6


@pytest.mark.parametrize("change,key", [
    (lambda d: d["config"].pop("pattern"), "config.pattern"),
    (lambda d: d["config"].update(default_vocab_size="300"), "config.default_vocab_size"),
    (lambda d: d["config"].update(version="seven"), "config.version"),
    (lambda d: d["vocab"][300].update(rank=7), "vocab[300].rank"),
    (lambda d: d["vocab"][257].update(token_bytes="!!"), "vocab[257].token_bytes"),
    (lambda d: d["vocab"][65].update(token_bytes="Qg=="), "vocab[65].token_bytes"),
    (lambda d: d["vocab"][258].pop("token_bytes"), "vocab[258].token_bytes"),
    (lambda d: d["config"].update(default_vocab_size=10_000), "vocab"),
    (lambda d: d.pop("special_tokens"), "special_tokens"),
    (lambda d: d["special_tokens"].append(dict(d["special_tokens"][0], rank=4)), "special_tokens"),
    (lambda d: d["special_tokens"][2].update(rank=5), "special_tokens[2].rank"),
])
def test_bad_files_name_the_key(tmp_path, change, key):
    path = _file(tmp_path, extra=50)
    data = json.loads(path.read_text())
    data["vocab"] += [{"rank": 263 + i, "token_bytes": base64.b64encode(b"x%d" % i).decode(), "token_str": None}
                      for i in range(60)]
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(polytok.FormatError) as info:
        read_tekken(path)
    assert info.value.key == key


def test_no_options_and_bad_json(tmp_path):
    with pytest.raises(polytok.FormatError, match="no options"):
        polytok.load(_file(tmp_path), pattern="x")
    bad = tmp_path / "tekken.json"
    bad.write_text("{not json")
    with pytest.raises(polytok.FormatError, match="invalid JSON"):
        polytok.load(bad)
