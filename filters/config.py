"""Where the shipped configuration files are: ``conf/`` of a source checkout, or
``<prefix>/share/relatedpages/conf`` of an installed wheel (setup.py's ``data_files``).

On a cluster node neither may exist: the site rules and Companion's stoplist then fall back
to copies built into their modules, and ``mrjob.conf`` is only read on the gateway.
"""
from __future__ import annotations

import sys
from pathlib import Path

#: ``conf/`` of a source checkout.
CHECKOUT_CONF = Path(__file__).resolve().parent.parent / "conf"
#: Where ``pip install`` puts the same files (setup.py, ``data_files``).
INSTALLED_CONF = Path(sys.prefix) / "share" / "relatedpages" / "conf"
#: The files setup.py installs.
SHIPPED = ("mrjob.conf", "sites.tsv", "stoplist.txt", "relatedpages.cron")


def conf_path(name: str) -> Path:
    """The shipped configuration file ``name``: the checkout's when there is one, else the
    installed copy; the checkout's path (absent) when neither exists.

    >>> conf_path("sites.tsv").name
    'sites.tsv'
    """
    for folder in (CHECKOUT_CONF, INSTALLED_CONF):
        if (folder / name).is_file():
            return folder / name
    return CHECKOUT_CONF / name
