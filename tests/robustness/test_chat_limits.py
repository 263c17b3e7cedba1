"""A chat-template render is bounded as a whole, whatever construct the template uses (polytok.chat.limits).

Each hostile template below would run past the limits or build a huge value through one
construct; with the limits set small (`LIMITS`), the render must stop with a
ChatTemplateError naming the limit and the operation that went over it, before the work is
done. The hostile values stay a few megabytes at most, so that a render whose guard is
missing ends (unbounded, but quickly) and the test fails instead of filling memory.

Where rendering succeeds, it must equal transformers 5.24.0's ``render_jinja_template``
run here: the checks change no output (`test_constructs_render_as_transformers`).
"""

from __future__ import annotations

import pytest

import polytok
from polytok.chat import sandbox as chat_env
from polytok.errors import ChatTemplateError

LIMITS = dict(max_output_chars=10_000, max_built_chars=10**9, max_loop_iterations=20_000, max_seconds=60.0)
BIG = "word " * 2400  # 12 000 characters of message content: more than max_output_chars


@pytest.fixture(scope="module")
def tok():
    return polytok.load("gpt2")


@pytest.fixture
def small_limits():
    previous = chat_env.configure(**LIMITS)
    yield
    chat_env.configure(**previous.__dict__)


def render(tok, source, content="hi"):
    return tok.apply_chat_template([{"role": "user", "content": content}], template=source)


def refused(tok, source, *match, content=BIG):
    with pytest.raises(ChatTemplateError) as caught:
        render(tok, source, content)
    for text in match:
        assert text in str(caught.value), str(caught.value)
    return caught.value


# name -> (template, words the error must contain); every value is kept small enough that the
# render ends quickly, if wrongly, when its guard is removed
HOSTILE = {
    # loops and loop-like work not built from range()
    "for-over-string": ("{% set s = 'x' * 5000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
                        ("max_loop_iterations",)),
    "for-filtered-out": ("{% set s = 'x' * 9000 %}{% for a in s if false %}{% endfor %}"
                         "{% for a in s if false %}{% endfor %}{% for a in s if false %}{% endfor %}",
                         ("max_loop_iterations",)),
    "for-recursive": ("{% for x in [[1] * 5000] * 6 recursive %}{% if x is iterable %}{{ loop(x) }}{% endif %}"
                      "{% endfor %}", ("max_loop_iterations",)),
    "lipsum": ("{% set s = lipsum(1000) %}", ("max_loop_iterations",)),
    "map-items": ("{{ ('x' * 9000)|map('upper')|map('lower')|map('trim')|list|length }}", ("max_loop_iterations",)),
    "slice-count": ("{{ messages|slice(50000)|list|length }}", ("max_loop_iterations",)),
    "unique": ("{{ range(30000)|unique|list|length }}", ("max_loop_iterations",)),
    "sort": ("{{ range(30000)|sort|first }}", ("max_loop_iterations",)),
    # values built in one operation
    "join": ("{% set l = ['x' * 1000] * 1000 %}{% set s = l|join %}", ("filter join", "max_output_chars")),
    "join-method": ("{% set s = ''.join(['x' * 1000] * 1000) %}", ("method join", "max_output_chars")),
    "plus-doubling": ("{% set ns = namespace(s='x') %}{% for i in range(20) %}{% set ns.s = ns.s + ns.s %}"
                      "{% endfor %}", ("operator +", "max_output_chars")),
    "tilde-doubling": ("{% set ns = namespace(s='x') %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}"
                       "{% endfor %}", ("operator ~", "max_output_chars")),
    "list-doubling": ("{% set ns = namespace(l=[1]) %}{% for i in range(20) %}{% set ns.l = ns.l + ns.l %}"
                      "{% endfor %}", ("operator +", "max_output_chars")),
    "replace-empty": ("{% set s = ('x' * 3000)|replace('', 'yyyy') %}", ("filter replace", "max_output_chars")),
    "replace-method": ("{% set s = ('x' * 3000).replace('', 'yyyy') %}", ("method replace", "max_output_chars")),
    "sum-lists": ("{% set s = ([['x'] * 100] * 1000)|sum(start=[]) %}", ("filter sum", "max_output_chars")),
    "format-method-width": ("{% set s = '{:>999999}'.format('x') %}", ("method format", "max_output_chars")),
    "format-method-fields": ("{% set s = ('{0}' * 100).format('x' * 1000) %}", ("method format", "max_output_chars")),
    "format-filter-width": ("{% set s = '%999999s'|format('x') %}", ("filter format", "max_output_chars")),
    "percent-width": ("{% set s = '%.999999f' % 1.5 %}", ("operator %", "max_output_chars")),
    "tojson-indent": ("{% set s = [[[[1, 2, 3]]]]|tojson(indent=99999) %}", ("filter tojson", "max_output_chars")),
    "wordwrap": ("{% set s = ('a ' * 3000)|wordwrap(1, wrapstring='x' * 100) %}",
                 ("filter wordwrap", "max_output_chars")),
    "indent-width": ("{% set s = ('a\n' * 3000)|indent(1000) %}", ("filter indent", "max_output_chars")),
    "indent-huge": ("{% set s = 'a'|indent(999999) %}", ("filter indent", "max_output_chars")),
    "center": ("{% set s = 'x'|center(999999) %}", ("filter center", "max_output_chars")),
    "center-method": ("{% set s = 'x'.center(999999) %}", ("method center", "max_output_chars")),
    "filter-through-map": ("{% set s = (['x'] * 3)|map('center', 999999)|list %}",
                           ("filter center", "max_output_chars")),
    "string-times": ("{% set s = 'x' * 999999 %}", ("operator *", "max_output_chars")),
    "list-of-range": ("{% set l = range(100000)|list %}", ("filter list", "max_output_chars")),
    "list-of-string": ("{% set l = messages[0].content|list %}", ("filter list", "max_output_chars")),
    "dict-fromkeys": ("{% set d = dict.fromkeys(range(100000)) %}", ("dict.fromkeys", "max_output_chars")),
    "batch-fill": ("{% set l = messages|batch(999999, 'x')|list %}", ("filter batch", "max_output_chars")),
    "expandtabs": ("{% set s = ('\t' * 100).expandtabs(99999) %}", ("method expandtabs", "max_output_chars")),
    "translate": ("{% set s = ('a' * 1000).translate({97: 'b' * 1000}) %}", ("method translate", "max_output_chars")),
    "urlize": ("{% set s = ('www.a.com ' * 100)|urlize(target='x' * 1000) %}", ("filter urlize", "max_output_chars")),
    "macro-output": ("{% macro f(s) %}{% for i in range(1000) %}{{ s }}{% endfor %}{% endmacro %}"
                     "{% set x = f('y' * 1000) %}", ("macro or block", "max_output_chars")),
    "set-block": ("{% set x %}{% for i in range(1000) %}{{ 'y' * 1000 }}{% endfor %}{% endset %}",
                  ("macro or block", "max_output_chars")),
    "print-shared-list": ("{% set a = ['x' * 100] * 100 %}{% set b = [a] * 100 %}{% set s = [b] * 100 %}{{ s|length }}"
                          "{{ s }}", ("printing a value", "max_output_chars")),
    "string-of-shared-list": ("{% set a = ['x' * 100] * 100 %}{% set b = [a] * 100 %}{% set s = b|string %}",
                              ("filter string", "max_output_chars")),
    "pprint": ("{% set a = [[[['x'] * 10] * 10] * 10] * 10 %}{% set s = a|pprint %}",
               ("filter pprint", "max_output_chars")),
    "int-growth": ("{% set ns = namespace(x=3) %}{% for i in range(20) %}{% set ns.x = ns.x * ns.x %}{% endfor %}",
                   ("operator *", "max_output_chars")),
    "power": ("{% set x = 7 ** 99999 %}", ("operator **", "max_output_chars")),
    "batch-walk": ("{% set l = range(100000)|batch(1)|list %}", ("max_loop_iterations",)),
    "encode": ("{% set b = ('\u00e9' * 2000).encode('utf-8', 'backslashreplace') %}",
               ("method encode", "max_output_chars")),
    # comparing or hashing a value shared into an exponential tree
    "compare-shared": ("{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(20) %}{% set ns.a = [ns.a, ns.a] %}"
                       "{% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a == ns.b }}",
                       ("comparing", "max_output_chars")),
    "compare-test": ("{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(20) %}{% set ns.a = [ns.a, ns.a] %}"
                     "{% set ns.b = [ns.b, ns.b] %}{% endfor %}{{ ns.a is eq(ns.b) }}",
                     ("comparing", "max_output_chars")),
    "hash-shared": ("{% set ns = namespace(a=(1,)) %}{% for i in range(20) %}{% set ns.a = (ns.a, ns.a) %}"
                    "{% endfor %}{{ {ns.a: 1}|length }}", ("hashing", "max_output_chars")),
    "lookup-shared": ("{% set ns = namespace(a=(1,)) %}{% for i in range(20) %}{% set ns.a = (ns.a, ns.a) %}"
                      "{% endfor %}{{ {}[ns.a] is defined }}", ("hashing", "max_output_chars")),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_construct_is_refused(tok, small_limits, name):
    source, match = HOSTILE[name]
    refused(tok, source, *match)


def test_content_larger_than_the_limit_is_still_printed_but_not_multiplied(tok, small_limits):
    """max_output_chars bounds what one operation builds, not what the caller passed: printing a long
    message is an output question, copying it into a list item by item is refused."""
    chat_env.configure(max_output_chars=20_000)
    assert render(tok, "{{ messages[0].content }}", content=BIG) == BIG
    refused(tok, "{% set l = messages[0].content|list %}{% set m = l + l %}", "operator +", content=BIG)


def test_values_built_together_are_bounded(tok, small_limits):
    """Many values each under max_output_chars, kept alive together (one per recursion level)."""
    chat_env.configure(max_built_chars=200_000)
    refused(tok, "{% macro f(n, s) %}{{ f(n + 1, s ~ 'x') }}{% endmacro %}{{ f(0, 'x' * 5000) }}",
            "max_built_chars")
    refused(tok, "{% set ns = namespace(l=[]) %}{% for i in range(100) %}{% set ns.l = ns.l + [('y' * 5000)[1:]] %}"
                 "{% endfor %}", "slice", "max_built_chars")


def test_time_limit(tok, small_limits):
    """max_seconds=0: the first reading of the clock (after 256 loop items) is already too late."""
    chat_env.configure(max_seconds=0.0)
    refused(tok, "{% for c in messages[0].content %}{% endfor %}", "max_seconds", content=BIG)
    chat_env.configure(max_seconds=60.0)
    assert render(tok, "{% for c in messages[0].content %}{% endfor %}ok", content=BIG) == "ok"


def test_memory_error_is_a_chat_template_error(tok, small_limits):
    """With the limits lifted, a string of 10**16 characters (10 PB) fails to allocate on any machine."""
    chat_env.configure(max_output_chars=10**17, max_built_chars=10**18)
    refused(tok, "{% set s = 'x' * 10**16 %}", "MemoryError")


def test_filter_assertion_is_a_chat_template_error(tok, small_limits):
    """Jinja's truncate asserts its length covers ``end`` (so it never makes a string longer)."""
    refused(tok, "{{ 'long text'|truncate(2, end='...') }}", "AssertionError")


def test_errors_name_the_template_line(tok, small_limits):
    error = refused(tok, "a\nb\n{% set s = 'x'|center(999999) %}")
    assert error.line == 3


# -- the checks change no output ---------------------------------------------------------------

CONSTRUCTS = [
    "{% for m in messages if m.role == 'user' %}{{ loop.index }}/{{ loop.length }}{{ m.content }}"
    "{% if loop.last %}!{% endif %}{% endfor %}",
    "{% for m in messages %}{{ loop.previtem is defined }}{{ loop.changed(m.role) }}{{ loop.cycle('a', 'b') }}"
    "{% endfor %}{% for k, v in messages[0]|dictsort %}{{ k }}={{ v }};{% endfor %}",
    "{% for x in [[1, [2]], [3]] recursive %}{% if x is iterable %}[{{ loop(x) }}]{% else %}{{ x }}{% endif %}"
    "{% endfor %}",
    "{{ range(5)|length }}{{ range(5)[1:3]|list }}{{ messages[::-1][0].content }}{{ 'abcdef'[1:4] }}",
    "{{ messages|map(attribute='content')|join(', ') }}"
    "|{{ messages|selectattr('role', 'equalto', 'user')|list|length }}"
    "|{{ messages|rejectattr('role', 'in', ['system'])|map(attribute='role')|unique|list }}",
    "{{ 'a' ~ 1 ~ none ~ [1, 'b'] ~ {'k': 'v'} }}{{ 'x' + 'y' }}{{ [1] + [2] }}{{ 'ab' * 3 }}{{ 2 ** 10 }}{{ 7 // 2 }}",
    "{{ '%s-%05d-%.2f' % ('a', 42, 3.14159) }}{{ '{}-{:>4}-{x!r}'.format('a', 7, x='q') }}{{ '%(a)s'|format(a=1) }}",
    "{{ ' x '|trim|upper }}{{ 'Hello World'|lower|title|center(15) }}{{ 'a b c'|replace(' ', '_') }}"
    "{{ 'a\nb'|indent(2, true) }}{{ ('word ' * 5)|wordwrap(8) }}{{ 'long text here'|truncate(9, true) }}",
    "{{ {'b': [1, 'é', none], 'a': {'x': true}}|tojson }}{{ [1, {'a': 'b'}]|tojson(indent=2) }}"
    "{{ messages|tojson(separators=(',', ':')) }}",
    "{{ dict(a=1, b=2) }}{{ dict.fromkeys(['x', 'y'], 0) }}{{ namespace(a=1).a }}{{ {(1, 2): 'tuple key'}[(1, 2)] }}",
    "{% set ns = namespace(s='') %}{% for m in messages %}{% set ns.s = ns.s + m.role[:1] %}{% endfor %}{{ ns.s }}"
    "{% macro f(x, y=2) %}<{{ x }}{{ y }}{{ caller() if caller else '' }}>{% endmacro %}{{ f(1) }}"
    "{% call f(3) %}body{% endcall %}{% set blk %}in {{ 'set' }} block{% endset %}{{ blk }}"
    "{% filter upper %}filtered {{ messages|length }}{% endfilter %}",
    "{{ messages[0] == messages[0] }}{{ messages[0] in messages }}{{ 1 < 2 < 3 }}{{ 'a' in 'abc' }}"
    "{{ messages[0] is eq(messages[-1]) }}{{ [1, 2] < [1, 3] }}",
    "{{ [3, 1, 2]|sort }}{{ [3, 1, 2]|max }}{{ [[1], [2]]|sum(start=[]) }}{{ [1, 2, 3, 4, 5]|batch(2, 0)|list }}"
    "{{ [1, 2, 3, 4, 5]|slice(2)|list }}{{ 'abc'|list }}{{ 'abc'|reverse }}{{ [1, 2]|reverse|list }}"
    "{{ messages|groupby('role')|map(attribute='grouper')|list }}{{ {'a': 1}|items|list }}",
    "{{ 'x'.center(5, '*') }}{{ '7'.zfill(3) }}{{ 'a\tb'.expandtabs(4) }}{{ 'a,b'.split(',') }}"
    "{{ '-'.join(['a', 'b']) }}{{ 'abc'.translate({97: 'A'}) }}{{ 'é'.encode('utf-8') }}{{ 'a'.upper() }}",
]


@pytest.mark.parametrize("index", range(len(CONSTRUCTS)))
def test_constructs_render_as_transformers(tok, index):
    transformers = pytest.importorskip("transformers")
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi <b>"}]
    source = CONSTRUCTS[index]
    (expected,), _ = render_jinja_template([[dict(m) for m in messages]], chat_template=source)
    assert transformers.__version__ == "5.24.0"
    assert tok.apply_chat_template(messages, template=source) == expected
