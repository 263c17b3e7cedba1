"""Model folders for the doctor tests: real fixture files copied into a temporary folder,
where a test plants one defect."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from fixtures import fixture_path

HF_FILES = ("tokenizer.json", "tokenizer_config.json")
CONVERSATION = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there."},
                {"role": "user", "content": "How are you?"}, {"role": "assistant", "content": "Fine, thanks."},
                {"role": "user", "content": "Good."}]


def model_folder(dest: Path, *sources: tuple[str, str] | tuple[str, str, str]) -> Path:
    """`dest` holding each (fixture, file[, name in the folder]) of `sources`, decompressed."""
    dest.mkdir(parents=True, exist_ok=True)
    for source in sources:
        name, file = source[0], source[1]
        shutil.copyfile(fixture_path(name, file), dest / (source[2] if len(source) == 3 else file))
    return dest


def hf_folder(dest: Path, name: str) -> Path:
    return model_folder(dest, *((name, f) for f in HF_FILES))


def edit_json(path: Path, change: Any) -> None:
    """Rewrite the JSON file `path` with `change(data)` applied in place."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def codes(findings: list[Any]) -> list[str]:
    return [f.code for f in findings]
