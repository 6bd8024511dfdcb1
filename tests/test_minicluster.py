"""The related chain on Hadoop's MiniCluster: HDFS and YARN on loopback, ``hdfs://`` paths.

``scripts/minicluster start`` brings up a NameNode, a DataNode, a ResourceManager, a
NodeManager and the JobHistory server in one JVM (jars from Maven Central); the jobs then
run as they would on a cluster — inputs and outputs on HDFS, every task a YARN container
JVM that starts from an empty environment and gets the code only through ``DIRS`` — and
their output must equal ``-r inline``'s.  Here ``scripts/nightly`` (``relatedpages build
--runner hadoop --work hdfs:///…``) is checked down to the database records; the chain alone
on YARN is checked against inline by ``tests/test_bench_scale.py`` (its ``--graph`` run), and
its counters by ``tests/test_hadoop.py`` on Hadoop's local runner (the same streaming tasks).

Slow: about 20 s to start the cluster and 1–2 minutes per job (a JVM per container).
Skipped without a JDK 17 or Maven, except in CI (``CI=true``), where that fails.
"""
from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from relatedpages.store.db import RelatedPagesDB
from tests.prerequisites import run_hadoop_script
from tests.test_hadoop import HADOOP_FRAMEWORK_GROUP, REPO, job_env

pytestmark = [pytest.mark.hadoop, pytest.mark.slow]

MINICLUSTER = REPO / "scripts" / "minicluster"
HADOOP = REPO / "hadoop" / "bin" / "hadoop"


@pytest.fixture(scope="module")
def cluster_env() -> Iterator[dict[str, str]]:
    """A running MiniCluster and the client environment that points at it; stopped after."""
    run_hadoop_script([str(MINICLUSTER), "start"])
    try:
        exports = subprocess.run([str(MINICLUSTER), "env"], capture_output=True, text=True,
                                 check=True).stdout
        env = job_env()
        for line in exports.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            env[name] = value.strip("'")
        yield env
    finally:
        subprocess.run([str(MINICLUSTER), "stop"], capture_output=True, timeout=120)


def hdfs(env: dict[str, str], *args: str) -> bytes:
    done = subprocess.run([str(HADOOP), "fs", *args], env=env, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return done.stdout


def test_the_cluster_serves_hdfs(cluster_env):
    core_site = Path(cluster_env["HADOOP_CONF_DIR"], "core-site.xml").read_text()
    assert "hdfs://127.0.0.1:" in core_site
    hdfs(cluster_env, "-mkdir", "-p", "/check")
    listing = hdfs(cluster_env, "-ls", "/").decode()
    assert "/check" in listing


def test_nightly_on_the_cluster(cluster_env, tmp_path):
    """scripts/nightly as the cron line runs it on a gateway: the crawl on HDFS (a glob), the
    intermediate outputs on HDFS, the database local — equal to an inline build."""
    crawl = tmp_path / "crawl.warc.gz"
    generated = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "generate", "--pages", "300", "--seed", "4",
         "-o", str(crawl)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert generated.returncode == 0, generated.stderr
    hdfs(cluster_env, "-mkdir", "-p", "/crawl/latest")
    hdfs(cluster_env, "-put", "-f", str(crawl), "/crawl/latest/")

    night = subprocess.run(
        [str(REPO / "scripts" / "nightly"), "--runner", "hadoop", "--work", "hdfs:///user/rp",
         "--db", str(tmp_path / "db-yarn"), "--job-arg=--t=1.0",
         "--job-arg=--hadoop-tmp-dir=hdfs:///tmp/mrjob", "hdfs:///crawl/latest/*.warc.gz"],
        cwd=tmp_path, env=cluster_env, capture_output=True, text=True, timeout=900)
    assert night.returncode == 0, night.stderr[-3000:]
    assert " ok: " in night.stdout and "(hadoop runner;" in night.stdout
    log = next((tmp_path / "db-yarn.logs").glob("nightly-*.log")).read_text()
    jobs_log = next((tmp_path / "db-yarn.logs").glob("jobs-*.log")).read_text()
    assert HADOOP_FRAMEWORK_GROUP in jobs_log  # YARN's counters came back, into the jobs' log
    assert re.search(r"segment: Hadoop job\(s\) .*job_\d+_\d+", log)  # the nightly log names the jobs
    assert re.search(r"segment: step 1/1, map 100% reduce 100%, 100% done", log)  # and their progress
    assert "pages                300" in log
    # the intermediate outputs stay on HDFS, where a cluster's next steps would read them
    listing = hdfs(cluster_env, "-ls", "/user/rp").decode()
    assert "/user/rp/segments" in listing and "/user/rp/related" in listing

    inline = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "build", str(crawl), "--db",
         str(tmp_path / "db-inline"), "--runner", "inline", "--job-arg=--t=1.0"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert inline.returncode == 0, inline.stderr[-3000:]
    with RelatedPagesDB(tmp_path / "db-yarn") as yarn, RelatedPagesDB(tmp_path / "db-inline") as local:
        yarn_records = list(yarn.records())
        assert yarn_records, "empty database proves nothing"
        assert yarn_records == list(local.records())
