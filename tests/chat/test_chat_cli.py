"""``polytok chat MODEL conversation.json``, run as a user runs it, against transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import fixture_path

transformers = pytest.importorskip("transformers")
SRC = str(Path(__file__).resolve().parents[2] / "src")
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Quote `<|im_end|>` please"}]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "polytok", *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def qwen3():
    fixture_path("qwen3", "tokenizer_config.json")
    folder = fixture_path("qwen3", "tokenizer.json").parent
    return folder, transformers.AutoTokenizer.from_pretrained(str(folder))


def test_chat_text_ids_and_generation_prompt(tmp_path, qwen3):
    folder, ref = qwen3
    conv = tmp_path / "conversation.json"
    conv.write_text(json.dumps(MESSAGES), encoding="utf-8")
    out = run("chat", str(folder), str(conv))
    assert out.returncode == 0, out.stderr
    assert out.stdout == ref.apply_chat_template(MESSAGES, tokenize=False)
    out = run("chat", str(folder), str(conv), "--tokenize", "--generation-prompt")
    expected = ref.apply_chat_template(MESSAGES, add_generation_prompt=True, return_dict=False,
                                       sanitize_control_tokens=True)
    assert [int(x) for x in out.stdout.split()] == expected


def test_chat_object_with_tools_from_stdin(qwen3):
    folder, ref = qwen3
    tools = [{"type": "function", "function": {"name": "now", "description": "The time.",
                                               "parameters": {"type": "object", "properties": {}}}}]
    out = run("chat", str(folder), "-", stdin=json.dumps({"messages": MESSAGES, "tools": tools}))
    assert out.returncode == 0, out.stderr
    assert out.stdout == ref.apply_chat_template(MESSAGES, tools=tools, tokenize=False)


def test_chat_errors_are_one_line(tmp_path, qwen3):
    folder, _ = qwen3
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user",\n "content": }]', encoding="utf-8")
    out = run("chat", str(folder), str(bad))
    assert out.returncode == 1 and "line 2: not JSON" in out.stderr and "Traceback" not in out.stderr
    out = run("chat", str(folder), "-", "--template", "nope", stdin="[]")
    assert out.returncode == 1 and "unknown template name 'nope'" in out.stderr
