"""A ranker learned from the development lists: a linear ListNet model of the
evidence the default score reads, fitted on some pages and applied to others (what
``scripts/score_variants.py``'s "learned" rows measure).

Issue 43 allows either a principled score or a small model learned on the development split.
The default preset's score is the principled one (docs/reference/parameters.md, "One score");
these functions ask whether a model of the same evidence ranks better.  The model is linear,
w · x, fitted as ListNet fits it (Cao et al. 2007, top-one probabilities): each page's
softmax over its candidates against its grades (2 same section, 1 same list, 0 neither), so
it learns what puts the best first, the measure the score loses on.
:func:`cross_fit` fits it on one fold of the pages and applies it to the other, and the other
way round, so no page is ranked by a model that saw its grades.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from relatedpages.scoring import similarity as sim
from relatedpages.scoring.reference import CandidateFeatures

#: The L2 penalty on the standardised weights, and the most Newton steps (damped).
L2 = 1.0
NEWTON_STEPS = 25


def chain_features(candidate: CandidateFeatures) -> list[float]:
    """What the chain reads of the candidate (:class:`CandidateFeatures`), as numbers: the
    score, its citing sites, Σ, largest and mean DS_d, Σ ln(1 + the sites' links), Σ and
    largest description overlap, ln(1 + in_p), ln(1 + popularity).

    >>> c = CandidateFeatures("u", 2.5, {"a": 500_000, "b": 1_000_000}, {"a": 9, "b": 2},
    ...                       {"a": 0}, 3, 7, [])
    >>> [round(x, 3) for x in chain_features(c)]
    [2.5, 2.0, 1.5, 1.0, 0.75, 3.401, 0.0, 0.0, 1.386, 2.079]
    """
    ds = [value / sim.SCALE for value in candidate.ds.values()]
    described = [value / sim.SCALE for value in candidate.context.values()]
    return [candidate.score, float(len(ds)), sum(ds), max(ds, default=0.0),
            sum(ds) / len(ds) if ds else 0.0,
            sum(math.log1p(links) for links in candidate.links.values()),
            sum(described), max(described, default=0.0),
            math.log1p(candidate.in_p), math.log1p(candidate.popularity)]


def fit_listwise(pages: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The weights of a linear ListNet model (top-one probabilities; L2 ``L2``; Newton's
    method) over standardised features: each page's softmax of w · x over its candidates is
    fitted to its grades' (2^grade − 1, normalised; pages with no graded candidate teach
    nothing).  ``pages``: each page's (features, grades) of its candidates.  The weights
    returned apply to the raw features (the standardisation folded in).

    >>> x = np.array([[3.0, 0.1], [2.0, 0.9], [1.0, 0.5]])
    >>> w = fit_listwise([(x, np.array([2, 1, 0]))] * 5)
    >>> [int(i) for i in np.argsort(-(x @ w))]  # the first feature orders the grades
    [0, 1, 2]
    """
    everything = np.vstack([features for features, _grades in pages])
    centre, scale = everything.mean(axis=0), everything.std(axis=0)
    scale[scale == 0] = 1.0
    lists = [((features - centre) / scale, gains / gains.sum())
             for features, grades in pages
             if (gains := 2.0 ** np.asarray(grades, dtype=float) - 1.0).sum() > 0]

    def loss(w: np.ndarray) -> float:
        total = 0.5 * L2 * float(w @ w)
        for z, wanted in lists:
            s = z @ w
            total += float(s.max() + np.log(np.exp(s - s.max()).sum()) - wanted @ s)
        return total

    w = np.zeros(everything.shape[1])
    current = loss(w)
    for _ in range(NEWTON_STEPS):
        gradient, hessian = L2 * w, L2 * np.eye(len(w))
        for z, wanted in lists:
            s = z @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            gradient += z.T @ (p - wanted)
            mean = z.T @ p
            hessian += (z * p[:, None]).T @ z - np.outer(mean, mean)
        step = np.linalg.solve(hessian, gradient)
        for _halving in range(30):  # a damped step: the loss must fall (it is convex)
            trial = loss(w - step)
            if trial <= current:
                break
            step = step / 2
        else:
            break
        converged = current - trial < 1e-9 * max(1.0, abs(current))
        w, current = w - step, trial
        if converged:
            break
    return w / scale


def cross_fit(pages: Mapping[str, tuple[np.ndarray, np.ndarray]],
              folds: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Each page's model scores of its candidates (rows of its features), from the model
    fitted on the pages of the other fold (``folds``: 0 or 1 a page).

    A fold's pages are ranked by what the other fold's grades teach, not their own:

    >>> x = np.array([[3.0, 0.1], [2.0, 0.9], [1.0, 0.5]])
    >>> pages = {"a": (x, np.array([2, 1, 0])), "b": (x, np.array([0, 1, 2]))}
    >>> scores = cross_fit(pages, {"a": 0, "b": 1})
    >>> [int(i) for i in np.argsort(-scores["a"])], [int(i) for i in np.argsort(-scores["b"])]
    ([2, 1, 0], [0, 1, 2])
    """
    scores: dict[str, np.ndarray] = {}
    for fold in (0, 1):
        weights = fit_listwise([rows for page, rows in pages.items() if folds[page] != fold])
        for page, (features, _grades) in pages.items():
            if folds[page] == fold:
                scores[page] = features @ weights
    return scores
