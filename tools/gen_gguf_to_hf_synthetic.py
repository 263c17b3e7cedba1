"""llama.cpp's ids and decoded bytes on the small GGUFs the GGUF -> HF folder tests build.

tests/formats/test_gguf_to_hf_top_ties.py builds SentencePiece vocabularies whose best
score is tied (``SHAPES``), tests/formats/test_gguf_to_hf_renames.py a byte-level one with
entries outside the byte alphabet (``byte_level_gguf``). This script builds the same files
with those functions (gguf's writer gives the same bytes again: the tests check the sha256)
and records, with llama-cpp-python 0.3.36, the ids of every text the tests compare
(add_special off, markers as text) and the decoded bytes of the id lists they decode.

Run: ``python tools/gen_gguf_to_hf_synthetic.py`` (needs llama-cpp-python and gguf).
Writes ``tests/golden/gguf/to_hf_synthetic/<name>.jsonl.gz``: a header (engine,
version, sha256 of the GGUF), then one row per text ``{"text", "ids"}`` and per decoded
list ``{"decode", "bytes"}`` (base64).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import itertools
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]
OUT = ROOT / "tests" / "golden" / "gguf" / "to_hf_synthetic"


def texts_of(alphabet: str, longest: int) -> list[str]:
    """Every text of `alphabet`'s characters up to `longest` characters (the top-ties tests' texts)."""
    return ["".join(chars) for n in range(1, longest + 1) for chars in itertools.product(alphabet, repeat=n)]


def write(name: str, path: Path, texts: list[str], decodes: list[list[int]]) -> None:
    import llama_cpp

    from polytok.parity.engines import LlamaCppSide

    side = LlamaCppSide(str(path), name)
    rows: list[dict] = [{"engine": "llama-cpp-python", "version": llama_cpp.__version__,
                         "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}]
    rows += [{"text": text, "ids": side.tokenize(text, False, False)} for text in texts]
    rows += [{"decode": ids, "bytes": base64.b64encode(side.decode_bytes(ids, False, False)).decode()}
             for ids in decodes]
    side.close()
    OUT.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    (OUT / f"{name}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))
    print(f"{name}: {len(texts)} texts, {len(decodes)} decodes", file=sys.stderr)


def main() -> int:
    from formats.test_gguf_to_hf_renames import RENAMED_TEXTS, byte_level_gguf, decoded_lists
    from formats.test_gguf_to_hf_top_ties import LONGEST, SHAPES, spm_gguf

    work = Path(tempfile.mkdtemp())
    for shape, (pieces, alphabet) in SHAPES.items():
        spm_gguf(work / f"{shape}.gguf", pieces)
        write(f"top-ties-{shape}", work / f"{shape}.gguf", texts_of(alphabet, LONGEST), [])
    for pre in ("gpt-2", "llama-bpe"):
        tokens = byte_level_gguf(work / f"{pre}.gguf", pre)
        write(f"renames-{pre}", work / f"{pre}.gguf", RENAMED_TEXTS, decoded_lists(tokens))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
