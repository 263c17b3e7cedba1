"""pytest setup shared by every polytok test.

Puts tests/ on sys.path so a test module in any subfolder can `import fixtures`
(the real-file fetcher, tests/fixtures.py) under any pytest import mode, and says
in the run's header where real files come from.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

import fixtures  # noqa: E402  (needs the sys.path line above)


def pytest_report_header() -> list[str]:
    shared = fixtures.SHARED_FIXTURES
    state = "present" if shared.is_dir() else "absent: GitHub/derived fixtures will be skipped"
    from polytok import kernels

    path = kernels.status()
    return [f"polytok fixture cache: {fixtures.cache_root()}", f"shared fixtures: {shared} ({state})",
            f"polytok path: {path['path']} ({path['reason']}; built: {', '.join(path['kernels']) or 'none'})"]
