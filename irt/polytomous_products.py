"""The two matrix products of the polytomous E-step, on the host or on a torch device.

With Y (P, C) the distinct response patterns as 0/1 indicators over the (item, score)
pairs, a cycle needs Y @ log P (each pattern's log-likelihood at every node, from the
(C, Q) table of log P_jk(θ_q)) and Yᵀ @ W (the expected count of every pair at every
node, from the patterns' weighted posteriors W (P, Q)). Everything else in a cycle works
on (C, Q) or (P, Q) arrays, which are small beside Y; these two products are where a
large pool's time goes.

A small pool keeps Y whole on the host, built once (``Patterns.onehot``). A large one,
and any pool on a device, holds only the patterns' scores (two bytes a cell) and works
through them a block of patterns at a time: a graded pool of 10,000 subjects × 30,000
five-category items would need 12 GB for Y whole. On a device the products run there in
float64, so the fit is the host's to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irt.design_blocks import rows_per_block
from irt.estimation.arrays import Array, as_float64, concat, stack, to_numpy, zeros
from irt.estimation.devices import HOST, Backend
from irt.polytomous_layout import Patterns
from irt.response_table import row_blocks
from irt.types import FloatArray, IntArray

__all__ = ["WHOLE_BYTES", "PatternProducts"]

#: Y is kept whole on the host up to this many bytes (as it always was for the pools of
#: human data this package was first fitted on); past it, it is built in blocks.
WHOLE_BYTES = 2**30


@dataclass(frozen=True)
class PatternProducts:
    """Y @ table and Yᵀ @ weights for the patterns of a pool, where ``backend`` says.

    ``whole`` is Y itself when it is kept on the host. Otherwise the patterns' ``scores``
    (P, J) (``MISSING`` where not answered) are held as the backend's integers, and each
    product is a sum over the scores k of the 0/1 matrix [y_pj = k] (P, J) times the
    items' rows for score k: a pass over the scores per k rather than a scatter into a
    (P, C) block, ``block_rows`` patterns at a time. ``pair_scores`` and ``pair_items``
    (C,) say which (score, item) each of the C columns is."""

    backend: Backend
    n_columns: int
    n_patterns: int
    block_rows: int
    whole: FloatArray | None = None
    scores: Array = None
    pair_scores: IntArray | None = None
    pair_items: IntArray | None = None

    @classmethod
    def of(
        cls, patterns: Patterns, backend: Backend = HOST, whole_bytes: int | None = None
    ) -> PatternProducts:
        """The products of ``patterns`` on ``backend``; on the host Y is kept whole when
        it takes at most ``whole_bytes`` (None: ``WHOLE_BYTES``)."""
        (n_patterns, n_items), n_columns = patterns.rows.shape, patterns.n_columns
        limit = WHOLE_BYTES if whole_bytes is None else whole_bytes
        if backend.torch_device is None and n_patterns * n_columns * 8 <= limit:
            return cls(backend, n_columns, n_patterns, n_patterns, whole=patterns.onehot)
        block_rows = rows_per_block(n_items, backend.block_bytes)
        scores: Array = patterns.rows
        if backend.torch_device is not None:
            import torch

            scores = torch.from_numpy(scores).to(backend.torch_device)
        pair_items = np.repeat(np.arange(n_items), np.diff(patterns.offsets, append=n_columns))
        pair_scores = np.arange(n_columns) - patterns.offsets[pair_items]
        return cls(
            backend, n_columns, n_patterns, block_rows, None, scores, pair_scores, pair_items
        )

    def log_likelihood(self, table: Array) -> FloatArray:
        """Y @ ``table``: each pattern's Σ_j log P_j(y_pj | θ_q) from the (C, Q) table
        of log P_jk(θ_q) on the backend, (P, Q) on the host."""
        if self.whole is not None:
            return np.asarray(self.whole @ table)
        by_score = self._by_score(table)  # (K, J, Q)
        buffer = self._buffer()
        parts = []
        for rows in row_blocks(self.n_patterns, self.block_rows):
            scores = self.scores[rows]
            part = _indicator(scores, 0, buffer) @ by_score[0]
            for k in range(1, by_score.shape[0]):
                part += _indicator(scores, k, buffer) @ by_score[k]
            parts.append(part)
        return to_numpy(concat(parts, axis=0))

    def counts(self, weights: FloatArray) -> Array:
        """Yᵀ @ ``weights``: Σ_p w_pq over the patterns with each (item, score) pair,
        (C, Q) on the backend, from the patterns' weights (P, Q) on the host."""
        if self.whole is not None:
            return np.asarray(self.whole.T @ weights)
        assert self.pair_scores is not None and self.pair_items is not None
        here = self.backend.asarray(np.ascontiguousarray(weights))
        by_score = [
            zeros((self.scores.shape[1], here.shape[1]), here) for _ in range(self.n_scores)
        ]
        buffer = self._buffer()
        for rows in row_blocks(self.n_patterns, self.block_rows):
            scores = self.scores[rows]
            for k in range(self.n_scores):
                by_score[k] += _indicator(scores, k, buffer).T @ here[rows]
        return stack(by_score)[self.pair_scores, self.pair_items]

    @property
    def n_scores(self) -> int:
        """K: the most categories of any item (blocked products only)."""
        assert self.pair_scores is not None
        return int(self.pair_scores.max()) + 1

    def _buffer(self) -> FloatArray | None:
        """On the host, one block's floats for every [y_pj = k] of a product in turn."""
        if self.backend.torch_device is not None:
            return None
        return np.empty((min(self.block_rows, self.n_patterns), self.scores.shape[1]))

    def _by_score(self, table: Array) -> Array:
        """The (C, Q) table as (K, J, Q): row j of slice k is item j's score k (zero
        where the item has no such score)."""
        assert self.pair_scores is not None and self.pair_items is not None
        out = zeros((self.n_scores, self.scores.shape[1], table.shape[1]), table)
        out[self.pair_scores, self.pair_items] = table
        return out


def _indicator(scores: Array, k: int, buffer: FloatArray | None) -> Array:
    """[scores == k] as floats (B, J): on the host written into ``buffer``, so that a
    product makes no fresh B x J array per score."""
    if buffer is None:
        return as_float64(scores == k)
    out = buffer[: scores.shape[0]]
    np.equal(scores, k, out=out)
    return out
