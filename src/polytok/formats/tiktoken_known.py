"""The tiktoken rank files polytok recognises by sha256: their split pattern and special tokens.

Data only (read by `formats.tiktoken`). A rank file holds neither its pattern
nor its special tokens: the code that loads it does. Sources:

- OpenAI's encodings: tiktoken 0.14.0, ``tiktoken_ext/openai_public.py``
  (``r50k_base``, ``p50k_base``, ``cl100k_base``, ``o200k_base``: the
  ``expected_hash`` of each ``load_tiktoken_bpe`` call, ``pat_str`` and
  ``special_tokens``). ``gpt2`` reads the same ranks as ``r50k_base`` (from its
  data-gym files; whisper ships them as ``gpt2.tiktoken``), with the same pattern
  and special token. ``p50k_edit`` and ``o200k_harmony`` reuse the
  ``p50k_base`` / ``o200k_base`` files with more special tokens: a file cannot
  tell them apart, so the base encoding is assumed; pass ``special_tokens=`` for
  the others.
- OpenAI Whisper: openai-whisper 20250625 (PyPI sdist), ``whisper/tokenizer.py``
  (``get_encoding("multilingual")``: its ``pat_str``, and the special tokens
  numbered from the number of ranks, with the default ``num_languages=99``; the
  sha256 is of ``whisper/assets/multilingual.tiktoken`` in that sdist, whose last
  rank is a token of no bytes). large-v3 uses ``num_languages=100``, which adds
  ``<|yue|>`` and moves every later special up by one: a file cannot tell, so pass
  ``special_tokens=`` for it. Whisper's ``gpt2.tiktoken`` is ``r50k_base``'s file
  (above); Whisper gives it its own specials and pattern the same way.
- Meta's Llama 3 and Llama 4: llama-models 0.3.0 (PyPI wheel),
  ``llama_models/llama3/tokenizer.py`` and ``llama_models/llama4/tokenizer.py``
  (``Tokenizer.pat_str`` / ``O200K_PATTERN``, ``Tokenizer.__init__``: the named
  special tokens, padded with ``<|reserved_special_token_N|>`` up to
  ``num_reserved_special_tokens``, numbered from the number of ranks); the
  sha256 is of the ``tokenizer.model`` next to each in that wheel.

tests/formats/test_tiktoken_known.py checks every row against those sources,
run live (tiktoken's constructors; llama-models' ``Tokenizer``; whisper's ``get_encoding``).
"""

from __future__ import annotations

from typing import NamedTuple

from ..regex.split_patterns import CL100K, GPT2, LLAMA3, O200K, R50K

__all__ = ["KnownRanks", "KNOWN_RANKS"]


class KnownRanks(NamedTuple):
    name: str
    pattern: str
    special_tokens: dict[str, int]
    bos: str | None = None  # the name of the begin-of-text special, where the loader declares one
    eos: str | None = None


# whisper/tokenizer.py LANGUAGES, in its order: the first 99 (get_encoding's default num_languages)
_WHISPER_LANGUAGES = [
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi",
    "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml",
    "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs",
    "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am",
    "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln",
    "ha", "ba", "jw", "su",
]
_ENDOFTEXT, _ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"


def _numbered(first_id: int, named: list[str], total: int, reserved: str, reserved_from: int) -> dict[str, int]:
    """`named`, then ``<|{reserved}_N|>`` from N = `reserved_from` up to `total` entries, ids from `first_id`."""
    texts = named + [f"<|{reserved}_{reserved_from + i}|>" for i in range(total - len(named))]
    return {text: first_id + i for i, text in enumerate(texts)}


_LLAMA3_NAMED = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                 "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
                 "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>",
                 "<|image|>"]


def _llama4_named() -> list[str]:
    def reserved(kind: str, count: int, start: int) -> list[str]:
        return [f"<|{kind}_reserved_special_token_{i}|>" for i in range(start, start + count)]

    text_post_train = ["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>",
                       *reserved("text_post_train", 6, 0), "<|python_start|>", "<|python_end|>",
                       "<|finetune_right_pad|>", *reserved("text_post_train", 61, 8)]
    vision = ["<|image_start|>", "<|image_end|>", *reserved("vision", 2, 0), "<|tile_x_separator|>",
              "<|tile_y_separator|>", *reserved("vision", 4, 2), "<|image|>", *reserved("vision", 1, 6),
              "<|patch|>", *reserved("vision", 1041, 7)]
    reasoning = [*reserved("reasoning", 8, 0), "<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    return basic + text_post_train + vision + reasoning


def _whisper_specials(first_id: int) -> dict[str, int]:
    """whisper's get_encoding: task and language tokens, then one per 0.02 s timestamp up to 30 s."""
    texts = ["<|endoftext|>", "<|startoftranscript|>", *(f"<|{code}|>" for code in _WHISPER_LANGUAGES),
             "<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>",
             "<|notimestamps|>", *(f"<|{step * 0.02:.2f}|>" for step in range(1501))]
    return {text: first_id + i for i, text in enumerate(texts)}


# sha256 of the rank file -> what its loader adds
KNOWN_RANKS: dict[str, KnownRanks] = {
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930":
        KnownRanks("r50k_base", R50K, {_ENDOFTEXT: 50256}),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069":
        KnownRanks("p50k_base", R50K, {_ENDOFTEXT: 50256}),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7":
        KnownRanks("cl100k_base", CL100K, {_ENDOFTEXT: 100257, "<|fim_prefix|>": 100258,
                                            "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                                            _ENDOFPROMPT: 100276}),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d":
        KnownRanks("o200k_base", O200K, {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018}),
    "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126":
        KnownRanks("whisper-multilingual", GPT2, _whisper_specials(50257),
                   bos="<|startoftranscript|>", eos="<|endoftext|>"),
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55":
        KnownRanks("llama3", LLAMA3, _numbered(128000, _LLAMA3_NAMED, 256, "reserved_special_token", 2),
                   bos="<|begin_of_text|>", eos="<|end_of_text|>"),
    "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed":
        KnownRanks("llama4", O200K, _numbered(200000, _llama4_named(), 2048, "reserved_special_token", 0),
                   bos="<|begin_of_text|>", eos="<|end_of_text|>"),
}
