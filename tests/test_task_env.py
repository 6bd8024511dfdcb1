"""The hadoop runner's task environment (conf/mrjob.conf ``cmdenv``): a task's Python
imports mrjob without setuptools, and its tasks still run and stay quiet."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mrjob.conf import load_opts_from_mrjob_conf

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent
CONF = REPO / "conf" / "mrjob.conf"

_PROBE = """
import json, sys
import jobs.related
from distutils.spawn import find_executable
print(json.dumps({"setuptools": "setuptools" in sys.modules,
                  "pkg_resources": "pkg_resources" in sys.modules,
                  "sh": bool(find_executable("sh"))}))
"""


def _hadoop_cmdenv() -> dict[str, str]:
    [(_, opts)] = load_opts_from_mrjob_conf("hadoop", str(CONF))
    return {name: str(value) for name, value in (opts.get("cmdenv") or {}).items()}


def _task_env(extra: dict[str, str]) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if name != "SETUPTOOLS_USE_DISTUTILS"}
    return {**env, **extra}


def test_the_tasks_import_mrjob_without_setuptools() -> None:
    cmdenv = _hadoop_cmdenv()
    assert cmdenv.get("SETUPTOOLS_USE_DISTUTILS") == "stdlib"
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=REPO, env=_task_env(cmdenv),
                          capture_output=True, text=True, timeout=guard(120))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"setuptools": False, "pkg_resources": False, "sh": True}
    assert done.stderr == ""  # no deprecation notice in every task's log


def test_a_task_runs_as_before_in_that_environment(tmp_path: Path) -> None:
    # Mapper1 on a real hub page's segment record: the same output with and without it.
    from filters.site import site_of
    from segmenter import segment_bytes, segment_record

    url = "https://github.com/example/awesome-python"  # examples/tiny-web/urls.tsv
    page = segment_bytes((REPO / "examples" / "tiny-web" / "python-hub.html").read_bytes(), url)
    record = {**segment_record(page), "url": page.url, "site": site_of(page.url)}
    line = json.dumps(record["url"]) + "\t" + json.dumps(record) + "\n"
    outputs = []
    for extra in ({}, _hadoop_cmdenv()):
        done = subprocess.run([sys.executable, "jobs/related.py", "--step-num=0", "--mapper"],
                              cwd=REPO, env=_task_env(extra), input=line, capture_output=True,
                              text=True, timeout=guard(120))
        assert done.returncode == 0, done.stderr
        outputs.append(sorted(done.stdout.splitlines()))  # the shuffle sorts them anyway
    assert outputs[0] == outputs[1]
    assert sum('"0p"' not in line for line in outputs[0]) >= 20  # 10 pairs, both ways
