"""`train_new`, `polytok.train`, the WordPiece/WordLevel trainers and out-of-core counting.

`train_new` is checked against transformers' ``train_new_from_iterator`` (live), the
WordPiece and WordLevel vocabularies against HF's trainers (live), and corpus counting
for its memory bound and for byte-identical output whatever the number of workers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from fixtures import bench_slice, fixture_path
from hf_word_order import hf_word_order

import polytok
from polytok.train.bpe_trainer import BpeTrainer, train_bpe, train_bpe_words
from polytok.train.corpus_counts import count_corpus
from polytok.train.wordpiece_trainer import WordLevelTrainer, WordPieceTrainer

tokenizers = pytest.importorskip("tokenizers")


def lines(name: str = "bench_en", chars: int = 60_000) -> list[str]:
    return bench_slice(name, chars).splitlines()


def hf_reload(data: dict[str, Any]) -> dict[str, Any]:
    """`data` as HF writes it after reading it (every default filled in)."""
    loaded: dict[str, Any] = json.loads(tokenizers.Tokenizer.from_str(json.dumps(data)).to_str())
    return loaded


@pytest.mark.parametrize("name", ["gpt2", "roberta-base"])
def test_train_new_equals_transformers(name: str) -> None:
    transformers = pytest.importorskip("transformers")
    texts = lines("bench_multi", 25_000)
    folder = fixture_path(name, "tokenizer.json").parent
    ref = transformers.AutoTokenizer.from_pretrained(str(folder)).train_new_from_iterator(texts, 900)
    got = polytok.load(str(folder / "tokenizer.json")).train_new(texts, 900)
    assert hf_reload(got.data) == json.loads(ref.backend_tokenizer.to_str())  # type: ignore[attr-defined]
    sample = "Hello wörld, 你好 <s> ok"
    assert got.encode(sample) == ref.backend_tokenizer.encode(sample).ids


@pytest.mark.slow
def test_train_new_qwen3_model_equals_transformers() -> None:
    """transformers 5 rebuilds Qwen2's pipeline from its class; the trained model must still be equal."""
    transformers = pytest.importorskip("transformers")
    texts = lines("bench_code", 40_000)
    path = fixture_path("qwen3", "tokenizer.json")
    ref = transformers.AutoTokenizer.from_pretrained(str(path.parent)).train_new_from_iterator(texts, 800)
    got = polytok.load(str(path)).train_new(texts, 800)
    theirs = json.loads(ref.backend_tokenizer.to_str())
    assert got.data["model"] == theirs["model"]
    mine = [(t["id"], t["content"]) for t in got.data["added_tokens"]]
    # transformers then adds the class's other (non-special) tokens after the vocabulary
    assert mine == [(t["id"], t["content"]) for t in theirs["added_tokens"]][:len(mine)]


def test_saved_file_loads_in_hf(tmp_path: Path) -> None:
    tok = polytok.load(str(fixture_path("gpt2", "tokenizer.json")))
    trained = tok.train_new(lines(), 600)
    trained.save(tmp_path / "tokenizer.json")  # type: ignore[attr-defined]
    ref = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in lines()[:50]:
        assert trained.encode(text) == ref.encode(text).ids


def test_polytok_train_from_a_pipeline_dict() -> None:
    texts = lines("bench_multi", 30_000)
    pipeline = {"normalizer": {"type": "NFKC"},
                "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
                "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
                "model": {"type": "BPE", "unk_token": "<unk>"}}
    got = polytok.train(texts, pipeline, BpeTrainer(vocab_size=700, special_tokens=["<unk>"]))
    ref = tokenizers.Tokenizer.from_str(json.dumps({**pipeline, "version": "1.0", "added_tokens": [],
                                                    "model": {"type": "BPE", "unk_token": "<unk>", "vocab": {},
                                                              "merges": []}}))
    ref.train_from_iterator(texts, tokenizers.trainers.BpeTrainer(vocab_size=700, special_tokens=["<unk>"],
                                                                  show_progress=False))
    assert hf_reload(got.data) == json.loads(ref.to_str())


def hf_words(pre: Any, texts: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for text in texts:
        for word, _ in pre.pre_tokenize_str(text):
            counts[word] = counts.get(word, 0) + 1
    return counts


@pytest.mark.parametrize("options", [{"vocab_size": 800}, {"vocab_size": 5000, "min_frequency": 4,
                                                           "special_tokens": ["[UNK]", "[CLS]"]}])
def test_wordpiece_equals_hf(options: dict[str, Any]) -> None:
    texts = lines("bench_en", 40_000)
    ref = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    ref.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    ref.train_from_iterator(texts, tokenizers.trainers.WordPieceTrainer(show_progress=False, **options))
    vocab = json.loads(ref.to_str())["model"]["vocab"]
    counts = hf_words(ref.pre_tokenizer, texts)
    # HF's ids for the ``##`` pieces follow its hash map: train on the word order they show
    bpe = BpeTrainer(continuing_subword_prefix="##", **options)
    order = hf_word_order(vocab, counts, {"continuing_subword_prefix": "##", **options})
    assert list(train_bpe_words(order, bpe).vocab.items()) == list(vocab.items())
    got = WordPieceTrainer(**options).train(counts)
    assert got == train_bpe(counts, bpe).vocab  # polytok's own order: code points


@pytest.mark.parametrize("options", [{"vocab_size": 300}, {"vocab_size": 100_000, "min_frequency": 3,
                                                           "special_tokens": ["<pad>"]}])
def test_word_level_equals_hf(options: dict[str, Any]) -> None:
    texts = lines("bench_en", 40_000)
    ref = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="<unk>"))
    ref.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    ref.train_from_iterator(texts, tokenizers.trainers.WordLevelTrainer(show_progress=False, **options))
    vocab = json.loads(ref.to_str())["model"]["vocab"]
    got = WordLevelTrainer(**options).train(hf_words(ref.pre_tokenizer, texts))
    assert sorted(got.items(), key=lambda kv: kv[1]) == sorted(vocab.items(), key=lambda kv: kv[1])


def write_corpus(path: Path, megabytes: float) -> None:
    text = bench_slice("bench_en", 400_000)
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        while written < megabytes * 1e6:
            f.write(text)
            written += len(text)


def test_counting_memory_is_bounded_by_the_word_table(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    write_corpus(corpus, 4)
    tracemalloc.start()
    try:
        counts = count_corpus(None, [str(corpus)], str.split, split_bytes=1 << 18)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(counts.values()) > 500_000
    assert peak < 3_200_000 < corpus.stat().st_size  # a split and the table, not the corpus


def train_file(files: list[str], out: Path, workers: int, engine: str = "local") -> bytes:
    tok = polytok.load(str(fixture_path("gpt2", "tokenizer.json")))
    trained = tok.train_new([Path(f) for f in files], 500, workers=workers, engine=engine)
    trained.save(out)  # type: ignore[attr-defined]
    return out.read_bytes()


def test_workers_give_byte_identical_files(tmp_path: Path) -> None:
    parts = []
    for i, name in enumerate(["bench_en", "bench_multi", "bench_code"]):
        p = tmp_path / f"part{i}.txt"
        p.write_text(bench_slice(name, 60_000), encoding="utf-8")
        parts.append(str(p))
    one = train_file(parts, tmp_path / "one.json", 1)
    two = train_file(parts, tmp_path / "two.json", 2)
    assert one == two


@pytest.mark.slow
def test_ray_gives_the_same_file(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    p = tmp_path / "part.txt"
    p.write_text(bench_slice("bench_en", 60_000), encoding="utf-8")
    assert train_file([str(p)], tmp_path / "one.json", 1) == train_file([str(p)], tmp_path / "ray.json", 2, "ray")


def test_counting_under_an_address_space_cap(tmp_path: Path) -> None:
    """A corpus larger than the memory the process may add trains within it (RLIMIT_AS in a child)."""
    corpus = tmp_path / "big.txt"
    write_corpus(corpus, 12)
    code = (
        "import resource\n"
        "from polytok.train.corpus_counts import count_corpus\n"
        "used = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "cap = used + 10_000_000\n"
        "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
        f"counts = count_corpus(None, [{str(corpus)!r}], str.split, split_bytes=1 << 18)\n"
        "print(sum(counts.values()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert corpus.stat().st_size > 10_000_000


def test_train_new_sources() -> None:
    """The built-in gpt2 trains like its file; a tokenizer from another format is refused, saying why
    (a Unigram tokenizer.json trains: tests/train/test_unigram_trainer.py)."""
    texts = lines("bench_en", 20_000)
    built_in = polytok.load("gpt2").train_new(texts, 400)
    from_file = polytok.load(str(fixture_path("gpt2", "tokenizer.json"))).train_new(texts, 400)
    assert built_in.data["model"] == from_file.data["model"]  # type: ignore[attr-defined]
    spm_model = polytok.load(str(fixture_path("spm-botchan-bpe-1000", "spm.model")))
    with pytest.raises(polytok.PolytokError, match="needs the tokenizer.json"):
        spm_model.train_new(texts, 400)
