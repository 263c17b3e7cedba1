"""count's and tokenize-corpus's progress line (forced with --progress, since stderr is a pipe here),
and tokenize-corpus refusing a Ray address that cannot be reached, in one line and without waiting."""

from __future__ import annotations

import functools
import gzip
import io
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from polytok import parallel
from polytok.cli.progress import Progress, render
from polytok.formats import BUILTIN

tokenizers = pytest.importorskip("tokenizers")
SRC = str(Path(__file__).resolve().parent.parent / "src")
PERCENT = re.compile(r"(?:^|  )(\d+\.\d)%  ")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {}))
    done = subprocess.run([sys.executable, "-m", "polytok", *args], capture_output=True, env=full, timeout=60)
    # decoded here: text mode would turn the meter's carriage returns into line ends
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def meter_lines(stderr: str) -> list[str]:
    """The meter's successive texts (each written after a carriage return), the clearing blank left out."""
    return [part.rstrip() for part in stderr.split("\r") if part.strip()]


def percents(stderr: str) -> list[float]:
    return [float(m.group(1)) for line in meter_lines(stderr) if (m := PERCENT.search(line))]


@pytest.fixture(scope="module")
def ref():
    return tokenizers.Tokenizer.from_str(gzip.decompress(BUILTIN["gpt2"].read_bytes()).decode())


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    out = []
    for n, repeat in enumerate((3000, 1000, 6000)):
        path = tmp_path / f"part{n}.txt"
        path.write_text("The quick brown fox, 42 times.\n" * repeat, encoding="utf-8", newline="")
        out.append(path)
    return out


def test_render_says_percent_rate_and_time_left():
    line = render(50_000_000, 200_000_000, 10.0, "7 tokens")
    assert line.startswith("7 tokens  25.0%  50.0/200.0 MB  5.00 MB/s  ETA 0:30"), line
    assert "ETA 1:00:00" in render(1_000_000, 3_601_000_000, 1.0)
    unknown = render(3_000_000, None, 1.0)
    assert "%" not in unknown and "ETA" not in unknown and "3.0 MB" in unknown
    assert render(300, 200, 1.0).split()[0] == "100.0%"  # an estimated total overrun
    assert render(200, 200, 1.0).endswith("MB/s")  # no time left shown at the end


def test_the_meter_is_off_on_a_pipe_unless_forced():
    out = io.StringIO()
    Progress(10, out=out).update(10)
    assert out.getvalue() == ""
    Progress(10, True, out=out).update(5)
    assert out.getvalue().startswith("\r50.0%  "), out.getvalue()


def test_count_progress_moves_per_file_to_100(ref, tmp_path: Path):
    """Less text than a shared count takes (`parallel.MIN_CHARS`): one file after the other."""
    files = []
    for n, repeat in enumerate((1500, 500, 3000)):
        files.append(tmp_path / f"small{n}.txt")
        files[-1].write_text("The quick brown fox, 42 times.\n" * repeat, encoding="utf-8", newline="")
    sizes = [p.stat().st_size for p in files]
    assert sum(sizes) < parallel.MIN_CHARS
    done = run("count", "gpt2", *map(str, files), "--workers", "1", "--progress")
    assert done.returncode == 0, done.stderr
    shown = percents(done.stderr)
    assert shown[0] == round(100 * sizes[0] / sum(sizes), 1) and shown[-1] == 100.0, shown
    assert shown == sorted(shown)
    assert all("MB/s" in line and " tokens  " in line for line in meter_lines(done.stderr))
    assert any("ETA" in line for line in meter_lines(done.stderr))
    assert done.stderr.endswith("\r")  # the line is cleared before the counts
    expected = [len(ref.encode(p.read_text(encoding="utf-8")).ids) for p in files]
    assert [int(line.split("\t")[0]) for line in done.stdout.splitlines()] == [*expected, sum(expected)]


def test_count_progress_moves_within_one_large_file_on_one_worker(ref, tmp_path: Path, capsys, monkeypatch):
    """A file counted in one piece would show 0 % until it is done: the shared count's steps
    (`parallel.long_text.STEPS`) move the meter on, and the counts stay HF's. In this process,
    with every update drawn (the meter's 0.1 s between draws would make the test depend on speed)."""
    from polytok.cli import main as cli

    monkeypatch.setattr(cli, "Progress", functools.partial(Progress, interval=0.0))
    big = tmp_path / "big.txt"
    lines = [f"Line {i}: the quick brown fox jumps over {i % 97} lazy dogs, again.\n" for i in range(20_000)]
    big.write_text("".join(lines), encoding="utf-8", newline="")
    assert cli.main(["count", "gpt2", str(big), "--workers", "1", "--progress"]) == 0
    done = capsys.readouterr()
    shown = percents(done.err)
    assert len({p for p in shown if p < 100.0}) >= 10 and shown[-1] == 100.0 and shown == sorted(shown), shown
    assert " tokens  " in meter_lines(done.err)[-1]
    assert int(done.out.split("\t")[0]) == len(ref.encode(big.read_text(encoding="utf-8")).ids)


@pytest.mark.parametrize("names", [[0, 1, 2], [2]])
def test_count_progress_moves_with_several_workers(ref, files: list[Path], names: list[int]):
    chosen = [files[i] for i in names]
    done = run("count", "gpt2", *map(str, chosen), "--workers", "2", "--progress")
    assert done.returncode == 0, done.stderr
    shown = percents(done.stderr)
    assert shown and shown[-1] == 100.0 and shown == sorted(shown), done.stderr
    expected = [len(ref.encode(p.read_text(encoding="utf-8")).ids) for p in chosen]
    assert [int(line.split("\t")[0]) for line in done.stdout.splitlines()][:len(chosen)] == expected


def test_no_progress_on_a_pipe_by_default_or_when_refused(files: list[Path]):
    for flag in ([], ["--no-progress"]):
        done = run("count", "gpt2", str(files[0]), "--workers", "1", *flag)
        assert done.returncode == 0 and done.stderr == "", done.stderr


def test_tokenize_corpus_progress(files: list[Path], tmp_path: Path):
    done = run("tokenize-corpus", "gpt2", *map(str, files), "--out", str(tmp_path / "out"), "--shard-mb", "0.05",
               "--workers", "1", "--progress")
    assert done.returncode == 0, done.stderr
    shown = percents(done.stderr)
    assert len(shown) >= 2 and shown[-1] == 100.0 and shown == sorted(shown), done.stderr
    assert "documents" in meter_lines(done.stderr)[-1]
    assert re.search(r"^[\d,]+ documents  [\d,]+ tokens  ", meter_lines(done.stderr)[-1])
    quiet = run("tokenize-corpus", "gpt2", str(files[0]), "--out", str(tmp_path / "out2"))
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("address", [f"127.0.0.1:{unused_port()}", f"ray://127.0.0.1:{unused_port()}",
                                     "no-such-host.invalid:6379", "ray://no-such-host.invalid:10001"],
                         ids=["unused-port", "ray-unused-port", "no-such-host", "ray-no-such-host"])
def test_an_unreachable_ray_address_fails_at_once_in_one_line(files: list[Path], tmp_path: Path, address: str):
    """Ray itself retries an unreachable head for minutes; the subprocess's timeout would fail this test."""
    pytest.importorskip("ray")
    out = tmp_path / "out"
    done = run("tokenize-corpus", "gpt2", str(files[0]), "--out", str(out), "--engine", "ray",
               "--ray-address", address)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"polytok: error: cannot reach the Ray cluster at {address}: "), done.stderr
    assert not out.exists()


def test_an_unreachable_ray_address_from_the_environment(files: list[Path], tmp_path: Path):
    pytest.importorskip("ray")
    address = f"127.0.0.1:{unused_port()}"
    done = run("tokenize-corpus", "gpt2", str(files[0]), "--out", str(tmp_path / "o"), "--engine", "ray",
               env={"RAY_ADDRESS": address})
    assert done.returncode == 1 and f"cannot reach the Ray cluster at {address}" in done.stderr, done.stderr


def test_a_ray_address_that_is_not_host_port(files: list[Path], tmp_path: Path):
    done = run("tokenize-corpus", "gpt2", str(files[0]), "--out", str(tmp_path / "o"), "--engine", "ray",
               "--ray-address", "headnode")
    assert done.returncode == 1 and "'headnode': expected HOST:PORT or ray://HOST:PORT" in done.stderr


class _Peer:
    """A TCP server on 127.0.0.1 that answers every connection with `answer` (None: says nothing)."""

    def __init__(self, answer: bytes | None) -> None:
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.05)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.answer, self.conns, self.stopping = answer, [], threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.conns.append(conn)
            if self.answer is not None:
                conn.sendall(self.answer)

    def close(self) -> None:
        """Stop and join the thread: a thread left running makes `parallel.can_fork` refuse in later tests."""
        self.stopping.set()
        self.thread.join()
        for conn in self.conns:
            conn.close()
        self.sock.close()


SETTINGS_FRAME = bytes([0, 0, 6, 4, 0, 0, 0, 0, 0]) + bytes([0, 3, 0, 0, 0, 100])  # SETTINGS, one setting


@pytest.mark.parametrize("answer, said", [(b"SSH-2.0-OpenSSH_9.6\r\n", "it sent 'SSH-2.0-OpenSSH_9.6'"),
                                          (b"HTTP/1.1 400 Bad Request\r\n\r\n", "it sent 'HTTP/1.1 400 Bad Request'"),
                                          (bytes([0, 0, 0, 1, 4, 0, 0, 0, 1]), "not as a Ray head")])
def test_a_port_that_is_not_a_ray_head_fails_at_once_in_one_line(files: list[Path], tmp_path: Path, answer: bytes,
                                                                  said: str):
    """Ray retries such an address for about 20 s before failing; the check sends HTTP/2's preface
    and wants the SETTINGS frame a gRPC server (the GCS, the Ray client server) answers with."""
    pytest.importorskip("ray")
    peer = _Peer(answer)
    try:
        done = run("tokenize-corpus", "gpt2", str(files[0]), "--out", str(tmp_path / "o"), "--engine", "ray",
                   "--ray-address", f"ray://{peer.address}")
    finally:
        peer.close()
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    expected = f"polytok: error: cannot reach the Ray cluster at ray://{peer.address}: "
    assert done.stderr.startswith(expected), done.stderr
    assert said in done.stderr and not (tmp_path / "o").exists()


def test_a_silent_port_is_not_a_ray_head() -> None:
    from polytok.cli.corpus import reachable
    from polytok.errors import PolytokError

    peer = _Peer(None)
    try:
        with pytest.raises(PolytokError, match="accepts connections but does not answer as a Ray head"):
            reachable(peer.address, timeout=0.5)
    finally:
        peer.close()


def test_an_http2_server_passes_the_check() -> None:
    """What a gRPC server sends first; the real GCS is checked in tests/formats/test_corpus_ray.py."""
    from polytok.cli.corpus import reachable

    peer = _Peer(SETTINGS_FRAME)
    try:
        reachable(peer.address, timeout=2)
        reachable(f"ray://{peer.address}", timeout=2)
    finally:
        peer.close()
