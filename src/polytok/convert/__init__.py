"""Writing other formats: `convert` (``polytok convert``) picks the writer of a direction
(`directions`) and proves what it wrote tokenizes as the source (`proof`, `texts`); a tokenizer
folder to a GGUF vocabulary (`converter`), llama.cpp's converter families (`families`), the
vocabulary rules (`gguf_vocab`, `gguf_special_vocab`), the GGUF writer (`gguf_writer`) and the
read-back check every GGUF conversion ends with (`check`).

The names below are imported on first use (the converter imports more than ``import polytok`` needs).
"""

from typing import Any

_EXPORTS = {"to_gguf": "converter", "ConversionReport": "converter", "metadata_digests": "converter",
            "ARCHITECTURES": "converter", "convert": "proof", "ConvertResult": "proof",
            "ConversionProofError": "proof", "Written": "outcome", "ConversionRefused": "outcome"}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
