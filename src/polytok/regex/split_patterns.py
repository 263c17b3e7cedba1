"""The split patterns of the well-known tokenizers, spelt as their sources spell them.

One home for each string: the pre-tokenizers and readers that build these splits
(`pre_tokenizers.byte_level`, `pre_tokenizers.split`, `formats.tiktoken_known`) and the
table of patterns with a compiled scanner (`regex.scanners`) all read them here.
"""

from __future__ import annotations

__all__ = ["GPT2", "GPT2_FACTORED", "R50K", "LLAMA3", "QWEN2", "CL100K", "O200K", "TEKKEN"]

# HF tokenizers byte_level.rs ``RE``; whisper's ``pat_str``
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
# polytok's ByteLevel spelling: the contractions share their apostrophe, which `regex` runs faster
# (bench/README.md). Same matches: the alternatives keep their order and nothing follows them, so
# the first one that matches at a position is still the match.
GPT2_FACTORED = r"'(?:s|t|re|ve|m|ll|d)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
# tiktoken r50k_base / p50k_base
R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
# Llama 3 (tokenizer.json and the tiktoken ranks), tekken v3
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# Qwen2 / Qwen2.5 / Qwen3 tokenizer.json
QWEN2 = LLAMA3.replace(r"\p{N}{1,3}", r"\p{N}", 1)
# tiktoken cl100k_base
CL100K = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$"""
          r"""|\s*[\r\n]|\s+(?!\S)|\s""")
# tiktoken o200k_base, GPT-4o tokenizer.json, Llama 4 ranks
O200K = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
# Mistral tekken (tekken.json "pattern"): o200k's word rules without the contractions, one digit a piece
TEKKEN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*""",
    r"""\p{N}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
