"""Chat templates cannot escape the sandbox, nor loop or grow output without bound (polytok.chat.sandbox).

Each escape attempt must end in a ChatTemplateError (never another exception, never a hang);
the limits are configurable with chat_env.configure.
"""

from __future__ import annotations

import contextlib

import pytest

import polytok
from polytok.chat import sandbox as chat_env
from polytok.errors import ChatTemplateError

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def tok():
    return polytok.load("gpt2")


def render(tok, source, **kw):
    return tok.apply_chat_template(MESSAGES, template=source, **kw)


ESCAPES = {
    # reaching Python internals
    "class-mro": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "globals": "{{ raise_exception.__globals__['os'].system('echo hi') }}",
    "namespace-dunder": "{% set ns = namespace() %}{% set ns.__class__ = 1 %}",
    "getattr-filter": "{{ (messages|attr('__class__')).__base__ }}",
    "mutate-list": "{{ messages.append(1) }}",
    "dict-mutate": "{% set d = dict(a=1) %}{{ d.update(b=2) }}",
    # reading files, importing
    "import": "{% import 'os' as os %}{{ os }}",
    "include": "{% include '/etc/passwd' %}",
    "extends": "{% extends '/etc/passwd' %}",
    "open": "{{ open('/etc/passwd').read() }}",
    # unbounded work
    "nested-ranges": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "huge-range": "{% for i in range(10**9) %}{% endfor %}",
    "string-times": "{{ 'x' * 10**9 }}",
    "list-times": "{{ ([1] * 10**9)|length }}",
    "power": "{{ 10 ** 100000000 }}",
    "center": "{{ 'x'|center(10**9) }}",
    "center-method": "{{ 'x'.center(10**9) }}",
    "format-width": "{{ '%999999999s' % 'x' }}",
    "batch": "{{ messages|batch(10**9, 'x')|list }}",
    "output-growth": "{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}",
    "recursion": "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
}


@pytest.mark.parametrize("name", ESCAPES)
def test_escape_attempt_is_a_chat_template_error(tok, name):
    with pytest.raises(ChatTemplateError):
        render(tok, ESCAPES[name])


HIDDEN = {
    "func-code": "{{ strftime_now.__code__ }}",
    "format-attr": "{{ '{0.__class__}'.format(messages) }}",
    "str-class": "{{ ''.__class__ }}",
    "globals-print": "{{ raise_exception.__globals__ }}",
    "loop-internals": "{% for m in messages %}{{ loop.__class__ }}{% endfor %}",
}


@pytest.mark.parametrize("name", HIDDEN)
def test_internals_render_as_undefined(tok, name):
    """The sandbox answers an underscore attribute with an undefined value: nothing is shown."""
    with contextlib.suppress(ChatTemplateError):
        assert render(tok, HIDDEN[name]) == ""


def test_limits_are_configurable_and_named(tok):
    source = "{% for i in range(100) %}{{ i }}{% endfor %}"
    assert render(tok, source).startswith("0123")
    previous = chat_env.configure(max_loop_iterations=50)
    try:
        with pytest.raises(ChatTemplateError, match="max_loop_iterations"):
            render(tok, source)
    finally:
        chat_env.configure(**previous.__dict__)
    previous = chat_env.configure(max_output_chars=100)
    try:
        with pytest.raises(ChatTemplateError, match="max_output_chars"):
            render(tok, "{{ 'z' * 60 }}{{ 'z' * 60 }}")
        assert render(tok, "{{ 'z' * 60 }}") == "z" * 60
    finally:
        chat_env.configure(**previous.__dict__)
    assert chat_env.limits() == chat_env.Limits()


def test_time_limit(tok):
    previous = chat_env.configure(max_seconds=0.3)
    try:
        # the loop runs far past 0.3 s of work and stays under the loop-item limit, so only
        # the clock can stop it (no timing is asserted: the error says which limit it was)
        with pytest.raises(ChatTemplateError, match="max_seconds"):
            render(tok, "{% for i in range(100000) %}{% for j in range(19) %}{{ [i, j]|join|length }}{% endfor %}"
                        "{% endfor %}")
    finally:
        chat_env.configure(**previous.__dict__)
