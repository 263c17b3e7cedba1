"""``polytok doctor``: exit status, the text and JSON reports, errors, the help."""

from __future__ import annotations

import json

from test_cli_help import check_help, run

from doctor.folders import hf_folder, model_folder
from polytok.cli.main import main


def test_a_clean_folder_exits_0(tmp_path, capsys):
    folder = model_folder(tmp_path / "f", ("spm-mistral-v3", "tokenizer.model"))
    assert main(["doctor", str(folder)]) == 0
    assert capsys.readouterr().out == f"{folder}: nothing found\n"


def test_findings_exit_1_and_the_json_keys_are_stable(tmp_path, capsys):
    folder = hf_folder(tmp_path / "f", "llama2")
    assert main(["doctor", str(folder), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["folder"] == str(folder)
    assert [sorted(f) for f in report["findings"]] == [["code", "details", "files", "message", "severity"]]
    finding = report["findings"][0]
    assert (finding["code"], finding["severity"]) == ("forgeable-markers", "warning")
    assert finding["files"][0] == str(folder / "tokenizer.json")
    assert main(["doctor", str(folder)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{folder}: 1 finding" and lines[1].startswith("warning forgeable-markers: 3 special-token")


def test_a_file_or_an_empty_folder_is_an_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["doctor", str(tmp_path / "empty")]) == 1
    assert "no tokenizer file found in this folder" in capsys.readouterr().err
    (tmp_path / "x.txt").write_text("x", encoding="utf-8")
    assert main(["doctor", str(tmp_path / "x.txt")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("polytok: error: ") and "not a folder" in err and "x.txt" in err


def test_the_help_has_a_description_and_examples():
    out = run("doctor", "--help")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    check_help(out.stdout)
