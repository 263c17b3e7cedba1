"""`polytok serve`'s JSON API, over HTTP against a server on port 0 in a thread.

Every endpoint (``/``, ``/static/*``, ``/api/models``, ``/api/load``, ``/api/encode``,
``/api/compare``, ``/api/explain``) and every error status (400, 403, 404, 405, 411,
413, 500), each a JSON object that names the problem and never a traceback. Ids,
pieces and offsets are HF tokenizers' own, run live on the same files; the
differing region of one tokenizer in two modes is where HF's two id lists differ.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fixtures
import pytest

from formats.serve_support import LLAMA3, Client, diff_range, hf_file, hf_gpt2, hf_ids, start_server
from polytok.serve import api, app
from polytok.serve.views import FLAG_ADDED, FLAG_BYTE, FLAG_PARTIAL, FLAG_SPECIAL, FLAG_UNK, diff_regions

pytest.importorskip("tokenizers")

TEXT = "Hello world!<|endoftext|> caf\u00e9 \U0001f999 na\u00efve\n\tcode = 42"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A --root folder: llama2's tokenizer.json, a file that is no tokenizer, and links out of it."""
    base = tmp_path_factory.mktemp("serve")
    inside = base / "root"
    (inside / "llama2").mkdir(parents=True)
    shutil.copy(fixtures.fixture_path("llama2", "tokenizer.json"), inside / "llama2" / "tokenizer.json")
    (inside / "broken").mkdir()
    (inside / "broken" / "tokenizer.json").write_text("{not json", encoding="utf-8")
    outside = base / "outside"
    (outside / "model").mkdir(parents=True)
    shutil.copy(fixtures.fixture_path("llama2", "tokenizer.json"), outside / "model" / "tokenizer.json")
    (inside / "escape.json").symlink_to(outside / "model" / "tokenizer.json")
    (inside / "sneaky").mkdir()
    shutil.copy(fixtures.fixture_path("llama2", "tokenizer.json"), inside / "sneaky" / "tokenizer.json")
    (inside / "sneaky" / "tokenizer_config.json").symlink_to(outside / "model" / "tokenizer.json")
    return base


@pytest.fixture(scope="module")
def client(root: Path) -> Iterator[Client]:
    server = start_server([str(root / "root")])
    yield Client(server)
    server.shutdown()
    server.server_close()


def _no_traceback(obj: Any) -> None:
    assert "Traceback" not in str(obj) and 'File "' not in str(obj)


def _error(client: Client, method: str, path: str, body: Any = None, status: int = 400, **kw: Any) -> str:
    got, obj, headers = client.request(method, path, body, **kw)
    assert got == status, obj
    assert isinstance(obj, dict) and obj["status"] == status and obj["error"], obj
    assert headers["Content-Type"].startswith("application/json")
    _no_traceback(obj)
    return str(obj["error"])


# -- pages and listings ---------------------------------------------------------------


def test_page_and_static_files(client: Client) -> None:
    status, html, headers = client.request("GET", "/")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "/static/page.js" in html and "/static/page.css" in html and "http" not in html.replace("http-equiv", "")
    for name, kind in (("page.js", "text/javascript"), ("page.css", "text/css")):
        status, body, headers = client.request("GET", f"/static/{name}")
        assert status == 200 and headers["Content-Type"].startswith(kind) and len(body) > 1000
    assert "default-src 'self'" in headers["Content-Security-Policy"]


def test_models_lists_builtin_and_command_line(client: Client, root: Path) -> None:
    status, obj, _ = client.request("GET", "/api/models")
    assert status == 200
    names = {m["name"]: m for m in obj["models"]}
    assert names["gpt2"]["origin"] == "builtin" and names[LLAMA3]["origin"] == "command line"
    assert names["gpt2"]["format"] == "tokenizer.json" and names["gpt2"]["default_special"] == "parse"
    assert obj["roots"] == [os.path.realpath(root / "root")] and obj["max_text"] == api.MAX_TEXT


# -- /api/encode ----------------------------------------------------------------------


@pytest.mark.parametrize("special", ["parse", "text", None])
def test_encode_gpt2_matches_hf(client: Client, special: str | None) -> None:
    ref = hf_gpt2()
    status, obj = client.post("/api/encode", {"model": "gpt2", "text": TEXT, "special": special})
    assert status == 200, obj
    ref.encode_special_tokens = special == "text"
    enc = ref.encode(TEXT)
    assert obj["ids"] == enc.ids and obj["count"] == len(enc.ids)
    assert obj["pieces"] == enc.tokens
    assert [tuple(o) for o in obj["offsets"]] == enc.offsets
    assert obj["special"] == (special or "parse")
    # every byte of the text is in exactly one token (the marker too, read as itself)
    assert b"".join(bytes.fromhex(h) for h in obj["bytes"]) == TEXT.encode("utf-8")
    specials = [k for k, f in enumerate(obj["flags"]) if f & FLAG_SPECIAL]
    assert specials == ([enc.tokens.index("<|endoftext|>")] if special != "text" else [])
    # a piece of a character: HF's decode of that id alone is not text (U+FFFD)
    partial = [k for k, f in enumerate(obj["flags"]) if f & FLAG_PARTIAL]
    assert partial and partial == [k for k, i in enumerate(enc.ids) if "\ufffd" in ref.decode([i])]


def test_encode_command_line_model_matches_hf(client: Client) -> None:
    ref = hf_file(fixtures.fixture_path("llama3", "tokenizer.json"))
    for add_special in (True, False):
        status, obj = client.post("/api/encode", {"model": LLAMA3, "text": TEXT, "add_special": add_special})
        assert status == 200 and obj["ids"] == hf_ids(ref, TEXT, add_special=add_special)
        assert obj["model"]["name"] == LLAMA3


def test_load_then_encode_byte_fallback(client: Client, root: Path) -> None:
    """llama2 (BPE with byte fallback) read by path under the root: <0xNN> pieces flagged."""
    status, obj = client.post("/api/load", {"path": "llama2/tokenizer.json"})
    assert status == 200, obj
    name = obj["model"]["name"]
    assert name == os.path.realpath(root / "root" / "llama2" / "tokenizer.json")
    assert name in {m["name"] for m in obj["models"]}
    ref = hf_file(fixtures.fixture_path("llama2", "tokenizer.json"))
    text = "A \U0001f999 and \u7a40"
    status, enc = client.post("/api/encode", {"model": name, "text": text})
    assert status == 200 and enc["ids"] == hf_ids(ref, text)
    hf_tokens = ref.encode(text).tokens
    byte_pieces = [k for k, t in enumerate(hf_tokens) if t.startswith("<0x")]
    assert len(byte_pieces) >= 4
    assert [k for k, f in enumerate(enc["flags"]) if f & FLAG_BYTE] == byte_pieces
    assert all(enc["flags"][k] & FLAG_PARTIAL for k in byte_pieces)  # each is one byte of a 4-byte character
    assert enc["flags"][0] == FLAG_SPECIAL | FLAG_ADDED and hf_tokens[0] == "<s>"
    # the absolute path names the same model
    status, again = client.post("/api/encode", {"model": name, "text": text})
    assert status == 200 and again["ids"] == enc["ids"]


# -- /api/compare ---------------------------------------------------------------------


def test_compare_one_tokenizer_two_modes(client: Client) -> None:
    ref = hf_gpt2()
    ids_a, ids_b = hf_ids(ref, TEXT, "parse"), hf_ids(ref, TEXT, "text")
    body = {"a": {"model": "gpt2", "special": "parse"}, "b": {"model": "gpt2", "special": "text"}, "text": TEXT}
    status, obj = client.post("/api/compare", body)
    assert status == 200, obj
    assert obj["a"]["ids"] == ids_a and obj["b"]["ids"] == ids_b and not obj["identical"]
    expected = diff_range(ids_a, ids_b)
    assert obj["regions"] == [list(expected)]
    first = obj["first"]
    assert (first["region"]["a_start"], first["region"]["b_start"]) == expected[::2]
    assert "marker-parsed-one-side" in first["reasons"] and first["stage"] == "special split"
    assert first["kind"] and first["window_a"] and first["window_b"]


def test_compare_identical(client: Client) -> None:
    body = {"a": {"model": "gpt2"}, "b": {"model": "gpt2", "special": "parse"}, "text": TEXT}
    status, obj = client.post("/api/compare", body)
    assert status == 200 and obj["identical"] and obj["first"] is None and obj["regions"] == []


def test_compare_two_tokenizers(client: Client) -> None:
    ref_a, ref_b = hf_gpt2(), hf_file(fixtures.fixture_path("llama3", "tokenizer.json"))
    text = "Tokenizers split text into pieces: 12345 apples."
    body = {"a": {"model": "gpt2"}, "b": {"model": LLAMA3}, "text": text, "add_special": False}
    status, obj = client.post("/api/compare", body)
    assert status == 200, obj
    ids_a, ids_b = hf_ids(ref_a, text, add_special=False), hf_ids(ref_b, text, add_special=False)
    assert obj["a"]["ids"] == ids_a and obj["b"]["ids"] == ids_b
    enc_a = ref_a.encode(text, add_special_tokens=False)
    enc_b = ref_b.encode(text, add_special_tokens=False)
    # other vocabularies: a token agrees only where the other side has the same id over the same characters
    both = set(zip(enc_a.ids, enc_a.offsets)) & set(zip(enc_b.ids, enc_b.offsets))
    assert _marked(obj, 0) == {k for k, t in enumerate(zip(enc_a.ids, enc_a.offsets)) if t not in both}
    assert _marked(obj, 2) == {k for k, t in enumerate(zip(enc_b.ids, enc_b.offsets)) if t not in both}
    assert len(_marked(obj, 0)) > len(ids_a) // 2
    assert obj["first"]["region"]["a_start"] == 0 and obj["first"]["stage"]
    # by bytes, only where the splits differ: HF's own offsets say where (llama3 keeps digits in threes)
    status, by_bytes = client.post("/api/compare", {**body, "match": "bytes"})
    assert status == 200 and by_bytes["match"] == "bytes"
    assert _marked(by_bytes, 0) == {k for k, o in enumerate(enc_a.offsets) if o not in enc_b.offsets}
    assert _marked(by_bytes, 2) == {k for k, o in enumerate(enc_b.offsets) if o not in enc_a.offsets}
    assert _marked(by_bytes, 0) and len(_marked(by_bytes, 0)) < len(_marked(obj, 0))


def _marked(obj: Any, at: int) -> set[int]:
    return {k for r in obj["regions"] for k in range(r[at], r[at + 1])}


def test_diff_regions_keeps_the_pieces_of_a_character_together() -> None:
    """gpt2 cuts the llama emoji into three byte pieces with one character's offsets; llama3 into two."""
    text = "a \U0001f999 b"
    ref_a, ref_b = hf_gpt2(), hf_file(fixtures.fixture_path("llama3", "tokenizer.json"))
    enc_a, enc_b = ref_a.encode(text), ref_b.encode(text, add_special_tokens=False)
    regions = diff_regions(enc_a.ids, enc_a.offsets, enc_b.ids, enc_b.offsets)
    emoji_a = [k for k, o in enumerate(enc_a.offsets) if o[1] == 3]
    emoji_b = [k for k, o in enumerate(enc_b.offsets) if o[1] == 3]
    assert len(emoji_a) == 3 and len(emoji_b) >= 2
    assert (emoji_a[0], emoji_a[-1] + 1, emoji_b[0], emoji_b[-1] + 1) in regions


# -- /api/explain ---------------------------------------------------------------------


def test_explain_matches_hf(client: Client) -> None:
    status, obj = client.post("/api/explain", {"model": "gpt2", "text": TEXT})
    assert status == 200, obj
    assert obj["ids"] == hf_ids(hf_gpt2(), TEXT)
    assert set(obj["components"]) >= {"special split", "normalizer", "pre_tokenizer", "model", "post_processor"}
    assert obj["segments"] and all("pre_tokens" in s for s in obj["segments"])
    assert obj["model"]["name"] == "gpt2" and obj["special"] == "parse"


# -- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("raw, says", [
    (b"{not json", "not JSON"), (b"[1, 2]", "JSON object"), (b"\xff\xfe", "not UTF-8"),
    (b'{"model": "gpt2"}', "'text'"), (b'{"model": "gpt2", "text": 5}', "'text'"),
    (b'{"text": "x"}', "'model'"), (b'{"model": 3, "text": "x"}', "'model'"),
    (b'{"model": "gpt2", "text": "x", "special": "yes"}', "'special'"),
    (b'{"model": "gpt2", "text": "x", "add_special": "no"}', "'add_special'"),
    (b'{"model": "gpt2", "text": "a\\ud800b"}', "surrogate"),
])
def test_400_bad_request(client: Client, raw: bytes, says: str) -> None:
    assert says in _error(client, "POST", "/api/encode", raw=raw)


@pytest.mark.parametrize("body, says", [
    ({"a": "gpt2", "b": {"model": "gpt2"}, "text": "x"}, "'a'"),
    ({"a": {"model": "gpt2"}, "text": "x"}, "'b'"),
    ({"a": {"model": "gpt2"}, "b": {"model": "gpt2"}, "text": "x", "match": "words"}, "'match'"),
])
def test_400_bad_compare(client: Client, body: Any, says: str) -> None:
    assert says in _error(client, "POST", "/api/compare", body)


def test_400_unreadable_tokenizer(client: Client) -> None:
    says = _error(client, "POST", "/api/load", {"path": "broken/tokenizer.json"})
    assert "cannot load" in says and "tokenizer.json" in says


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside/model/tokenizer.json", "escape.json", "sneaky",
                                  "sneaky/tokenizer.json"])
def test_403_outside_root(client: Client, root: Path, path: str) -> None:
    says = _error(client, "POST", "/api/load", {"path": path}, status=403)
    assert "--root" in says


def test_403_absolute_path_through_a_link(client: Client, root: Path) -> None:
    _error(client, "POST", "/api/encode", {"model": str(root / "root" / "escape.json"), "text": "x"}, status=403)


def test_403_no_root_reads_no_path(root: Path) -> None:
    server = start_server(None, llama3=False)
    try:
        says = _error(Client(server), "POST", "/api/encode",
                      {"model": str(root / "root" / "llama2" / "tokenizer.json"), "text": "x"}, status=403)
        assert "--root" in says
    finally:
        server.shutdown()
        server.server_close()


def test_403_other_site(client: Client) -> None:
    _error(client, "POST", "/api/encode", {"model": "gpt2", "text": "x"}, status=403,
           headers={"Origin": "http://evil.example"})
    _error(client, "GET", "/api/models", status=403, headers={"Host": "evil.example"})


@pytest.mark.parametrize("method, path, body", [
    ("GET", "/nope", None), ("POST", "/api/nope", {}), ("GET", "/static/other.js", None),
    ("POST", "/api/encode", {"model": "missing/tokenizer.json", "text": "x"}),
    ("POST", "/api/encode", {"model": "no-such-model", "text": "x"}),
])
def test_404(client: Client, method: str, path: str, body: Any) -> None:
    _error(client, method, path, body, status=404)


@pytest.mark.parametrize("method, path, allow", [
    ("GET", "/api/encode", "POST"), ("GET", "/api/compare", "POST"), ("GET", "/api/explain", "POST"),
    ("GET", "/api/load", "POST"), ("POST", "/api/models", "GET, HEAD"), ("POST", "/", "GET, HEAD"),
    ("PUT", "/api/encode", "POST"), ("DELETE", "/", "GET, HEAD"),
])
def test_405_method(client: Client, method: str, path: str, allow: str) -> None:
    raw = b"{}" if method in ("POST", "PUT") else None
    got, obj, headers = client.request(method, path, raw=raw)
    assert got == 405 and headers["Allow"] == allow and obj["status"] == 405
    assert headers["Connection"] == "close"  # the unread body cannot be taken for a next request


def test_keep_alive_after_a_refused_body(client: Client) -> None:
    """A second request on the connection after a 405 with a body is not fed the first one's body."""
    status, body = client.raw(b"POST /api/models HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 25\r\n\r\n"
                              b"GET /nope HTTP/1.1\r\n\r\n")
    assert status == 405 and b"/api/models" in body


def test_411_and_broken_request_line_are_json(client: Client) -> None:
    status, body = client.raw(b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"Content-Type: application/json\r\n\r\n")
    assert status == 411 and b'"status":411' in body
    status, body = client.raw(b"GARBAGE\r\n\r\n")
    assert status == 400 and body.startswith(b"{") and b"Traceback" not in body


def test_413_body_too_large(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app, "MAX_BODY", 10_000)
    says = _error(client, "POST", "/api/encode", {"model": "gpt2", "text": "x" * 20_000}, status=413)
    assert "10,000" in says
    status, _ = client.post("/api/encode", {"model": "gpt2", "text": "ok"})
    assert status == 200


@pytest.mark.parametrize("path", ["/api/encode", "/api/explain", "/api/compare"])
def test_413_text_too_long(client: Client, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    monkeypatch.setattr(api, "MAX_TEXT", 100)
    body = {"model": "gpt2", "a": {"model": "gpt2"}, "b": {"model": "gpt2"}, "text": "y" * 101}
    assert "at most 100" in _error(client, "POST", path, body, status=413)


def test_500_is_json_without_traceback(client: Client, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(api, "token_view", broken)
    says = _error(client, "POST", "/api/encode", {"model": "gpt2", "text": "x"}, status=500)
    assert "a bug" not in says
    assert "RuntimeError: a bug" in capsys.readouterr().err  # the server's log has it


def test_100kb_encode_time(client: Client) -> None:
    """The page's promise: a 100 kB text answers quickly (the time is printed for the report)."""
    text = fixtures.bench_slice("bench_en", 100_000)
    started = time.perf_counter()
    status, obj = client.post("/api/encode", {"model": "gpt2", "text": text})
    elapsed = time.perf_counter() - started
    assert status == 200 and obj["count"] == len(hf_ids(hf_gpt2(), text))
    print(f"\n100 kB gpt2 /api/encode: {elapsed * 1000:.0f} ms round trip, {obj['elapsed_ms']} ms in the server, "
          f"{obj['count']} tokens")
    assert elapsed < 10


def test_diff_regions_bos_on_one_side_is_its_own_region() -> None:
    """llama2 with and without its <s>: only the BOS differs, not the first word after it."""
    ref = hf_file(fixtures.fixture_path("llama2", "tokenizer.json"))
    text = "Hello world"
    with_bos, without = ref.encode(text), ref.encode(text, add_special_tokens=False)
    assert with_bos.tokens[0] == "<s>" and with_bos.ids[1:] == without.ids
    assert diff_regions(with_bos.ids, with_bos.offsets, without.ids, without.offsets) == [(0, 1, 0, 0)]
    assert diff_regions(without.ids, without.offsets, with_bos.ids, with_bos.offsets) == [(0, 0, 0, 1)]


# -- every format: the engine's ids, and the page's bytes and flags -------------------

_FORMATS = [  # (fixture name, file, reference engine); None as the file: llama.cpp's ggml-vocab-<name>.gguf
    ("spm-mistral-v1", "tokenizer.model", "sentencepiece"),
    ("whisper-gpt2-tiktoken", "gpt2.tiktoken", "tiktoken"),
    ("tekken-240718", "tekken.json", "mistral"),
    ("llama-spm", None, "llama.cpp"),
    ("llama-bpe", None, "llama.cpp"),
]
_FORMAT_TEXT = "Hello  world! caf\u00e9 \U0001f999 na\u00efve\n\tx=12345 \u7a40"


@pytest.fixture(scope="module")
def cache_client() -> Iterator[Client]:
    server = start_server([str(fixtures.cache_root())], llama3=False)
    yield Client(server)
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("name, filename, engine", _FORMATS, ids=[f[0] for f in _FORMATS])
def test_formats_match_their_engine(cache_client: Client, name: str, filename: str | None, engine: str) -> None:
    from polytok import load
    from polytok.parity.engines import reference_side

    if engine == "llama.cpp":  # not a test extra: it compiles llama.cpp; its side is in the GGUF goldens
        pytest.importorskip("llama_cpp")
    path = fixtures.fixture_path(name, filename) if filename else fixtures.gguf_vocab_path(name)
    status, loaded = cache_client.post("/api/load", {"path": str(path)})
    assert status == 200, loaded
    status, obj = cache_client.post("/api/encode", {"model": loaded["model"]["name"], "text": _FORMAT_TEXT})
    assert status == 200, obj
    status, explained = cache_client.post("/api/explain", {"model": loaded["model"]["name"], "text": _FORMAT_TEXT})
    assert status == 200, explained
    ref = reference_side(engine, str(path), "ref", load(path))
    try:
        assert obj["ids"] == ref.encode(_FORMAT_TEXT, True, None) == explained["ids"]
        byte_pieces = [k for k, i in enumerate(obj["ids"]) if ref.piece(i).startswith("<0x")]
        # marked special: only the engine's special (control) ids; llama.cpp's newline id is not one
        assert {obj["ids"][k] for k, f in enumerate(obj["flags"]) if f & FLAG_SPECIAL} <= ref.special
    finally:
        getattr(ref, "close", lambda: None)()
    assert [k for k, f in enumerate(obj["flags"]) if f & FLAG_BYTE] == byte_pieces
    text_bytes = b"".join(bytes.fromhex(h) for h, f in zip(obj["bytes"], obj["flags"]) if not f & FLAG_ADDED)
    if engine in ("tiktoken", "mistral"):  # no normalizer: the tokens' bytes are the text's
        assert text_bytes == _FORMAT_TEXT.encode("utf-8")
    assert text_bytes.replace(b" ", b"").endswith("\u7a40".encode("utf-8"))
    assert any(f & FLAG_PARTIAL for f in obj["flags"])  # the emoji is cut into bytes by every one of them


def test_unknown_token_flagged(cache_client: Client) -> None:
    """A SentencePiece model without byte fallback: what it cannot spell is <unk>, and marked so."""
    import sentencepiece

    path = fixtures.fixture_path("spm-botchan-bpe-1000", "spm.model")
    status, obj = cache_client.post("/api/encode", {"model": str(path), "text": _FORMAT_TEXT})
    assert status == 200, obj
    ref = sentencepiece.SentencePieceProcessor(model_file=str(path))
    assert obj["ids"] == ref.encode(_FORMAT_TEXT)
    unk = [k for k, i in enumerate(obj["ids"]) if i == ref.unk_id()]
    assert unk and [k for k, f in enumerate(obj["flags"]) if f & FLAG_UNK] == unk
    assert not any(obj["flags"][k] & FLAG_SPECIAL for k in unk)


def test_a_request_the_page_gave_up_on_is_not_an_error(client: Client, capsys: pytest.CaptureFixture[str]) -> None:
    """The page aborts a stale request as you type: the server drops the answer quietly and goes on."""
    import json
    import socket
    import struct

    text = fixtures.bench_slice("bench_en", 60_000)
    body = json.dumps({"model": "gpt2", "text": text}).encode("utf-8")
    for _ in range(3):
        sock = socket.create_connection(("127.0.0.1", client.port))
        sock.sendall(b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        sock.close()
    time.sleep(0.5)
    for _ in range(3):  # the given-up requests may still be running meanwhile
        status, obj = client.post("/api/encode", {"model": "gpt2", "text": text[:20_000]})
        assert status == 200, obj
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
