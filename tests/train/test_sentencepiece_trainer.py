"""`train_sentencepiece` (BPE) against sentencepiece 0.2.3's own trainer, run live.

Each case trains both on the same sentences (spm with ``num_threads=1``) and
compares the models' pieces, scores and types, then the whole serialized model
(trainer and normalizer specs included), then the ids the two models give on
the edge texts when sentencepiece loads each of them. A few small corpora run by
default; the sweep over corpora, vocabulary sizes and options is ``slow``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from fixtures import bench_slice, edge_texts

import polytok
from polytok.train.sentencepiece_trainer import train_sentencepiece

spm = pytest.importorskip("sentencepiece")
model_pb2 = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")

# Japanese with Kanji, Hiragana and Katakana in one word (they count as one script), Chinese,
# Korean and rare characters that character_coverage leaves out.
CJK_LINES = [
    "東京タワーは日本の電波塔です。", "カタカナとひらがなと漢字を混ぜた文章を書きます。",
    "コーヒーを飲みながら新聞を読む。", "我们今天去北京大学参观。", "这是一个简单的中文句子。",
    "서울은 한국의 수도입니다.", "안녕하세요 여러분, 반갑습니다.", "鬱蒼とした森の奥に龘がいる。",
    "ラーメン屋さんで餃子も注文した。", "中文和日本語の混合テキスト123と４５６。",
    # combining marks with no precomposed form (script Inherited: they take the script before them)
    "q\u0303uery x\u0327yz q\u0303q\u0303 б\u0303ук б\u0303б\u0303", "q\u0303 x\u0327 б\u0303 ж\u0303ж\u0303",
] * 3


def lines(name: str, n_chars: int) -> list[str]:
    return [line for line in bench_slice(name, n_chars).split("\n") if line.strip()]


def spm_train(texts: list[str], **options: Any) -> bytes:
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=out, num_threads=1,
                                   minloglevel=2, **options)
    return out.getvalue()


def pieces_of(model: bytes) -> list[tuple[str, float, int]]:
    proto = model_pb2.ModelProto()
    proto.ParseFromString(model)
    return [(p.piece, p.score, p.type) for p in proto.pieces]


def assert_same_model(texts: list[str], **options: Any) -> bytes:
    expected = spm_train(texts, **options)
    ours = train_sentencepiece(texts, num_threads=1, **options)
    want, got = pieces_of(expected), pieces_of(ours)
    for index, (a, b) in enumerate(zip(want, got, strict=False)):
        assert a == b, f"id {index}: sentencepiece {a}, polytok {b}"
    assert len(want) == len(got)
    assert ours == expected  # specs as spm_train records them
    return ours


CASES = [
    pytest.param("en", 20_000, {"vocab_size": 300}, id="en-300"),
    pytest.param("multi", 20_000, {"vocab_size": 700, "character_coverage": 0.98}, id="multi-coverage"),
    pytest.param("code", 12_000, {"vocab_size": 400, "split_digits": True, "split_by_whitespace": False},
                 id="code-digits-nowhitespace"),
    pytest.param("en", 12_000, {"vocab_size": 600, "byte_fallback": True, "user_defined_symbols": ["the", "<tag>"],
                                "control_symbols": "<ctl>,<x>", "pad_id": 3, "unk_id": 5}, id="meta-pieces"),
]


@pytest.mark.parametrize(("corpus", "n_chars", "options"), CASES)
def test_bpe_same_model_as_spm_train(corpus: str, n_chars: int, options: dict[str, Any]) -> None:
    texts = lines(corpus, n_chars)
    model = assert_same_model(texts, model_type="bpe", **options)
    reference = spm.SentencePieceProcessor(model_proto=spm_train(texts, model_type="bpe", **options))
    ours = spm.SentencePieceProcessor(model_proto=model)
    for text in texts[:50] + edge_texts():
        assert ours.encode(text) == reference.encode(text), text


def test_bpe_scripts_and_character_coverage() -> None:
    """Kana and Kanji are one script, a combining mark takes the script before it; the rarest
    characters fall under the coverage and become unknown."""
    assert_same_model(CJK_LINES, model_type="bpe", vocab_size=400, character_coverage=0.985, hard_vocab_limit=False)


def test_bpe_whitespace_rules_and_normalizer_options() -> None:
    texts = lines("en", 8_000) + ["a  b   c", "  leading", "trailing  "]
    assert_same_model(texts, model_type="bpe", vocab_size=250, treat_whitespace_as_suffix=True,
                      normalization_rule_name="nfkc_cf", remove_extra_whitespaces=False)
    assert_same_model(texts, model_type="bpe", vocab_size=250, allow_whitespace_only_pieces=True,
                      split_by_unicode_script=False, add_dummy_prefix=False, remove_extra_whitespaces=False)


def test_bpe_skipped_sentences_and_pretokenization_delimiter() -> None:
    """Sentences holding U+2585 or longer than max_sentence_length bytes are left out; the
    delimiter is a boundary no piece crosses (and is not a character of the vocabulary)."""
    texts = [line.replace(" of ", " of|") for line in lines("en", 6_000)]
    texts += ["\u2585 reserved mark", "x" * 60, "", "the|the|the"]
    assert_same_model(texts, model_type="bpe", vocab_size=200, pretokenization_delimiter="|", max_sentence_length=50)


def test_polytok_loads_the_trained_model(tmp_path: Path) -> None:
    """The .model round-trips through polytok's own reader: the ids sentencepiece gives with it."""
    texts = lines("multi", 8_000)
    path = tmp_path / "trained.model"
    path.write_bytes(train_sentencepiece(texts, model_type="bpe", vocab_size=400, byte_fallback=True))
    ours = polytok.load(path)
    reference = spm.SentencePieceProcessor(model_file=str(path))
    for text in texts[:30] + edge_texts():
        assert ours.encode(text) == reference.encode(text), text


def test_bpe_without_hard_vocab_limit_stops_at_the_last_merge() -> None:
    assert_same_model(["abc abd abe", "xyz"] * 3, model_type="bpe", vocab_size=500, hard_vocab_limit=False)


def test_bpe_overlapping_runs_and_equal_counts() -> None:
    """Runs of one letter (``aaaa``: overlapping occurrences, the same text by two splits) and many ties."""
    texts = ["aaaa aaa aaaaa ab ba abab baba", "aaaaaa bbbb abba", "a aa aaa aaaa aaaaa aaaaaa aaaaaaa"] * 2
    assert_same_model(texts, model_type="bpe", vocab_size=40, hard_vocab_limit=False)


@pytest.mark.parametrize(("options", "message"), [
    ({"vocab_sise": 100}, "unknown option 'vocab_sise'"),
    ({"input": "corpus.txt"}, "option input"),
    ({"model_type": "word"}, "option model_type"),
    ({"character_coverage": 0.5}, "option character_coverage"),
    ({"vocab_size": "many"}, "option vocab_size"),
    ({"normalization_rule_name": "nfd"}, "normalization_rule_name"),
    ({"vocab_size": 5}, "option vocab_size"),
    ({"user_defined_symbols": ["<unk>"]}, "user_defined_symbols"),
])
def test_bad_options_are_named(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        train_sentencepiece(["hello world"] * 3, **{"model_type": "bpe", "vocab_size": 30, **options})


def test_bad_texts_are_named() -> None:
    with pytest.raises(ValueError, match="single str"):
        train_sentencepiece("hello world", model_type="bpe", vocab_size=30)
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        train_sentencepiece(["ok", b"bytes"], model_type="bpe", vocab_size=30)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"texts\[0\].*surrogate"):
        train_sentencepiece(["\ud800"], model_type="bpe", vocab_size=30)
    with pytest.raises(ValueError, match="no sentence"):
        train_sentencepiece(["", "\u2585"], model_type="bpe", vocab_size=30)


def test_sampling_is_refused_unless_every_sentence_fits() -> None:
    texts = [f"sentence {n}" for n in range(150)]
    with pytest.raises(ValueError, match="input_sentence_size"):
        train_sentencepiece(texts, model_type="bpe", vocab_size=40, input_sentence_size=120)
    # the first N without shuffling, and N at least the corpus with it, are what spm does
    assert_same_model(texts, model_type="bpe", vocab_size=40, input_sentence_size=120, shuffle_input_sentence=False)
    assert_same_model(texts, model_type="bpe", vocab_size=40, input_sentence_size=200)


SWEEP = [
    (corpus, n_chars, vocab, extra)
    for corpus, n_chars in (("en", 200_000), ("multi", 150_000), ("code", 150_000))
    for vocab in (1000, 4000)
    for extra in ({}, {"byte_fallback": True, "character_coverage": 0.995}, {"split_by_number": False,
                                                                           "max_sentencepiece_length": 8})
]


@pytest.mark.slow
@pytest.mark.parametrize(("corpus", "n_chars", "vocab", "extra"), SWEEP)
def test_bpe_sweep(corpus: str, n_chars: int, vocab: int, extra: dict[str, Any]) -> None:
    texts = lines(corpus, n_chars)
    model = assert_same_model(texts, model_type="bpe", vocab_size=vocab, hard_vocab_limit=False, **extra)
    reference = spm.SentencePieceProcessor(model_proto=spm_train(texts, model_type="bpe", vocab_size=vocab,
                                                                 hard_vocab_limit=False, **extra))
    ours = spm.SentencePieceProcessor(model_proto=model)
    for text in texts[:300] + edge_texts():
        assert ours.encode(text) == reference.encode(text), text
