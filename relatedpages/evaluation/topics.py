"""Related-pages quality graded by topic on a generated web: the second ground truth.

The hub lists grade a result by the curator's section; here a generated web
(``relatedpages generate``, any size and seed) grades it by its *topic*: the sidecar
``<crawl>.topics.tsv`` gives every generated site's topic.  A category-graded graph
rewards other things than hub lists (popularity helps there and hurts here), so a default
that wins on only one of them is not done (issue 10).

Protocol:

1. The crawl is segmented as ``jobs.segment`` does (:func:`load_corpus_file`).
2. **Test pages**: pages of *content* sites (a topic other than ``hub`` and ``spam``), with
   no query string (the link filters send dynamic URLs to the site's home page: those are
   not keys of any list), linked from at least two pages of other sites.
3. **Rows**: block co-citation at its defaults (the default preset with its co-citation
   fallback, as ``relatedpages build``), block co-citation with the paper preset at its
   own T = 4 and at T = 0, traditional co-citation at its defaults (min-degree 2: the
   floor), the naive heading co-citation reference in its first and its strongest form
   (:mod:`relatedpages.evaluation.naive`), Marginalia's weighted site cosine, and the
   page-level methods of :mod:`relatedpages.baselines.methods` on a link graph of the same
   pages (as ``eval related`` builds it), at their defaults.
   With ``--engine chain`` the rows are the product as ``relatedpages build`` makes it (the
   real mrjob chains, any runner) and the floor (the co-citation job), read back from their
   outputs (:func:`evaluate_topic_outputs`): webs too large for the in-memory oracles.
4. **Grade** of a result: 1 if its site has the test page's topic, else 0 (hubs, spam and
   pages outside generated sites grade 0).  Measures: coverage, P@1, P@5 and P@15 with
   missing results counting 0 (over all test pages), and P@15 per topic (the paper's
   Fig. 11 shape: one bar group per topic).
"""
from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from segmenter.adjust import AdjustParams

from relatedpages.evaluation.related import (
    BASELINE_HOSTS_DEFAULT,
    BASELINES_DEFAULT,
    BLOCK,
    COCITATION,
    PAPER_BLOCK,
    RelatedDict,
    at_least,
    citing_pages,
    link_graph_of,
    load_corpus_file,
    run_baselines,
    with_fallback,
)
from relatedpages.evaluation.forked import Forked

#: Topics of the sidecar that are not content (their pages are not test pages).
NON_CONTENT = frozenset({"hub", "spam"})
TOP_K = 15


@dataclass(frozen=True)
class TopicScores:
    """One row: coverage and precision at 1, 5 and 15 (missing = 0), and P@15 per topic."""

    test_pages: int
    covered: int
    p1: float
    p5: float
    p15: float
    p15_by_topic: Mapping[str, float]

    @property
    def coverage(self) -> float:
        return self.covered / self.test_pages if self.test_pages else 0.0


@dataclass(frozen=True)
class TopicEvaluation:
    crawl: str
    pages: int
    test_pages: int
    scores: Mapping[str, TopicScores]
    seconds: float


def score_topics(related: RelatedDict, tests: Sequence[str], topic_of: Mapping[str, str],
                 k: int = TOP_K) -> TopicScores:
    """Precision by topic of one related dict on the test pages (``topic_of``: URL → topic).

    >>> topics = {"a": "x", "b": "x", "c": "y"}
    >>> s = score_topics({"a": [["b", 1], ["c", 1]], "c": []}, ["a", "c"], topics, k=2)
    >>> s.coverage, s.p1, s.p5, s.p15
    (0.5, 0.5, 0.1, 0.25)
    """
    covered = 0
    totals = [0.0, 0.0, 0.0]
    by_topic: defaultdict[str, list[float]] = defaultdict(list)
    for page in tests:
        entries = list(related.get(page, ()))[:k]
        covered += bool(entries)
        hits = [1.0 if topic_of.get(entry[0]) == topic_of[page] else 0.0 for entry in entries]
        for index, cut in enumerate((1, 5, k)):
            totals[index] += sum(hits[:cut]) / cut
        by_topic[topic_of[page]].append(sum(hits) / k)
    n = len(tests) or 1
    return TopicScores(len(tests), covered, totals[0] / n, totals[1] / n, totals[2] / n,
                       {topic: sum(v) / len(v) for topic, v in sorted(by_topic.items())})


@dataclass(frozen=True)
class TopicWeb:
    """A generated crawl, segmented, with its test pages and their topics (steps 1-2)."""

    corpus: Any  # relatedpages.evaluation.related.CorpusFile
    records: list[Mapping[str, Any]]  # segment records, URL order
    tests: list[str]
    topic_of: dict[str, str]  # cited URL -> its site's topic


def load_topic_web(crawl: str | Path, segmenting: AdjustParams | None = None) -> TopicWeb:
    """Segment ``crawl`` (``segmenting``'s adjusting; the defaults when None) and pick its
    test pages (module doc, steps 1-2)."""
    from relatedpages.corpus.generate import read_topics

    corpus = load_corpus_file(str(crawl), True, segmenting)
    records = [corpus.records[url] for url in sorted(corpus.records)]
    tests, topic_of = topic_tests(records, read_topics(crawl))
    return TopicWeb(corpus, records, tests, topic_of)


def topic_tests(records: Iterable[Mapping[str, Any]], site_topics: Mapping[str, str],
                ) -> tuple[list[str], dict[str, str]]:
    """The test pages of segment records read once (a stream will do), and the topic of
    every cited URL of a generated site (module doc, step 2)."""
    from filters.site import site_of

    cited = citing_pages(records)
    topic_of: dict[str, str] = {}
    for url in cited:
        site = site_of(url)
        if site is not None and site in site_topics:
            topic_of[url] = site_topics[site]
    tests = sorted(url for url, count in cited.items()
                   if count >= 2 and "?" not in url and topic_of.get(url) not in (None, *NON_CONTENT))
    return tests, topic_of


#: The rows of the chain engine: the product as ``relatedpages build`` makes it, and the floor.
CHAIN_FLOOR = f"{COCITATION} (min-degree 2)"


def evaluate_topic_outputs(crawl: str | Path, segment_records: Iterable[Mapping[str, Any]],
                           block_db: str | Path, floor: Iterable[tuple[str, Any]],
                           pages: int, seconds: float, k: int = TOP_K) -> TopicEvaluation:
    """The topic evaluation from what the real chains wrote (``eval topics --engine
    chain``): the test pages from the segment job's records (streamed once), block
    co-citation at its defaults from the database ``relatedpages build`` made
    (``block_db``), and the floor from the co-citation job's output records (streamed,
    only the test pages kept).  Memory holds the citation counts and the test pages'
    lists, never the pairs: it scales where the in-memory oracles do not."""
    from relatedpages.corpus.generate import read_topics
    from relatedpages.store.db import RelatedPagesDB

    tests, topic_of = topic_tests(segment_records, read_topics(crawl))
    wanted = set(tests)
    block: dict[str, list[list[Any]]] = {}
    with RelatedPagesDB(block_db) as database:
        for url in tests:
            related = database.related(url)
            if related:
                block[url] = [[item.url, item.score] for item in related]
    floor_lists = {url: related for url, related in floor if url in wanted}
    rows = {BLOCK: block, CHAIN_FLOOR: floor_lists}
    scores = {name: score_topics(related, tests, topic_of, k) for name, related in rows.items()}
    return TopicEvaluation(str(crawl), pages, len(tests), scores, seconds)


def evaluate_topics(crawl: str | Path, k: int = TOP_K,
                    baselines: Sequence[str] = BASELINES_DEFAULT,
                    parallel: bool = True, segmenting: AdjustParams | None = None
                    ) -> TopicEvaluation:
    """Every row of the module docstring on one generated crawl (with its sidecar);
    ``parallel``: the block co-citation oracles in a forked child beside the other rows
    (:mod:`relatedpages.evaluation.forked`; the same result without); ``segmenting``: the
    segmenter's adjusting (the defaults when None)."""
    from filters.anchors import AnchorWords
    from relatedpages.evaluation.baseline_runs import WEIGHTED_COSINE, weighted_cosine_related
    from relatedpages.evaluation.naive import (
        NAIVE,
        NAIVE_STRONG,
        naive_heading_related,
        naive_section_related,
    )
    from relatedpages.scoring.cocitation import CocitationParams, reference_cocitation
    from relatedpages.scoring.options import preset_link_params
    from relatedpages.scoring.parameters import preset_params
    from relatedpages.scoring.reference import reference_related

    started = time.monotonic()
    web = load_topic_web(crawl, segmenting)
    corpus, records, tests, topic_of = web.corpus, web.records, web.tests, web.topic_of
    words = AnchorWords()

    def block_rows() -> tuple[RelatedDict, RelatedDict]:
        """The two block co-citation oracles: in a forked child, beside the rest below."""
        return (reference_related(records, preset_link_params("default"),
                                  preset_params("default", m=k), words),
                reference_related(records, preset_link_params("paper"),
                                  preset_params("paper", m=k, t=0.0), words))

    with Forked(block_rows, parallel) as pending:
        cocitation_all = reference_cocitation(records, CocitationParams(m=k, min_degree=1))
        others: dict[str, RelatedDict] = {
            CHAIN_FLOOR: reference_cocitation(records, CocitationParams(m=k, min_degree=2)),
            NAIVE: naive_section_related(corpus.lists, k),
            NAIVE_STRONG: naive_heading_related(corpus.lists, k),
        }
        # the two references of the related-pages table (issue 43): always scored
        graph = link_graph_of(records, BASELINE_HOSTS_DEFAULT)
        others[WEIGHTED_COSINE] = weighted_cosine_related(graph, tests, k)
        if baselines:
            others.update((name, run.related)
                          for name, run in run_baselines(graph, baselines, tests, k).items())
        product, paper = pending.result()
    rows: dict[str, RelatedDict] = {
        BLOCK: with_fallback(product, cocitation_all, k),
        f"{PAPER_BLOCK} (T = 4)": at_least(paper, preset_params("paper").t),
        f"{PAPER_BLOCK} (T = 0)": paper,
        **others,
    }
    scores = {name: score_topics(related, tests, topic_of, k) for name, related in rows.items()}
    return TopicEvaluation(str(crawl), len(records), len(tests), scores,
                           time.monotonic() - started)


def format_topics(evaluation: TopicEvaluation) -> str:
    """The printed table, then P@15 per topic."""
    width = max(34, *(len(name) + 2 for name in evaluation.scores))
    lines = [f"Related pages graded by topic on {evaluation.crawl} ({evaluation.pages} pages; "
             f"{evaluation.test_pages} test pages: content pages without a query, linked from "
             ">= 2 pages of other sites; grade 1 = same topic; missing results = 0)", "",
             f"{'row':<{width}}{'coverage':>10}{'P@1':>8}{'P@5':>8}{'P@15':>8}"]
    for name, sc in evaluation.scores.items():
        lines.append(f"{name:<{width}}{100 * sc.coverage:>9.1f}%{100 * sc.p1:>7.1f}%"
                     f"{100 * sc.p5:>7.1f}%{100 * sc.p15:>7.1f}%")
    topics = sorted({t for sc in evaluation.scores.values() for t in sc.p15_by_topic})
    lines += ["", "P@15 per topic (cf. paper Fig. 11)",
              f"{'topic':<14}" + "".join(f"{name[:18]:>20}" for name in evaluation.scores)]
    for topic in topics:
        lines.append(f"{topic:<14}" + "".join(
            f"{100 * sc.p15_by_topic.get(topic, 0.0):>19.1f}%" for sc in evaluation.scores.values()))
    lines.append(f"\ntime: {evaluation.seconds:.1f} s")
    return "\n".join(lines)


def plot_topics(evaluations: Sequence[TopicEvaluation], path: Path) -> None:
    """P@15 per topic and row (Fig. 11's shape), one panel per crawl."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(evaluations), 1, figsize=(10, 3.6 * len(evaluations)),
                             squeeze=False)
    for ax, evaluation in zip(axes[:, 0], evaluations):
        names = list(evaluation.scores)
        topics = sorted({t for sc in evaluation.scores.values() for t in sc.p15_by_topic})
        width = 0.8 / len(names)
        for index, name in enumerate(names):
            values = [evaluation.scores[name].p15_by_topic.get(t, 0.0) for t in topics]
            ax.bar([x + index * width for x in range(len(topics))], values, width, label=name)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(topics))], topics, rotation=30,
                      ha="right")
        ax.set_ylabel("P@15 (same topic)")
        ax.set_title(f"{Path(evaluation.crawl).name}: {evaluation.pages} pages", fontsize=10)
    axes[0, 0].legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def as_dict(evaluation: TopicEvaluation) -> dict[str, Any]:
    return {"crawl": evaluation.crawl, "pages": evaluation.pages,
            "test_pages": evaluation.test_pages,
            "scores": {name: {"coverage": sc.coverage, "p1": sc.p1, "p5": sc.p5, "p15": sc.p15,
                              "p15_by_topic": dict(sc.p15_by_topic)}
                       for name, sc in evaluation.scores.items()}}
