"""What every job of the project shares: JSON lines between steps, and the packages it
ships to its tasks the way a cluster needs them (``DIRS``, paths relative to the job's
own file; ``-r inline`` would hide a missing one, ``-r local`` and Hadoop do not)."""
from __future__ import annotations

from mrjob.job import MRJob
from mrjob.protocol import StandardJSONProtocol

from filters.config import conf_path

#: The configuration shipped as ``conf/`` beside the packages in every task's folder (where
#: ``filters.site`` and Companion look first): a checkout's ``conf/``, or an installed
#: wheel's ``share/relatedpages/conf``; none when neither exists (built-in copies apply).
_CONF = conf_path("sites.tsv").parent


class ShippedJob(MRJob):
    """Base of the project's jobs: StandardJSONProtocol in, between steps and out (never
    the auto-picked JSONProtocol), and the project's packages shipped to every task."""

    INPUT_PROTOCOL = StandardJSONProtocol
    INTERNAL_PROTOCOL = StandardJSONProtocol
    OUTPUT_PROTOCOL = StandardJSONProtocol
    DIRS = ["../jobs#jobs", "../relatedpages#relatedpages", "../segmenter#segmenter",
            "../filters#filters", *([f"{_CONF}#conf"] if _CONF.is_dir() else [])]


def summed_counters(steps: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """A runner's per-step counters (``runner.counters()``) summed into group → name → n."""
    total: dict[str, dict[str, int]] = {}
    for step in steps:
        for group, values in step.items():
            for name, value in values.items():
                total.setdefault(group, {})
                total[group][name] = total[group].get(name, 0) + value
    return total
