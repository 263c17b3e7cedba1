"""Every post-processor inherits `PostProcessorBase` (polytok/post_processors/base.py).

Its defaults, ``process`` and ``process_ids`` built from ``process_encodings`` and
``process_id_lists``, are what ByteLevel, RobertaProcessing and Sequence run (and
``process`` of all five): `_data.check` holds both to HF tokenizers 0.23.3 live in
test_byte_level.py, test_roberta.py and test_sequence.py, pairs included.
"""

from __future__ import annotations

from polytok.post_processors import REGISTRY
from polytok.post_processors.base import PostProcessorBase


def test_every_post_processor_inherits_the_base():
    for cls in REGISTRY.values():
        assert issubclass(cls, PostProcessorBase), cls.__name__
