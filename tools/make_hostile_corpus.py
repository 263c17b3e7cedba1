"""Write the hostile-file corpus (tests/robustness/hostile.py) into a folder, one sub-folder per case.

Each case folder holds the bad file(s) and a ``where.json`` with the error location the
test expects (key, byte offset, line) and the load options.

    PYTHONPATH=src:tests python tools/make_hostile_corpus.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from robustness.hostile import CASES


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = Path(argv[0])
    for case in CASES:
        folder = out / case.id
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in case.files.items():
            (folder / name).write_bytes(data)
        where = {"entry": case.entry, "error_file": case.error_file or case.entry, "options": case.options,
                 **case.where}
        (folder / "where.json").write_text(json.dumps(where, indent=1) + "\n", encoding="utf-8")
    print(f"{len(CASES)} hostile cases written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
