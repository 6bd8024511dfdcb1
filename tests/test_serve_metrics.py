"""``relatedpages.serve.metrics``: what ``GET /metrics`` shows, summed over the workers'
counter files (those of exited workers too), in Prometheus' text format."""
from __future__ import annotations

import re
from pathlib import Path

from relatedpages.serve.metrics import LATENCY_BUCKETS, UNKNOWN_ALGORITHM, ErrorKind, Metrics

# a sample line of the text format: name{label="value",…} number
SAMPLE = re.compile(r'^[a-z_]+(\{[a-z_]+="(?:[^"\\]|\\.)*"(,[a-z_]+="(?:[^"\\]|\\.)*")*\})? -?[0-9.e+-]+$')


def _values(text: str) -> dict[str, float]:
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if not line.startswith("#")}


def test_every_worker_is_counted_and_the_text_is_prometheus(tmp_path: Path) -> None:
    first = Metrics(["block", 'odd "name"'], ["block"], tmp_path)
    second = Metrics(["block", 'odd "name"'], ["block"], tmp_path)  # another worker
    first.lookup("block", 200, 0.00005)
    second.lookup("block", 200, 0.003)
    second.lookup("block", 418)  # a status not listed: "other", not timed
    second.lookup(UNKNOWN_ALGORITHM, 404, 0.0002)
    first.swap("block")
    second.swap("block")
    second.error(ErrorKind.DATABASE_REFUSED)
    text = first.render()
    assert text == second.render()  # whichever worker answers
    for line in text.splitlines():
        assert line.startswith(("# HELP ", "# TYPE ")) or SAMPLE.match(line), line
    values = _values(text)
    assert values['relatedpages_lookups_total{algorithm="block",status="200"}'] == 2
    assert values['relatedpages_lookups_total{algorithm="block",status="other"}'] == 1
    assert values['relatedpages_lookups_total{algorithm="(unknown)",status="404"}'] == 1
    assert 'relatedpages_lookups_total{algorithm="odd \\"name\\"",status="200"}' in values
    assert values['relatedpages_swaps_total{database="block"}'] == 2
    assert values['relatedpages_errors_total{kind="database_refused"}'] == 1
    assert values['relatedpages_errors_total{kind="server_error"}'] == 0
    # the histogram: cumulative buckets, +Inf = count, the sum in seconds
    buckets = [values[f'relatedpages_lookup_seconds_bucket{{le="{bound:g}"}}'] for bound in LATENCY_BUCKETS]
    assert buckets[0] == 1 and buckets[-1] == 3 and buckets == sorted(buckets)
    assert values['relatedpages_lookup_seconds_bucket{le="+Inf"}'] == values["relatedpages_lookup_seconds_count"] == 3
    assert abs(values["relatedpages_lookup_seconds_sum"] - 0.00325) < 1e-12
    second.close()  # a worker that exited: its counts stay
    assert _values(first.render())['relatedpages_swaps_total{database="block"}'] == 2


def test_without_a_folder_the_counts_are_the_process_own() -> None:
    metrics = Metrics(["block"])
    metrics.lookup("block", 503, 0.01)
    assert _values(metrics.render())['relatedpages_lookups_total{algorithm="block",status="503"}'] == 1
