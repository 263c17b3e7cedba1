"""`polytok serve`'s page end to end, in headless Chromium driven by Playwright.

The browser is Debian's chromium (`serve_support.chromium_or_skip`: installed
once when missing and root, else the tests skip).

The page is typed into as a person would; the spans, counts and ids it shows are
checked against HF tokenizers run live on the same files (the built-in gpt2 and
the npm llama3 tokenizer.json), and the highlighted divergence against where
HF's two id lists differ.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import fixtures
import pytest

from formats.serve_support import (
    CHROMIUM_ARGS,
    LLAMA3,
    chromium_or_skip,
    diff_range,
    hf_file,
    hf_gpt2,
    hf_ids,
    start_server,
)
from polytok import load

TEXT = "Hello world!<|endoftext|> caf\u00e9 \U0001f999 na\u00efve\n\tcode = 12345"


@pytest.fixture(scope="session")
def chromium() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def url(chromium: str) -> Iterator[str]:
    server = start_server([str(fixtures.cache_root())])
    yield server.url
    server.shutdown()
    server.server_close()


@pytest.fixture
def page(browser: Any, url: str) -> Iterator[Any]:
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto(url)
    pg.wait_for_selector("body[data-updated]:not([data-busy])")
    yield pg
    pg.close()
    assert not errors, errors


def _act(page: Any, action: Any) -> None:
    """Do something on the page and wait until the update it starts has been drawn."""
    before = page.evaluate("document.body.dataset.updated")
    action()
    page.wait_for_function("prev => document.body.dataset.updated !== prev && !document.body.dataset.busy",
                           arg=before, timeout=30_000)


def _pane(page: Any, side: str, view: str = "token-panes") -> Any:
    return page.locator(f"#{view} .pane[data-side={side}]")


def _ids_of(pane: Any) -> str:
    return str(pane.locator(".ids").input_value())


def _llama3() -> Any:
    return hf_file(fixtures.fixture_path("llama3", "tokenizer.json"))


def test_tokens_view_two_tokenizers(page: Any) -> None:
    _act(page, lambda: page.select_option("#model-b", LLAMA3))
    _act(page, lambda: page.fill("#text", TEXT))
    for side, ref in (("A", hf_gpt2()), ("B", _llama3())):
        ids = hf_ids(ref, TEXT)
        pane = _pane(page, side)
        assert pane.locator(".spans .tok").count() == len(ids)
        assert pane.locator(".count .n").inner_text() == str(len(ids))
        assert _ids_of(pane) == f"[{', '.join(map(str, ids))}]"
    gpt2 = _pane(page, "A")
    assert gpt2.locator(".tok.special").all_inner_texts() == ["<|endoftext|>"]
    # the llama emoji is three byte-level pieces in gpt2: one shows the character, two are marked partial
    assert gpt2.locator(".tok.partial").count() == 3
    for side in ("A", "B"):
        shown = _pane(page, side).locator(".spans > span").evaluate_all(
            "els => els.map(e => [e.className, e.textContent])")
        assert all(body for _, body in shown)  # every token is visible, the extra pieces of a character too
        drawn = "".join(body for cls, body in shown if "zero" not in cls and "added" not in cls)
        assert drawn.replace("\u21b5", "").replace("\u2192", "") == TEXT  # the text, each character once


def test_more_tokenizers_each_get_a_pane(page: Any) -> None:
    page.fill("#text", TEXT)
    _act(page, lambda: page.select_option("#model-more", ["gpt2", LLAMA3]))
    panes = page.locator("#token-panes .pane").evaluate_all("els => els.map(e => e.dataset.side)")
    assert panes == ["A", "C", "D"]
    assert _ids_of(_pane(page, "C")) == _ids_of(_pane(page, "A"))
    assert _ids_of(_pane(page, "D")) == f"[{', '.join(map(str, hf_ids(_llama3(), TEXT)))}]"


def test_hover_names_the_token(page: Any) -> None:
    _act(page, lambda: page.fill("#text", "Hello world"))
    first = _pane(page, "A").locator(".tok").first
    first.hover()
    info = page.locator("#hover-info").inner_text()
    ids = hf_ids(hf_gpt2(), "Hello world")
    assert f"id {ids[0]}" in info and '"Hello"' in info and "48 65 6c 6c 6f" in info and "[0, 5)" in info
    assert "id " in (first.get_attribute("title") or "")


def test_hover_line_resets_when_the_text_changes(page: Any) -> None:
    hint = page.locator("#hover-info").inner_text()
    _act(page, lambda: page.fill("#text", "Hello world"))
    _pane(page, "A").locator(".tok").first.hover()
    assert page.locator("#hover-info").inner_text() != hint
    page.locator("#text").press("End")
    page.keyboard.type("!")  # a key typed: the line is cleared at once, before the new tokens are drawn
    assert page.locator("#hover-info").inner_text() == hint


def test_compare_one_tokenizer_two_modes(page: Any) -> None:
    page.select_option("#model-b", "gpt2")
    page.select_option("#special-b", "text")
    page.fill("#text", TEXT)
    _act(page, lambda: page.click("#tabs button[data-view=compare]"))
    ref = hf_gpt2()
    a0, a1, b0, b1 = diff_range(hf_ids(ref, TEXT, "parse"), hf_ids(ref, TEXT, "text"))
    pane_a, pane_b = _pane(page, "A", "compare-panes"), _pane(page, "B", "compare-panes")
    assert pane_a.locator(".tok.diff").count() == a1 - a0 and pane_b.locator(".tok.diff").count() == b1 - b0
    assert pane_a.locator(".tok.first").count() == a1 - a0
    ref.encode_special_tokens = True
    offsets = ref.encode(TEXT).offsets
    assert "".join(pane_b.locator(".tok.diff").all_inner_texts()) == TEXT[offsets[b0][0]:offsets[b1 - 1][1]]
    banner = page.locator("#divergence").inner_text()
    assert "marker-parsed-one-side" in banner and "special split" in banner and f"A[{a0}:{a1}]" in banner


def test_compare_two_tokenizers(page: Any) -> None:
    text = "Tokenizers split 12345 apples."
    page.select_option("#model-b", LLAMA3)
    page.fill("#text", text)
    page.uncheck("#add-special")
    _act(page, lambda: page.click("#tabs button[data-view=compare]"))
    enc_a = hf_gpt2().encode(text, add_special_tokens=False)
    enc_b = _llama3().encode(text, add_special_tokens=False)
    banner = page.locator("#divergence")
    diff_a = _pane(page, "A", "compare-panes").locator(".tok.diff")
    # two vocabularies compare by bytes by default: only the tokens over characters the other side cuts differently
    assert page.input_value("#match") == "auto"
    expected = [o for o in enc_a.offsets if o not in enc_b.offsets]
    assert diff_a.count() == len(expected) > 0
    assert banner.inner_text().startswith("First split difference")
    # switched to ids: every token of A but those with B's id over the same characters (the final ".")
    pairs_b = set(zip(enc_b.ids, enc_b.offsets))
    by_ids = [p for p in zip(enc_a.ids, enc_a.offsets) if p not in pairs_b]
    _act(page, lambda: page.select_option("#match", "ids"))
    assert diff_a.count() == len(by_ids) > len(expected)
    assert banner.inner_text().startswith("First divergence")
    _act(page, lambda: page.select_option("#match", "bytes"))
    assert diff_a.count() == len(expected)


def test_explain_view_stages(page: Any) -> None:
    page.fill("#text", TEXT)
    _act(page, lambda: page.click("#tabs button[data-view=explain]"))
    stages = page.locator("#explain .stage").evaluate_all("els => els.map(e => e.dataset.stage)")
    assert stages == ["pipeline", "split", "normalize", "pre-tokenize", "model", "post-process", "ids"]
    ids = hf_ids(hf_gpt2(), TEXT)
    assert page.locator("#explain .stage[data-stage=ids] .ids").input_value() == f"[{', '.join(map(str, ids))}]"
    assert "BPE" in page.locator("#explain .stage[data-stage=pipeline]").inner_text()
    assert "adds no token" in page.locator("#explain .stage[data-stage=post-process]").inner_text()


def test_explain_pre_tokens_show_their_offsets(page: Any) -> None:
    text = "Hello world! caf\u00e9 12345"
    page.fill("#text", text)
    _act(page, lambda: page.click("#tabs button[data-view=explain]"))
    expected = [f"{s}\u2013{e}" for _, (s, e) in hf_gpt2().pre_tokenizer.pre_tokenize_str(text)]
    assert page.locator("#explain .stage[data-stage=pre-tokenize] .chip.pre .at").all_inner_texts() == expected


def test_explain_names_what_the_post_processor_adds(page: Any) -> None:
    text = "Hello world"
    page.fill("#text", text)
    page.fill("#load-path", "llama2/tokenizer.json")
    _act(page, lambda: page.click("#load-form button"))
    _act(page, lambda: page.click("#tabs button[data-view=explain]"))
    ref = hf_file(fixtures.fixture_path("llama2", "tokenizer.json"))
    bare = hf_ids(ref, text, add_special=False)
    ids = hf_ids(ref, text)
    assert ids[1:] == bare  # the reference adds exactly one id, in front
    stage = page.locator("#explain .stage[data-stage=post-process]")
    said = stage.inner_text()
    assert "TemplateProcessing" in said and "adds 1 token(s) before the text and 0 after" in said
    assert stage.locator(".chip.added").all_inner_texts() == [f'"{ref.id_to_token(ids[0])}"={ids[0]}']
    _act(page, lambda: page.uncheck("#add-special"))
    assert "add_special is off" in stage.inner_text() and stage.locator(".chip.added").count() == 0


def test_path_outside_root_is_refused_on_the_page(page: Any) -> None:
    page.fill("#load-path", "/etc/passwd")
    page.click("#load-form button")
    page.wait_for_selector("#error:not([hidden])")
    assert "--root" in page.locator("#error").inner_text()


def test_loads_a_path_under_the_root(page: Any) -> None:
    page.fill("#load-path", "llama2/tokenizer.json")
    fixtures.fixture_path("llama2", "tokenizer.json")  # in the cache, which is the root here
    _act(page, lambda: page.click("#load-form button"))
    ids = hf_ids(hf_file(fixtures.fixture_path("llama2", "tokenizer.json")), page.input_value("#text"))
    assert _ids_of(_pane(page, "A")) == f"[{', '.join(map(str, ids))}]"
    assert "byte" in (_pane(page, "A").locator(".tok.byte").first.get_attribute("class") or "")


def test_100kb_text_stays_responsive(page: Any) -> None:
    """A pasted 100 kB text is drawn (25k spans) within a few seconds of the paste."""
    text = fixtures.bench_slice("bench_en", 100_000)
    paste = "t => { const box = document.querySelector('#text'); box.value = t; " \
            "box.dispatchEvent(new Event('input', {bubbles: true})); }"
    started = time.perf_counter()
    _act(page, lambda: page.evaluate(paste, text))
    elapsed = time.perf_counter() - started
    n = len(hf_ids(hf_gpt2(), text))
    assert _pane(page, "A").locator(".count .n").inner_text() == str(n)
    assert _pane(page, "A").locator(".tok").count() == n
    print(f"\n100 kB pasted in the page: drawn after {elapsed:.2f} s ({n} spans; the 250 ms debounce included)")
    assert elapsed < 15


def test_models_are_named_short_with_the_path_on_hover(browser: Any) -> None:
    server = start_server(llama3=False)
    tok = load(fixtures.fixture_path("llama3", "tokenizer.json").parent)
    for name in ("/models/a/llama3", "/models/b/llama3", "/models/c/Llama-2.gguf"):
        server.registry.add(name, tok)
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        pg.goto(server.url)
        pg.wait_for_selector("body[data-updated]:not([data-busy])")
        options = pg.locator("#model-a option").evaluate_all("els => els.map(o => [o.value, o.textContent, o.title])")
        shown = {value: (text.split(" \u2014 ")[0], title.split("\n")[0]) for value, text, title in options}
        assert shown == {"gpt2": ("gpt2", "gpt2"), "/models/a/llama3": ("a/llama3", "/models/a/llama3"),
                         "/models/b/llama3": ("b/llama3", "/models/b/llama3"),
                         "/models/c/Llama-2.gguf": ("Llama-2.gguf", "/models/c/Llama-2.gguf")}
        before = pg.evaluate("document.body.dataset.updated")
        pg.select_option("#model-a", "/models/b/llama3")
        pg.wait_for_function("prev => document.body.dataset.updated !== prev && !document.body.dataset.busy",
                             arg=before)
        name = pg.locator("#token-panes .pane[data-side=A] h2 .name")
        assert name.inner_text() == "A: b/llama3" and name.get_attribute("title") == "/models/b/llama3"
        assert (pg.locator("#model-a").get_attribute("title") or "").startswith("/models/b/llama3")
    finally:
        pg.close()
        server.shutdown()
        server.server_close()


NARROW = 380


@pytest.mark.parametrize("view", ["tokens", "compare", "explain", "chat"])
def test_narrow_window_does_not_overflow(browser: Any, url: str, view: str) -> None:
    pg = browser.new_page(viewport={"width": NARROW, "height": 800})
    try:
        pg.goto(url)
        pg.wait_for_selector("body[data-updated]:not([data-busy])")
        pg.fill("#load-path", "llama3")  # a folder with a chat template, as tokenizer A
        _act(pg, lambda: pg.click("#load-form button"))
        pg.select_option("#model-b", "gpt2")
        _act(pg, lambda: pg.click(f"#tabs button[data-view={view}]"))
        box = "#messages .msg >> nth=1 >> .content" if view == "chat" else "#text"
        _act(pg, lambda: pg.fill(box, TEXT + " " + "x" * 300))  # an unbroken run must wrap, not widen the page
        assert pg.evaluate("document.documentElement.scrollWidth") <= pg.evaluate("innerWidth") == NARROW
        # the controls wrap: each one lies inside the window
        right = pg.locator("#controls fieldset:visible, #controls select:visible, #tabs button").evaluate_all(
            "els => Math.max(...els.map(e => e.getBoundingClientRect().right))")
        assert right <= NARROW
        box = pg.locator("main .view:not([hidden])").bounding_box()
        assert box is not None and box["x"] + box["width"] <= NARROW
    finally:
        pg.close()


def _user_text(pane: Any) -> str:
    return "".join(pane.locator(".spans .tok.role-user:not(.zero)").all_inner_texts())


def test_chat_view(page: Any) -> None:
    transformers = pytest.importorskip("transformers")
    folder = str(fixtures.fixture_path("llama3", "tokenizer.json").parent)
    ref = transformers.AutoTokenizer.from_pretrained(folder)
    page.fill("#load-path", "llama3")
    _act(page, lambda: page.click("#load-form button"))
    _act(page, lambda: page.click("#tabs button[data-view=chat]"))
    assert not page.locator("#text").is_visible()
    messages = page.evaluate("[...document.querySelectorAll('#messages .msg')].map(m => "
                             "({role: m.querySelector('.role').value, content: m.querySelector('.content').value}))")
    pane = page.locator("#chat-out .pane")

    def expect(msgs: list[dict[str, str]]) -> None:
        ids = list(ref.apply_chat_template(msgs, tokenize=True, return_dict=True)["input_ids"])
        assert pane.locator(".ids").input_value() == f"[{', '.join(map(str, ids))}]"
        assert pane.locator(".spans .tok").count() == len(ids)
        for role in {m["role"] for m in msgs}:  # each role's spans show its messages' text
            shown = "".join(pane.locator(f".spans .tok.role-{role}:not(.zero)").all_inner_texts())
            assert shown.replace("\u21b5", "") == "".join(m["content"] for m in msgs if m["role"] == role)
        assert "<|start_header_id|>" in pane.locator(".spans .tok.tmpl").all_inner_texts()

    expect(messages)
    # edit a message
    _act(page, lambda: page.locator("#messages .msg").nth(1).locator(".content").fill("Hi there, llama"))
    messages[1]["content"] = "Hi there, llama"
    expect(messages)
    assert _user_text(pane) == "Hi there, llama"
    # add one (a user turn after the assistant), then remove the system message
    _act(page, lambda: page.click("#add-message"))
    _act(page, lambda: page.locator("#messages .msg").nth(3).locator(".content").fill("And a byte?"))
    messages.append({"role": "user", "content": "And a byte?"})
    expect(messages)
    _act(page, lambda: page.locator("#messages .msg").nth(0).locator(".remove").click())
    del messages[0]
    expect(messages)
    # a role changed
    _act(page, lambda: page.locator("#messages .msg").nth(2).locator(".role").select_option("assistant"))
    messages[2]["role"] = "assistant"
    expect(messages)
    # hovering a token names its role
    pane.locator(".spans .tok.role-user").first.hover()
    assert "role: user" in page.locator("#hover-info").inner_text()
    pane.locator(".spans .tok.tmpl").first.hover()
    assert "template text" in page.locator("#hover-info").inner_text()
    # a tokenizer without a chat template: said, with what to choose instead
    _act(page, lambda: page.select_option("#model-a", "gpt2"))
    assert "no chat template" in page.locator("#error").inner_text() and pane.count() == 0
