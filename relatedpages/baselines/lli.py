"""Hou & Zhang's **Latent Linkage Information** (LLI; survey 002, §2.2 and §2.2.1).

On the same page source as Extended Co-citation (:func:`extended.page_source`):

* the **linkage matrix** ``A`` (m × n): rows the pages of BS, columns the parent groups
  ``P_u``; ``a_ij = 1`` when page i is a child of parent j (i ∈ S_j), else 0;
* the linkage matrix ``B`` (p × q): rows the pages of FS, columns the child groups ``C_u``;
  ``b_ij = 1`` when page i is a parent of child j (i ∈ A_j), else 0;
* the SVDs ``A = U Σ Vᵀ`` and ``B = W Ω Xᵀ``; for a threshold ε (0 < ε < 1) the rank ``k`` is
  chosen so that ``(σ_k − σ_{k+1}) / σ_k ≥ ε`` (:func:`choose_rank`);
* page i's coordinates are the i-th row ``R_i`` of ``U_k Σ_k``; u's are its own linkage row
  projected the same way, ``u' = u V_k Σ_k`` with ``u = (1, …, 1)`` (u is a child of every
  parent in ``P_u``; on the B side, a parent of every child in ``C_u``: ``u' = u X_l Ω_l``,
  the survey's ``g_i = Σ_j u_j x_ji ω_i``);
* the similarity of page i to u is the cosine of ``R_i`` and ``u'`` (``BSS_i``, ``FSS_i``);
  the relevant pages are ``BSR = {i ∈ BS : BSS_i ≥ δ}`` and ``FSR = {i ∈ FS : FSS_i ≥ δ}``,
  ``RP = BSR ∪ FSR``.

Readings chosen where the survey is vague:

* **k**: the *smallest* k (1 ≤ k ≤ r, r the numerical rank, ``σ_{r+1} = 0``) meeting the gap
  rule, i.e. the first large relative drop; k = r always qualifies, so k exists whenever
  the matrix is not zero.  A larger ε can only give a larger (or equal) k.
* **u'**: the survey (and Hou & Zhang) multiply u's projection by ``Σ_k`` once more, while a
  page's row ``R_i = a_i V_k`` is the plain projection of its linkage row.  We follow the
  paper (``scale_query=True``); ``scale_query=False`` uses ``u' = u V_k`` (u projected exactly
  like a page).
* A page whose coordinates are all zero (or a zero ``u'``) has similarity 0.  Cosines are
  rounded to 9 decimals before δ and ranking, so equal linkage patterns tie exactly.
* **δ and ε**: the survey gives no values; ``ε = 0.5`` (σ_{k+1} at most half of σ_k) and
  ``δ = 0.5`` (cosine) are our choices.  B, BF, F, FB as in :mod:`extended` (Dean &
  Henzinger's values).
* A page in both BS and FS scores the larger of its two cosines; answers are ranked by it,
  ties by page name, at most ``max_results`` (the survey's "top 10").

Computation (exact, not an approximation): rows (and columns) with the same linkage pattern
are merged, weighted by the square root of their multiplicity — this leaves the singular
values, the row directions of ``U Σ`` and ``1ᵀ V`` unchanged (A = Q_r A_w Q_cᵀ with Q_r, Q_c
having orthonormal columns) — and the weighted matrix is split into its connected blocks
(the spectrum of a block-diagonal matrix is the union of the blocks' spectra).  Small blocks
go to :func:`numpy.linalg.svd`, blocks wider than 64 in both directions to
:func:`numpy.linalg.eigh` of their smaller Gram matrix, so singular values below
``σ_1 · max(m, n) · √eps`` count as zero (:func:`rank_tolerance`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from relatedpages.baselines import Answer, Scored
from relatedpages.baselines.extended import (
    MAX_RESULTS_DEFAULT,
    IntArray,
    PageSourceParams,
    check_max_results,
    empty_reason,
    page_source,
    rank,
)
from relatedpages.store.linkgraph import LinkGraph

FloatArray = npt.NDArray[np.float64]

#: ε: relative singular-value gap choosing the rank k (survey §2.2.1; value: our choice).
EPSILON_DEFAULT = 0.5
#: δ: cosine selection threshold of BSR and FSR (survey §2.2.1; value: our choice).
LLI_DELTA_DEFAULT = 0.5
#: Coordinates below σ_1 times this are round-off, read as 0.
NOISE_RATIO = 1e-10
#: Decimals of the cosines (exact ties between equal linkage patterns).
COSINE_DIGITS = 9


@dataclass(frozen=True)
class LLIParams(PageSourceParams):
    """Page source (B, BF, F, FB), gap threshold ε, cosine threshold δ, answer length."""

    epsilon: float = EPSILON_DEFAULT
    delta: float = LLI_DELTA_DEFAULT
    scale_query: bool = True
    max_results: int | None = MAX_RESULTS_DEFAULT

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("epsilon", "delta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if not 0.0 < self.epsilon < 1.0:
            raise ValueError(f"epsilon must be in (0, 1), got {self.epsilon!r}")
        if not -1.0 <= self.delta <= 1.0:
            raise ValueError(f"delta must be a cosine in [-1, 1], got {self.delta!r}")
        if not isinstance(self.scale_query, bool):
            raise ValueError("scale_query must be a bool")
        check_max_results(self.max_results)


def rank_tolerance(largest: float, shape: tuple[int, int]) -> float:
    """Singular values at most this are zero: σ_1 · max(m, n) · √eps.

    √eps rather than numpy's eps because large components are decomposed through their
    Gram matrix (eigenvalues = σ²), which is accurate to about σ_1 · √eps only.
    """
    return largest * max(shape) * float(np.sqrt(np.finfo(np.float64).eps))


def choose_rank(singular_values: FloatArray, epsilon: float, rank_r: int | None = None) -> int:
    """The smallest k with ``(σ_k − σ_{k+1}) / σ_k ≥ ε`` (σ non-increasing; ``σ_{r+1} = 0``).

    ``rank_r`` is the numerical rank (default: the count of positive values); 0 → k = 0.

    >>> import numpy as np
    >>> s = np.array([5.0, 4.0, 1.0, 0.5])
    >>> choose_rank(s, 0.1), choose_rank(s, 0.5), choose_rank(s, 0.9)
    (1, 2, 4)
    """
    r = int(np.count_nonzero(singular_values > 0)) if rank_r is None else rank_r
    for k in range(1, r + 1):
        following = float(singular_values[k]) if k < r else 0.0
        current = float(singular_values[k - 1])
        if (current - following) / current >= epsilon:
            return k
    return r


@dataclass(frozen=True)
class LatentSide:
    """One side's result: the pages (rows), their cosines with u, and the k chosen."""

    pages: IntArray
    cosines: FloatArray
    k: int
    singular_values: FloatArray


def _patterns(keys: npt.NDArray[np.int64], values: npt.NDArray[np.int64]) -> tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int64], list[tuple[int, ...]]
]:
    """Group sorted (key, value) pairs: distinct keys, their pattern number, the patterns."""
    distinct, starts = np.unique(keys, return_index=True)
    ends = np.append(starts[1:], len(keys))
    index: dict[tuple[int, ...], int] = {}
    pattern_of = np.empty(len(distinct), dtype=np.int64)
    value_list = values.tolist()
    for i, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
        pattern = tuple(value_list[start:end])
        pattern_of[i] = index.setdefault(pattern, len(index))
    return distinct, pattern_of, list(index)


def _components(rows: npt.NDArray[np.int64], cols: npt.NDArray[np.int64], n_cols: int) -> npt.NDArray[np.int64]:
    """Connected component (smallest column number) of each column of a bipartite graph."""
    label = np.arange(n_cols, dtype=np.int64)
    n_rows = int(rows.max()) + 1
    while True:
        row_label = np.full(n_rows, n_cols, dtype=np.int64)
        np.minimum.at(row_label, rows, label[cols])
        new_label = label.copy()
        np.minimum.at(new_label, cols, row_label[rows])
        new_label = new_label[new_label]  # pointer jumping: fewer rounds on long chains
        if np.array_equal(new_label, label):
            return label
        label = new_label


@dataclass(frozen=True)
class _Triplets:
    """Singular triplets of one block of the (block-diagonal) weighted linkage matrix."""

    rows: npt.NDArray[np.int64]  # the block's row-pattern numbers
    sigma: FloatArray
    left: FloatArray  # rows × len(sigma)
    query: FloatArray  # 1ᵀ V restricted to the block (column weights applied), per σ


def _decompose(block: FloatArray, col_weight: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(σ descending, U, 1ᵀV) of one dense block; Gram matrix + eigh when it is large."""
    m, n = block.shape
    if min(m, n) <= 64:
        left, sigma, right_t = np.linalg.svd(block, full_matrices=False)
        return sigma, left, right_t @ col_weight
    if m <= n:
        values, vectors = np.linalg.eigh(block @ block.T)
        values, left = values[::-1], vectors[:, ::-1]
        sigma = np.sqrt(np.clip(values, 0.0, None))
        safe = np.where(sigma > 0, sigma, 1.0)
        query = (col_weight @ block.T @ left) / safe  # v_j = Aᵀu_j / σ_j
        return sigma, left, np.where(sigma > 0, query, 0.0)
    values, vectors = np.linalg.eigh(block.T @ block)
    values, right = values[::-1], vectors[:, ::-1]
    sigma = np.sqrt(np.clip(values, 0.0, None))
    safe = np.where(sigma > 0, sigma, 1.0)
    left = np.where(sigma > 0, (block @ right) / safe, 0.0)  # u_j = A v_j / σ_j
    return sigma, left, np.where(sigma > 0, col_weight @ right, 0.0)


def latent_similarity(sets: tuple[IntArray, ...], epsilon: float, *, scale_query: bool = True) -> LatentSide:
    """Cosines of each page in ``∪ sets`` with u in LLI's reduced space (module docstring).

    ``sets[j]`` are the pages linked with column j of the linkage matrix (``S_j`` or ``A_j``);
    u is linked with every column.
    """
    columns = len(sets)
    sizes = [len(s) for s in sets]
    if not columns or not sum(sizes):
        return LatentSide(np.empty(0, np.int32), np.empty(0), 0, np.empty(0))
    pages = np.concatenate(sets).astype(np.int64)
    cols = np.repeat(np.arange(columns, dtype=np.int64), sizes)
    order = np.lexsort((cols, pages))
    pages, cols = pages[order], cols[order]
    # Rows: pages with the same set of columns share one weighted row.
    row_pages, row_pattern, row_patterns = _patterns(pages, cols)
    row_count = np.bincount(row_pattern, minlength=len(row_patterns))
    # Columns: over the distinct rows, columns with the same set of rows share one column.
    # Columns with no page at all are zero columns: they change neither Σ nor 1ᵀV.
    pattern_rows = np.repeat(np.arange(len(row_patterns), dtype=np.int64), [len(p) for p in row_patterns])
    pattern_cols = np.fromiter((c for p in row_patterns for c in p), dtype=np.int64, count=len(pattern_rows))
    order = np.lexsort((pattern_rows, pattern_cols))
    _, col_pattern, col_patterns = _patterns(pattern_cols[order], pattern_rows[order])
    col_count = np.bincount(col_pattern, minlength=len(col_patterns)).astype(np.float64)
    # The weighted matrix, as (row, column, value) entries, split into connected blocks.
    entry_cols = np.repeat(np.arange(len(col_patterns), dtype=np.int64), [len(p) for p in col_patterns])
    entry_rows = np.fromiter((r for p in col_patterns for r in p), dtype=np.int64, count=len(entry_cols))
    row_weight = np.sqrt(row_count.astype(np.float64))
    col_weight = np.sqrt(col_count)
    component = _components(entry_rows, entry_cols, len(col_patterns))
    blocks: list[_Triplets] = []
    col_order = np.argsort(component, kind="stable")
    col_bounds = np.flatnonzero(np.diff(component[col_order])) + 1
    entry_order = np.argsort(component[entry_cols], kind="stable")
    entry_bounds = np.flatnonzero(np.diff(component[entry_cols][entry_order])) + 1
    for block_cols, entries in zip(np.split(col_order, col_bounds), np.split(entry_order, entry_bounds)):
        # block_cols ascending (stable sort of ascending column numbers)
        block_rows, local_rows = np.unique(entry_rows[entries], return_inverse=True)
        local_cols = np.searchsorted(block_cols, entry_cols[entries])
        dense = np.zeros((len(block_rows), len(block_cols)), dtype=np.float64)
        dense[local_rows, local_cols] = 1.0
        dense *= row_weight[block_rows][:, None] * col_weight[block_cols][None, :]
        sigma, left, query = _decompose(dense, col_weight[block_cols])
        blocks.append(_Triplets(block_rows, sigma, left, query))
    # The spectrum of a block-diagonal matrix is the union of its blocks' spectra.
    block_of = np.concatenate([np.full(len(b.sigma), i) for i, b in enumerate(blocks)])
    index_in = np.concatenate([np.arange(len(b.sigma)) for b in blocks])
    sigma_all = np.concatenate([b.sigma for b in blocks])
    order = np.lexsort((index_in, block_of, -sigma_all))
    sigma_all, block_of, index_in = sigma_all[order], block_of[order], index_in[order]
    tolerance = rank_tolerance(float(sigma_all[0]), (int(row_count.sum()), columns))
    k = choose_rank(sigma_all, epsilon, int(np.count_nonzero(sigma_all > tolerance)))
    # Coordinates of each row pattern (row direction of U_k Σ_k) and u', over the k dims.
    coordinates = np.zeros((len(row_patterns), k), dtype=np.float64)
    query = np.zeros(k, dtype=np.float64)
    for dim, (b, j) in enumerate(zip(block_of[:k].tolist(), index_in[:k].tolist())):
        block = blocks[b]
        coordinates[block.rows, dim] = block.left[:, j] * block.sigma[j]
        query[dim] = block.query[j] * (block.sigma[j] if scale_query else 1.0)
    # Round-off (a page outside a singular vector's support gets ~1e-17, not 0) must not
    # turn into a cosine of ±1: coordinates below σ_1 · 1e-10 are zero.
    coordinates[np.abs(coordinates) < float(sigma_all[0]) * NOISE_RATIO] = 0.0
    norms = np.linalg.norm(coordinates, axis=1) * float(np.linalg.norm(query))
    dots = coordinates @ query
    cosine = np.zeros(len(row_patterns), dtype=np.float64)
    np.divide(dots, norms, out=cosine, where=norms > 0)
    cosine = np.round(cosine, COSINE_DIGITS)
    return LatentSide(row_pages.astype(np.int32), cosine[row_pattern], k, sigma_all)


def lli(graph: LinkGraph, node: int, params: LLIParams = LLIParams()) -> Answer:
    """Pages whose cosine with ``node`` in the reduced linkage space is ≥ δ (BSR ∪ FSR)."""
    source = page_source(graph, node, params)
    scores: dict[int, float] = {}
    for sets in (source.back_sets, source.forward_sets):
        side = latent_similarity(sets, params.epsilon, scale_query=params.scale_query)
        for page, cosine in zip(side.pages.tolist(), side.cosines.tolist()):
            if cosine >= params.delta and cosine > scores.get(page, -np.inf):
                scores[page] = cosine
    if not scores:
        return Answer(reason=empty_reason(graph, source))
    return Answer(tuple(Scored(s.node, s.score) for s in rank(graph, scores, params.max_results)))
