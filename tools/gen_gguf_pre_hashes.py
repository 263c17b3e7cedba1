"""Extract llama.cpp's pre-tokenizer hash table into src/polytok/data/gguf_pre_hashes.json.

Source: llama-cpp-python 0.3.36 sdist, vendor/llama.cpp/conversion/base.py,
``TextModel.get_vocab_base_pre`` (the block between its "Start/End
get_vocab_base_pre" markers, generated upstream by convert_hf_to_gguf_update.py):
the check text ``chktxt`` and every ``if chkhsh == "<sha256>": res = "<name>"``
row, in file order (a hash listed twice keeps its last name, as the chain of
``if`` statements does). Run:

    python tools/gen_gguf_pre_hashes.py [PATH/TO/conversion/base.py]
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = Path("/tmp/ref/llama_cpp_python-0.3.36/vendor/llama.cpp/conversion/base.py")


def main(src: Path) -> None:
    text = src.read_text(encoding="utf-8")
    body = text[text.index("def get_vocab_base_pre"):text.index("# Marker: End get_vocab_base_pre")]
    chktxt = ast.literal_eval(re.search(r"chktxt = (.*)\n", body).group(1))  # type: ignore[union-attr]
    rows = re.findall(r'if chkhsh == "([0-9a-f]{64})":.*?res = "([^"]+)"', body, re.S)
    out = {"source": "llama-cpp-python 0.3.36 vendor/llama.cpp/conversion/base.py get_vocab_base_pre",
           "chktxt": chktxt, "hashes": [list(r) for r in rows]}
    path = ROOT / "src" / "polytok" / "data" / "gguf_pre_hashes.json"
    path.write_text(json.dumps(out, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"{len(rows)} rows -> {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
