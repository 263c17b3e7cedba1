"""A GGUF chat reads a caller's control-token marker "as text" with llama.cpp's ``parse_special=false``.

llama.cpp has no chat-content mode, so the rule is pinned against the call it is made
of: llama-cpp-python 0.3.36's ``Llama.tokenize(text, add_bos=False, special=False)``,
run here, where USER_DEFINED entries still match (``tokenizer_st_partition``). A
marked piece is encoded after a ``"\\n"`` whose ids are then cut off (transformers'
``_encode_chat_piece``, see `polytok.chat.marking`), so the expected ids are llama.cpp's
for ``"\\n" + piece`` less its ids for ``"\\n"``.
"""

from __future__ import annotations

import pytest

import polytok

llama_cpp = pytest.importorskip("llama_cpp")

CONTROL, USER = "[<t>]", "<t>"
TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def _gguf(tmp_path):
    from formats.gguf_pack import ARRAY, FLOAT32, INT32, STRING, pack_gguf

    # "<t>" cannot be made by merges ("<t" and "t>" are no entries): only the partition finds it
    tokens = ["<unk>", "<s>", "</s>", CONTROL, USER] + [f"<0x{b:02X}>" for b in range(256)] + ["▁", "a", "▁a"]
    types = [2, 3, 3, 3, 4] + [6] * 256 + [1] * 3
    kvs = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "llama"),
           ("tokenizer.ggml.tokens", (ARRAY, STRING), tokens),
           ("tokenizer.ggml.scores", (ARRAY, FLOAT32), [0.0] * 261 + [-1.0, -2.0, -3.0]),
           ("tokenizer.ggml.token_type", (ARRAY, INT32), types),
           ("tokenizer.chat_template", STRING, TEMPLATE)]
    path = tmp_path / "content.gguf"
    path.write_bytes(pack_gguf(kvs))
    return path


def test_a_control_marker_in_content_is_read_with_parse_special_false(tmp_path):
    path = _gguf(tmp_path)
    ref = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    tok = polytok.load(path)

    def plain(text):
        return ref.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    newline = plain("\n")
    piece = plain("\n" + CONTROL)
    assert piece[:len(newline)] == newline
    expected = piece[len(newline):]
    user_id = tok.token_to_id(USER)
    assert user_id in expected and tok.token_to_id(CONTROL) not in expected  # llama.cpp: USER_DEFINED still matches
    ids = tok.apply_chat_template([{"role": "user", "content": CONTROL}], tokenize=True)
    assert ids == expected
    parsed = tok.apply_chat_template([{"role": "user", "content": CONTROL}], tokenize=True, content_special="parse")
    assert parsed == ref.tokenize(CONTROL.encode("utf-8"), add_bos=False, special=True) == [tok.token_to_id(CONTROL)]
