"""Every subcommand's ``--help``, as a user reads it: a description, examples, no module notes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parent.parent / "src")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="100")
    return subprocess.run([sys.executable, "-m", "polytok", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def commands() -> list[str]:
    out = run("--help")
    assert out.returncode == 0, out.stderr
    listing = out.stdout.split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^    (\S+)", listing, re.M)


COMMANDS = ["encode", "decode", "count", "inspect", "chat", "compare", "explain", "convert", "serve",
            "tokenize-corpus", "verify-corpus", "export-vocab", "doctor", "train"]

# what module notes look like: a dotted polytok name, reST/markdown backticks, words meant for developers
LEAKS = re.compile(r"polytok\.\w|`|module notes|hooked into|registered in|__\w+__")


def test_the_command_list_is_the_one_checked():
    assert sorted(commands()) == sorted(COMMANDS)


def check_help(text: str) -> None:
    assert not LEAKS.search(text), LEAKS.search(text)
    head, sep, tail = text.partition("\nexamples:\n")
    assert sep, "no examples section"
    assert re.search(r"^  polytok \S", tail, re.M), tail
    description = head.split("\n\n")[1]
    assert description.strip() and not description.startswith(("positional", "options")), head


@pytest.mark.parametrize("command", COMMANDS)
def test_each_subcommand_help_has_a_description_and_an_example(command: str):
    out = run(command, "--help")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    check_help(out.stdout)
    for line in out.stdout.split("\nexamples:\n")[1].splitlines():
        if line.strip():
            assert line.startswith("  ") and f"polytok {command}" in line, line


def test_the_top_level_help_states_the_model_rule():
    out = run("--help")
    check_help(out.stdout)
    assert "MODEL" in out.stdout and "gpt2" in out.stdout


@pytest.mark.parametrize("command", ["encode", "decode", "explain", "inspect"])
def test_model_is_optional_where_the_help_says(command: str):
    out = run(command, "--help")
    assert "[MODEL]" in out.stdout and "It may be left out" in " ".join(out.stdout.split())


@pytest.mark.parametrize("command", ["count", "chat", "tokenize-corpus", "export-vocab"])
def test_model_is_required_where_files_follow(command: str):
    out = run(command, "--help")
    usage = out.stdout.split("\n\n", 1)[0]
    assert " MODEL" in usage and "[MODEL]" not in usage, usage
