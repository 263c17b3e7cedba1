"""Word counts of a corpus too large to hold: the files are cut into splits
(`polytok.corpus.readers`: text lines, JSONL fields, Parquet columns), each split is
read and counted on its own, by this process, forked workers
(`polytok.parallel.map_in_runs`) or Ray tasks, and the split tables are added up as they
arrive. Memory holds the word table and one split per worker, never the corpus; a sum does
not depend on the order the tables arrive in, so any number of workers gives one table.

A text file's documents are its lines with their line ends, as HF's ``Tokenizer.train`` reads
files (Rust's ``read_line``: ``"\\n"`` and ``"\\r\\n"`` kept, the last line as it ends); a line that
is not UTF-8 stops the training, naming the file and byte offset, as HF's reading fails there.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..corpus.readers import (
    MAX_LINE_BYTES,
    Split,
    check_parquet_column,
    input_kind,
    parquet_rows,
    read_split,
    split_lines,
)
from ..errors import FormatError
from .word_counts import WordSplitter, count_words

__all__ = ["SPLIT_BYTES", "plan_splits", "count_splits", "count_corpus"]

SPLIT_BYTES = 1 << 24  # of a text or JSONL file per split (Parquet: rows of about as many bytes)


def plan_splits(paths: list[str], split_bytes: int = SPLIT_BYTES, input_format: str = "auto",
                column: str = "text") -> list[Split]:
    """The splits of `paths`, in file order."""
    splits: list[Split] = []
    for file_index, path in enumerate(paths):
        kind = input_kind(path, input_format)
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise FormatError(exc.strerror or str(exc), file=path) from None
        if kind == "parquet":
            check_parquet_column(path, column)
            rows, raw = parquet_rows(path)
            step, stop = max(1, rows * split_bytes // raw if raw else rows), rows
        else:
            step, stop = split_bytes, size
        for start in range(0, stop, step):
            splits.append(Split(len(splits), file_index, path, kind, start, min(start + step, stop)))
    return splits


def _count_split(split: Split, words_of: WordSplitter, field: str, column: str) -> dict[str, int]:
    if split.kind == "text":
        return count_words(_text_lines(split), words_of)
    docs, _, _ = read_split(split, field, column)
    return count_words(docs, words_of)


def _text_lines(split: Split) -> Iterable[str]:
    """The lines of a text file's split, line ends kept."""
    for offset, line in split_lines(split.path, split.start, split.end):
        if isinstance(line, int):
            raise FormatError(f"a line of {line} bytes, longer than the {MAX_LINE_BYTES} read at most",
                              file=split.path, offset=offset)
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"not UTF-8 text ({exc.reason})", file=split.path, offset=offset + exc.start) from None


def count_splits(splits: list[Split], words_of: WordSplitter, *, workers: int = 1, engine: str = "local",
                 field: str = "text", column: str = "text") -> dict[str, int]:
    """The summed word table of `splits`, counted by `workers` processes (``local``) or Ray tasks (``ray``)."""
    total: Counter[str] = Counter()
    if engine == "ray":
        for table in _ray_tables(splits, words_of, workers, field, column):
            total.update(table)
        return dict(total)
    if engine != "local":
        raise ValueError(f"unknown engine {engine!r} (local or ray)")
    from .. import parallel

    if workers <= 1 or len(splits) <= 1 or not parallel.can_fork():
        for split in splits:
            total.update(_count_split(split, words_of, field, column))
        return dict(total)

    def job(split: Split) -> dict[str, int]:
        return _count_split(split, words_of, field, column)

    for index, ok, table in parallel.map_in_runs(job, splits, workers):
        if not ok:
            job(splits[index])  # raises the worker's error here, with its own type and message
            raise RuntimeError(f"a worker failed where this process did not: {table}")
        total.update(table)
    return dict(total)


def _ray_tables(splits: list[Split], words_of: WordSplitter, workers: int, field: str,
                column: str) -> Iterable[dict[str, int]]:
    try:
        import ray
    except ImportError:
        raise RuntimeError("--engine ray needs Ray: pip install 'ray[data]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False)
    try:
        task: Any = ray.remote(num_cpus=1)(_count_split)
        pending = [task.remote(split, words_of, field, column) for split in splits]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


def count_corpus(texts: Iterable[str] | None, files: list[str] | None, words_of: WordSplitter, *,
                 workers: int = 1, engine: str = "local", split_bytes: int = SPLIT_BYTES,
                 field: str = "text", column: str = "text") -> dict[str, int]:
    """The word table of `texts` (counted here) and of `files` (see `count_splits`)."""
    total: Counter[str] = Counter()
    if texts is not None:
        total.update(count_words(_flat(texts), words_of))
    if files:
        total.update(count_splits(plan_splits(list(files), split_bytes, column=column), words_of,
                                  workers=workers, engine=engine, field=field, column=column))
    return dict(total)


def _flat(texts: Iterable[Any]) -> Iterable[str]:
    """`texts`, batches (lists of texts, as transformers passes them) flattened."""
    for item in texts:
        if isinstance(item, str):
            yield item
        else:
            yield from item
