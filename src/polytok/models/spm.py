"""SPM model: spm = SentencePiece-style score-merge BPE, llama.cpp's ``LLAMA_VOCAB_TYPE_SPM`` (GGUF model ``llama``).

Stage: model. No ``tokenizer.json`` type (HF spells SentencePiece BPE as its rank-merge
``BPE``); the GGUF reader builds it from the tokens and scores of the vocabulary.

Reproduces llama.cpp (llama-cpp-python 0.3.36 sdist, vendor/llama.cpp/src/llama-vocab.cpp):
``llm_tokenizer_spm_session::tokenize`` / ``try_add_bigram`` / ``resegment``
(lines 97-239) and ``llama_vocab::byte_to_token`` (SPM case, line 4001);
reference/llama_vocab.md §6.1.

* Symbols start as the characters of the piece (llama.cpp splits its bytes by
  UTF-8 lead-byte length, which is the same thing for the valid UTF-8 a ``str``
  encodes to).
* Every adjacent pair whose concatenation is a vocabulary entry, *whatever its
  type* (control, user_defined, byte and unused included), is queued with that
  entry's score. The queue pops the highest score first; ties go to the
  leftmost pair. A popped pair is stale (skipped) if either side was emptied or
  their combined length no longer equals the length queued. A merge appends the
  right symbol to the left one and queues the new neighbour pairs.
* No merge table is read; scores alone decide, so a unigram vocabulary stored
  as ``llama`` is still merged this way.
* Output: each surviving symbol that is an entry gives its id. Any other symbol
  is a single character (merged symbols always are entries, so llama.cpp's
  ``rev_merge`` resegmentation never fires and is not reproduced), spelt byte by
  byte as ``<0xHH>`` (upper-case hex), else as the one-byte string itself; if
  neither exists llama.cpp throws ``std::out_of_range``, here `EncodeError`.
  SPM never emits the unknown token.
* A piece listed twice: lookups give its *last* id and that id's score, as
  llama.cpp's ``token_to_id`` map would, though llama.cpp itself refuses such a
  vocabulary at load (llama-vocab.cpp:2544, ``id_to_token.size() == token_to_id.size()``).

The whitespace handling of llama.cpp's SPM driver (``impl::tokenize``,
lines 3433-3483: a ``" "`` before every raw fragment when ``add_space_prefix``,
then every ``" "`` replaced by ``"▁"``) is not part of this model: it is the
normalizers ``Prepend(" ")`` (per fragment, as HF runs normalizers between
added tokens) followed by ``Replace(" ", "▁")``.

Performance: the queue is a ``heapq`` of ``(-score, left, right, length)``
tuples over parallel lists (no per-symbol objects); results of short pieces are
cached.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from typing import Sequence

from ..errors import EncodeError, FormatError
from ._cache import WordCache
from ._vocab import PieceListLookup


class SPM(PieceListLookup):
    """Score-merge BPE over characters, as llama.cpp's ``llm_tokenizer_spm_session``.

    Args:
        vocab: ``(piece, score)`` pairs; a piece's id is its index. Scores are
            compared as given (GGUF stores them as float32, exact in a Python float).

    Raises:
        FormatError: `vocab` is empty.
    """

    def __init__(self, vocab: Sequence[tuple[str, float]]) -> None:
        if not vocab:
            raise FormatError("the SPM vocabulary is empty", key="tokens")
        self._pieces = [piece for piece, _ in vocab]
        self._ids = {piece: index for index, piece in enumerate(self._pieces)}
        scores = [float(score) for _, score in vocab]
        # The score each piece merges with: the one of the id its text looks up.
        self._merge_score = {piece: scores[index] for piece, index in self._ids.items()}
        self._byte_ids: list[int | None] = []
        for byte in range(256):
            found = self._ids.get(f"<0x{byte:02X}>")
            if found is None and byte < 0x80:
                found = self._ids.get(chr(byte) if byte else "")
            self._byte_ids.append(found)
        self._cache = WordCache()

    # -- the Model protocol -------------------------------------------------

    def tokenize(self, piece: str) -> list[int]:
        return self._cache.ids(piece, self.tokenize_spans)

    def tokenize_spans(self, piece: str) -> list[tuple[int, int, int]]:
        tokens: list[tuple[int, int, int]] = []
        ids = self._ids
        for start, end in self._merge(piece):
            text = piece[start:end]
            found = ids.get(text)
            if found is not None:
                tokens.append((found, start, end))
                continue
            for byte in text.encode("utf-8", "surrogatepass"):
                byte_id = self._byte_ids[byte]
                if byte_id is None:
                    raise EncodeError(f"SPM: no token for byte 0x{byte:02X} of {text!r}"
                                      f" (neither '<0x{byte:02X}>' nor the byte itself is in the vocabulary)")
                tokens.append((byte_id, start, end))
        return tokens

    def token_value(self, id: int, piece: str, start: int, end: int) -> str:
        return self._pieces[id]


    # -- the merge loop -------------------------------------------------------

    def _merge(self, piece: str) -> list[tuple[int, int]]:
        """``(start, end)`` character spans of the symbols left when no queued pair applies.

        Symbol ``i`` starts at character ``i``; ``length[i]`` is 0 once merged
        away; ``nxt``/``prev`` link the live symbols (-1 at the ends).
        """
        size = len(piece)
        length = [1] * size
        nxt = list(range(1, size)) + [-1]
        prev = list(range(-1, size - 1))
        score_of = self._merge_score.get
        queue = []
        for left in range(size - 1):
            score = score_of(piece[left:left + 2])
            if score is not None:
                queue.append((-score, left, left + 1, 2))
        heapify(queue)
        while queue:
            _, left, right, joint = heappop(queue)
            if length[left] == 0 or length[right] == 0 or length[left] + length[right] != joint:
                continue
            length[left] = joint
            length[right] = 0
            after = nxt[left] = nxt[right]
            if after >= 0:
                prev[after] = left
            before = prev[left]
            if before >= 0:
                score = score_of(piece[before:left + joint])
                if score is not None:
                    heappush(queue, (-score, before, left, length[before] + joint))
            if after >= 0:
                score = score_of(piece[left:after + length[after]])
                if score is not None:
                    heappush(queue, (-score, left, after, joint + length[after]))
        spans = []
        index = 0 if size else -1
        while index >= 0:
            spans.append((index, index + length[index]))
            index = nxt[index]
        return spans
