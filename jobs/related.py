"""Segment records → related pages by block co-citation (paper, "Parallel implementation").

    python -m jobs.related -r inline|local|hadoop SEGMENTS… -o OUT

Mapper1 → Sort1 → Reducer1 → Mapper2 (identity) → Reducer2, as DESIGN.md describes.
Output, one line per page with at least one related page:
``"<url>"\\t[[related_url, score, [[citing_site, ds], …]], …]`` — best first, at most M,
each score >= T; the third element is the evidence (the citing sites that gave most).

With the site fallback (``--site-fallback on``, the default preset) two steps follow, a
join of the weak pages with their site's lists (:mod:`relatedpages.scoring.sitefallback`):
Reducer2 emits each list tagged with whether it is weak, and every weak page asks each of
its :func:`site_chops`; Reducer3, keyed by the page asked, passes its own list on and
offers it (if it is not weak) to every page that asked; Reducer4 keeps a page's own list,
or, if that is weak, the nearest offer (marked ``"site"``, with the page that answered).
"""
from __future__ import annotations


import heapq
import os
import sys
import tempfile
from typing import Any, Iterator

from mrjob.step import MRStep

if __name__ == "__main__":
    # A Hadoop task runs this file as a script from its working folder, where DIRS put the
    # project's packages: make them importable whatever PYTHONPATH the node sets.
    sys.path.insert(0, os.getcwd())

from jobs.base import ShippedJob

from filters.anchors import AnchorWords
from filters.links import LinkFilter
from relatedpages.scoring import similarity as sim
from relatedpages.scoring.granularity import units
from relatedpages.scoring.options import add_chain_options, chain_params_from
from relatedpages.scoring.parameters import ScoreForm, TieBreak
from relatedpages.scoring.similarity import micro, score_from_micro, unmicro
from relatedpages.scoring.sitefallback import from_site, is_weak, site_chops
from relatedpages.store import hotkeys, leftovers
from relatedpages.store.chain import (
    AUX_TAG,
    CITED_TAG,
    PAIR_TAG,
    decode_pair_value,
    encode_aux_value,
    encode_cited_value,
    encode_pair_value,
)
from relatedpages.store.keyloads import is_chain_record

FILTER_GROUP = "filters"
CHAIN_GROUP = "related"
# The site fallback's values (steps 2-4), tagged so that they sort as each reducer reads
# them: an offer ("F", by depth) before a page's own list ("L") before the asks ("W").
_SELF, _OFFER, _OWN, _WANT = None, "F", "L", "W"
_DEPTH_WIDTH = 4


class MRRelatedPages(ShippedJob):
    """Block co-citation: segment records in, ranked related pages out."""

    # Sort1: values reach Reducer1 sorted by their encoded bytes (relatedpages.store.chain).
    SORT_VALUES = True

    def configure_args(self) -> None:
        super().configure_args()
        add_chain_options(self.add_passthru_arg)
        self.add_file_arg(
            "--hot-keys", metavar="PLAN",
            help="a hot-key plan (scripts/key_skew.py --plan): the first job's heavy pages "
                 "split and routed to its reducers. Changes where the work goes, never the "
                 "output. Default: none")

    def load_args(self, args: list[str]) -> None:
        super().load_args(args)
        try:
            self.link_params, self.sim_params = chain_params_from(self.options)
            self.hot_keys = (hotkeys.read_plan(self.options.hot_keys)
                             if self.options.hot_keys else {})
        except ValueError as error:
            self.arg_parser.error(str(error))

    def steps(self) -> list[MRStep]:
        steps = [
            MRStep(mapper_init=self.mapper_init_words, mapper=self.mapper_emit_pairs,
                   reducer=self.reducer_total_similarity),
            MRStep(reducer=self.reducer_top_related),  # Mapper2 is the identity
        ]
        if self.sim_params.site_fallback:
            steps += [MRStep(reducer=self.reducer_offer_site_list),
                      MRStep(reducer=self.reducer_answer)]
        return steps

    # -- Mapper1 ---------------------------------------------------------------------------

    def mapper_init_words(self) -> None:
        # jieba's dictionary cache goes in a folder of this task's own, removed when the
        # task ends: not the working folder (Hadoop's local job runner runs tasks in the
        # submitter's current folder), never a shared one.
        self._jieba_dir = tempfile.TemporaryDirectory(prefix="relatedpages-jieba-")
        leftovers.mark(self._jieba_dir.name)  # a killed task's: the next build removes it
        # Each href's filter fate once a task (a crawl cites the same hrefs again and again).
        self.link_filter = LinkFilter(AnchorWords(cache_dir=self._jieba_dir.name),
                                      self.link_params)

    def mapper_emit_pairs(self, url: str, record: Any) -> Iterator[tuple[Any, list[Any]]]:
        """Input: url → segment record.  Output, per filtered block and page, an auxiliary
        value (for in_p); under the evidence tie-break, per block before the filters and
        href, a cited value (for popularity); and per related pair {p1, p2} of the page (first block only),
        p1 → (p2, TSD(p), A_p,p1, S_p) and p2 → (p1, TSD(p), A_p,p2, S_p)."""
        if not is_chain_record(record):  # no block list, or no site
            self.increment_counter(CHAIN_GROUP, "bad_segment_record")
            return
        site = record["site"]
        unit_blocks, usable = units(record, self.sim_params.granularity)
        if not usable:  # read at block granularity: nothing is lost
            self.increment_counter(CHAIN_GROUP, "segment_record_without_headings")
        blocks, events = self.link_filter(site, unit_blocks)
        for event, count in events.items():
            self.increment_counter(FILTER_GROUP, event.value, count)
        plan = self.hot_keys  # a planned page's values go to its keys (store.hotkeys)
        aux = encode_aux_value(site)
        for page, count in sim.in_counts(blocks).items():
            for key in hotkeys.every_key(page, plan):
                for _ in range(count):
                    yield key, aux
        if self.sim_params.tie_break is TieBreak.EVIDENCE or self.sim_params.site_fallback:
            cited = encode_cited_value(site)
            for linked, count in sim.raw_counts(unit_blocks).items():
                for key in hotkeys.every_key(linked, plan):
                    for _ in range(count):
                        yield key, cited
        citing_url = record.get("url")
        page = citing_url if isinstance(citing_url, str) else url
        pairs = sim.page_pairs(site, blocks, self.sim_params.lam,
                               distant_pairs=self.sim_params.distant_pairs, page_url=page,
                               max_distance=self.sim_params.window,
                               form=self.sim_params.proximity,
                               describe=self.sim_params.score is ScoreForm.EVIDENCE)
        self.increment_counter(CHAIN_GROUP, "related_pairs", len(pairs))
        for pair in pairs:
            yield (hotkeys.pair_key(pair.p1, pair.p2, plan),
                   encode_pair_value(pair.p2, pair.site, pair.anchor1, pair.s, pair.page,
                                     pair.text1, pair.links, pair.context))
            yield (hotkeys.pair_key(pair.p2, pair.p1, plan),
                   encode_pair_value(pair.p1, pair.site, pair.anchor2, pair.s, pair.page,
                                     pair.text2, pair.links, pair.context))

    # -- Reducer1 --------------------------------------------------------------------------

    def reducer_total_similarity(
        self, key: Any, values: Iterator[Any]
    ) -> Iterator[tuple[str, list[Any]]]:
        """Input: p2 (or ``[p2, label]`` under a hot-key plan: store.hotkeys) → auxiliary
        values first, then (p1, TSD, A_p,p2, S_p) sorted by p1, TSD, anchor and similarity
        descending (Sort1).
        Output: p1 → (p2, score, evidence, sites linking p2, Σ_d DS_d, sites co-citing the
        pair) for score >= T; the
        score is TS(p1 → p2) of Eq. 13 under the paper preset.  One pass, constant memory:
        integer sums, a small heap."""
        params = self.sim_params
        page = hotkeys.page_of(key)
        if page is None:
            self.increment_counter(CHAIN_GROUP, "bad_intermediate_key")
            return
        n_micro, cap = micro(params.n), params.r
        # in_p2: blocks containing p2; popularity: sites citing p2 in at most `template`
        # blocks (a site that repeats it more often has it in a template)
        in_p2 = popularity = run = 0
        last_citing: Any = None

        def close_citing_site() -> None:
            nonlocal popularity, run
            if last_citing is not None and run <= params.template:
                popularity += 1
            run = 0

        sites = 0  # citing sites of the current pair
        other = site = anchor = None
        taken = 0  # values taken from the current anchor group (the r cap)
        site_micro = total_micro = max_micro = capped_micro = 0
        # the citing sites' worth: each site's largest page co-citing the pair (its links)
        worth_micro = site_links = 0
        # and their descriptions: each site's largest description overlap of the pair
        context_micro = site_context = 0
        # min-heap of (ds, site, citing page, anchor text) of the best sites
        evidence: list[tuple[int, _Desc, str, str]] = []
        best: tuple[int, str, str] | None = None  # the current site's strongest citation

        def close_site() -> None:
            nonlocal total_micro, site_micro, max_micro, capped_micro, sites, best
            nonlocal worth_micro, site_links, context_micro, site_context
            if site is None:
                return
            ds = min(n_micro, site_micro)  # Eq. 12
            total_micro += ds
            capped_micro += min(ds, sim.SITE_EVIDENCE_CAP_MICRO)
            max_micro = max(max_micro, ds)
            worth_micro += sim.site_worth_micro(site_links)
            context_micro += site_context
            sites += 1
            assert best is not None  # a site has at least one value
            heapq.heappush(evidence, (ds, _Desc(site), best[1], best[2]))
            if len(evidence) > params.evidence:
                heapq.heappop(evidence)
            site_micro, best, site_links, site_context = 0, None, 0, 0

        def close_other() -> Iterator[tuple[str, list[Any]]]:
            if other is None:
                return
            close_site()
            ts = score_from_micro(total_micro, max_micro, sites, in_p2, params,  # Eq. 13
                                  popularity, capped_micro, worth_micro, context_micro)
            if ts >= params.t:
                ranked = sorted(evidence, key=lambda item: (-item[0], item[1].value))
                yield other, [page, ts, [[s.value, unmicro(ds), citing, text]
                                         for ds, s, citing, text in ranked],
                              popularity, unmicro(total_micro), sites]
            else:
                self.increment_counter(CHAIN_GROUP, "scores_below_threshold")

        for value in values:
            if value[0] == AUX_TAG:
                in_p2 += 1
                continue
            if value[0] == CITED_TAG:
                if value != last_citing:  # these arrive sorted: equal sites together
                    close_citing_site()
                    last_citing = value
                run += 1
                continue
            if last_citing is not None:  # the first pair value: every aux value is counted
                close_citing_site()
                last_citing = None
            if value[0] != PAIR_TAG:
                self.increment_counter(CHAIN_GROUP, "bad_intermediate_value")
                continue
            (p1, value_site, value_anchor, s_micro, citing, text, links,
             context) = decode_pair_value(value)
            if p1 != other:
                yield from close_other()
                other, site, anchor, taken = p1, value_site, value_anchor, 0
                total_micro = site_micro = max_micro = capped_micro = sites = worth_micro = 0
                context_micro = 0
                evidence = []
            elif value_site != site:
                close_site()
                site, anchor, taken = value_site, value_anchor, 0
            elif value_anchor != anchor:
                anchor, taken = value_anchor, 0
            if taken < cap:  # the top r similarities of this anchor group (Eq. 12)
                site_micro += s_micro
                taken += 1
            if sim.better_citation(s_micro, citing, text, best):
                best = (s_micro, citing, text)
            site_links = max(site_links, links)
            site_context = max(site_context, context)
        yield from close_other()
        if params.site_fallback:  # every cited page reaches Reducer2, with its popularity
            # (from every piece of a split page: each counts the same popularity)
            if last_citing is not None:
                close_citing_site()
            yield page, [_SELF, popularity]

    # -- Reducer2 --------------------------------------------------------------------------

    def reducer_top_related(
        self, page: str, values: Iterator[list[Any]]
    ) -> Iterator[tuple[str, list[Any]]]:
        """Input: p1 → (p2, score, evidence, sites linking p2, Σ DS_d, sites co-citing), and with the site
        fallback p1's own popularity.  Output: p1 → at most M ``[p2, score, evidence]``,
        best first, ties as the preset says (a bounded heap: constant memory); with the
        site fallback, the list tagged with whether it is weak, and a weak page's asks."""
        params = self.sim_params
        popularity = 0

        def candidates() -> Iterator[sim.Candidate]:
            nonlocal popularity
            for value in values:
                if value[0] is _SELF:
                    popularity = value[1]
                else:
                    yield sim.Candidate(*value)

        best = heapq.nsmallest(params.m, candidates(),
                               key=lambda candidate: sim.candidate_key(candidate, params.tie_break))
        entries = sim.relative_cut([[c.url, c.score, c.evidence] for c in best], params.relative,
                                   [c.sites for c in best])
        if best:
            self.increment_counter(CHAIN_GROUP, "pages_with_related")
        if not params.site_fallback:
            if best:
                yield page, entries
            return
        weak = is_weak(entries, popularity, params.diffuse,
                       next((c.sites for c in best if entries and c.url == entries[0][0]), 0))
        if entries:
            yield page, [_OWN, entries, weak]
            if weak:
                self.increment_counter(CHAIN_GROUP, "diffuse_lists")
        if weak:
            for depth, chop in enumerate(site_chops(page)):
                yield chop, [_WANT, str(depth).zfill(_DEPTH_WIDTH), page]

    # -- Reducer3 and Reducer4: the site fallback --------------------------------------------

    def reducer_offer_site_list(
        self, page: str, values: Iterator[list[Any]]
    ) -> Iterator[tuple[str, list[Any]]]:
        """Input: a page's own list (first: values are sorted) and the asks of the weak pages
        of its site.  Output: the page's list, passed on; to every page that asked, the
        list offered (if it is not weak), with the ask's depth."""
        own: list[Any] | None = None
        for value in values:
            if value[0] == _OWN:
                own = value
                yield page, value
            elif value[0] == _WANT and own is not None and not own[2]:
                yield value[2], [_OFFER, value[1], page, own[1]]

    def reducer_answer(
        self, page: str, values: Iterator[list[Any]]
    ) -> Iterator[tuple[str, list[list[Any]]]]:
        """Input: the offers to a page, nearest first, then its own list.  Output: its own
        list unless weak, else the nearest offer (marked), else its own (weak) list."""
        offer: list[Any] | None = None
        own: list[Any] | None = None
        for value in values:
            if value[0] == _OFFER:
                offer = offer or value
            elif value[0] == _OWN:
                own = value
        answer = own[1] if own is not None else []
        if offer is not None and (own is None or own[2]):
            from_offer = from_site(page, offer[2], offer[3])
            if from_offer:
                self.increment_counter(CHAIN_GROUP, "answered_by_site")
                answer = from_offer
        if answer:
            yield page, answer


class _Desc:
    """A string that orders descending, so the evidence heap drops the later site on
    equal DS (ties keep the alphabetically first site)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: "_Desc") -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value


if __name__ == "__main__":
    MRRelatedPages.run()
