"""Tokenize a corpus into token shards: text, JSONL or Parquet in; ``.bin`` + ``.idx`` (or Parquet) out.

``polytok.corpus.tokenize`` (and ``polytok tokenize-corpus``) cuts the inputs
into splits by input order and size (`manifest.plan`: ``shard_bytes`` of each
text or JSONL file, or the rows of about that much Parquet), encodes each split
into one shard (`shards`), on this machine's cores (`local`) or on Ray actors
(`ray_engine`), and writes the shards and a manifest (`output`, `manifest`).
The splits depend on the inputs and ``shard_bytes`` only, never on the engine
or the number of workers, so every engine writes byte-identical output.
``polytok.corpus.verify`` (``polytok verify-corpus``) checks an output folder.

Documents are tokenized whole: a tokenizer file's truncation and padding (a
``tokenizer.json`` may cut every encoding to ``max_length``) are left out unless
``truncation=True`` (``--truncation``) applies them; the manifest's
``settings.truncation`` records which (``none`` when the tokenizer has neither).
A run that fails before its first shard is listed leaves nothing behind that
would stop it being run again (`Output.abandon`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import PolytokError
from .manifest import header, plan, tokenizer_identity
from .output import Output
from .readers import pyarrow_parquet
from .shards import Settings
from .verify import verify as verify

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["tokenize", "verify", "DEFAULT_SHARD_BYTES"]

DEFAULT_SHARD_BYTES = 16 << 20


def tokenize(model: str | Tokenizer, inputs: Sequence[str], out: str, *, field: str = "text",
             column: str = "text", input_format: str = "auto", out_format: str = "bin",
             shard_bytes: int = DEFAULT_SHARD_BYTES, add_special: bool = True, special: str | None = None,
             append_eos: int | str | None = None, on_error: str = "skip", resume: bool = False,
             engine: str = "local", workers: int | None = None, ray_address: str | None = None,
             progress: Callable[[int, int, int], None] | None = None, model_name: str | None = None,
             truncation: bool = False, **load_options: Any) -> dict[str, Any]:
    """Tokenize `inputs` into shards and a ``manifest.json`` in the folder `out`.

    Args:
        model: a tokenizer, or what `polytok.load` takes (with `load_options`).
        inputs: text (one document per line), JSONL or Parquet files, in order.
        out: the output folder; it must hold no corpus yet, unless `resume`.
        field: the JSONL field holding the document.
        column: the Parquet column holding the document.
        input_format: ``auto`` (from the suffix), ``text``, ``jsonl`` or ``parquet``.
        out_format: ``bin`` (``.bin`` + ``.idx``) or ``parquet`` (column ``ids``).
        shard_bytes: input bytes per shard (Parquet: rows of about that much data).
        add_special: as for `Tokenizer.encode`.
        special: ``parse`` or ``text``, as for `Tokenizer.encode`; None is the format's default.
        append_eos: an id, or a token, appended after each document; ``eos`` is the
            tokenizer's end-of-sequence token.
        on_error: ``skip`` bad records (listing them in the manifest) or ``fail`` on the first.
        resume: continue the run that wrote `out`, keeping its complete shards.
        engine: ``local`` (a process pool) or ``ray`` (Ray Data actors).
        workers: processes or actors; None is every core of this machine (local), or
            of the Ray cluster (ray).
        ray_address: the Ray cluster to join (else ``RAY_ADDRESS``, else a local instance).
        progress: called with (documents, tokens, input bytes) as shards are listed.
        model_name: how the manifest names the tokenizer when `model` is a Tokenizer.
        truncation: apply the tokenizer's truncation and padding, as `Tokenizer.encode`
            does; by default (False) documents are tokenized whole, as HF's
            ``encode`` after ``no_truncation()`` and ``no_padding()``.

    Returns:
        The manifest.

    Raises:
        FormatError: an unreadable input or manifest, a bad record with ``on_error="fail"``,
            or `out` already holding a corpus without `resume`.
    """
    from .. import load
    from ..tokenizer import Tokenizer
    from ..truncation import left_out, whole_documents

    tok = model if isinstance(model, Tokenizer) else load(model, **load_options)
    name = model_name or (model if isinstance(model, str) else tok.facts.source)
    applied = "none" if left_out(tok) is None else "applied" if truncation else "ignored"
    settings = _settings(tok, add_special=add_special, special=special, append_eos=append_eos,
                         out_format=out_format, shard_bytes=shard_bytes, field=field, column=column,
                         input_format=input_format, on_error=on_error, truncation=applied)
    if engine not in ("local", "ray"):
        raise PolytokError(f"unknown engine {engine!r} (local, ray)")
    if workers is not None and workers < 1:
        raise PolytokError(f"workers must be at least 1, not {workers}")
    records, splits = plan(list(inputs), settings)
    if out_format == "parquet":
        pyarrow_parquet()  # refused now, not after the folder is made
    tok = tok if truncation else whole_documents(tok)
    output = Output(out, header(tokenizer_identity(name, tok), settings, records), splits, resume)
    try:
        for result in _engine(engine, tok, splits[output.next_index:], settings, workers, ray_address):
            output.add(result, progress)
        return output.finish()
    except BaseException:
        output.abandon()
        raise


def _engine(engine: str, tok: Tokenizer, splits: list[Any], settings: Settings, workers: int | None,
            ray_address: str | None) -> Iterator[Any]:
    if not splits:
        return iter(())
    if engine == "local":
        from .. import parallel
        from .local import run_local

        return run_local(tok, splits, settings, workers or parallel.available_workers())
    if engine == "ray":
        from .ray_engine import run_ray

        return run_ray(tok, splits, settings, workers, ray_address)
    raise PolytokError(f"unknown engine {engine!r} (local, ray)")


def _choice(name: str, value: Any, choices: tuple[Any, ...]) -> None:
    if value not in choices:
        raise PolytokError(f"{name} must be one of {', '.join(map(str, choices))}, not {value!r}")


def _settings(tok: Tokenizer, *, append_eos: int | str | None, special: str | None, out_format: str,
              shard_bytes: int, input_format: str, on_error: str, **rest: Any) -> Settings:
    _choice("special", special, (None, "parse", "text"))
    _choice("out_format", out_format, ("bin", "parquet"))
    _choice("input_format", input_format, ("auto", "text", "jsonl", "parquet"))
    _choice("on_error", on_error, ("skip", "fail"))
    if shard_bytes < 1:
        raise PolytokError(f"shard_bytes must be at least 1, not {shard_bytes}")
    eos = _eos_id(tok, append_eos)
    top = max(tok.n_vocab - 1, eos or 0)
    return Settings(special=str(special or tok.default_special), append_eos=eos,
                    dtype="uint16" if top < 1 << 16 else "uint32", out_format=out_format,
                    shard_bytes=shard_bytes, input_format=input_format, on_error=on_error, **rest)


def _eos_id(tok: Tokenizer, append_eos: int | str | None) -> int | None:
    """The separator id: given, a token's id, or ``eos``: the tokenizer's eos (or its one end-of-generation id)."""
    if append_eos is None or isinstance(append_eos, int):
        found = append_eos
    elif append_eos == "eos":
        found = tok.special_ids.get("eos")
        if found is None and len(tok.eog_ids) == 1:
            found = next(iter(tok.eog_ids))
        if found is None:
            raise PolytokError("this tokenizer names no eos token: give the separator's id or token to append")
    elif append_eos.isdigit():
        found = int(append_eos)
    else:
        found = tok.token_to_id(append_eos)
        if found is None:
            raise PolytokError(f"no token {append_eos!r} in the vocabulary to append")
    if found is not None and tok.id_to_token(found) is None:
        raise PolytokError(f"id {found} to append is not in the vocabulary")
    return found
