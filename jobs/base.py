"""What every job of the project shares: JSON lines between steps, and the packages it
ships to its tasks the way a cluster needs them (``DIRS``, paths relative to the job's
own file; ``-r inline`` would hide a missing one, ``-r local`` and Hadoop do not)."""
from __future__ import annotations

from mrjob.job import MRJob
from mrjob.protocol import StandardJSONProtocol


class ShippedJob(MRJob):
    """Base of the project's jobs: StandardJSONProtocol in, between steps and out (never
    the auto-picked JSONProtocol), and the project's packages shipped to every task."""

    INPUT_PROTOCOL = StandardJSONProtocol
    INTERNAL_PROTOCOL = StandardJSONProtocol
    OUTPUT_PROTOCOL = StandardJSONProtocol
    DIRS = ["../jobs#jobs", "../relatedpages#relatedpages", "../segmenter#segmenter",
            "../filters#filters", "../conf#conf"]


def summed_counters(steps: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """A runner's per-step counters (``runner.counters()``) summed into group → name → n."""
    total: dict[str, dict[str, int]] = {}
    for step in steps:
        for group, values in step.items():
            for name, value in values.items():
                total.setdefault(group, {})
                total[group][name] = total[group].get(name, 0) + value
    return total
