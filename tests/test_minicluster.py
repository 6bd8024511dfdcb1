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

import os
import re
import signal
import subprocess
import sys
import time
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


def _processes_running(argv: list[str]) -> list[int]:
    """The pids whose command line is ``argv`` (the program by name: streaming starts it
    by its full path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                running = (entry / "cmdline").read_text(errors="replace").split("\0")[:-1]
            except OSError:
                continue  # gone meanwhile
            if running[1:] == argv[1:] and running and Path(running[0]).name == argv[0]:
                found.append(int(entry.name))
    return found


def test_stop_ends_the_containers_of_a_job_stopped_half_way(cluster_env, tmp_path):
    """A job whose client was killed leaves its containers running, and the NodeManager does
    not always stop them when the cluster JVM exits (a benchmark stopped half-way left six
    busy tasks behind): ``scripts/minicluster stop`` stops them too (the cluster JVM's
    descendants, and processes working in its containers' folders), and nothing else.
    Last in this file: it stops the cluster the fixture started."""
    marker = ["sleep", "617"]  # the streaming task's mapper: a container's process to find
    (tmp_path / "in.txt").write_text("one line\n")
    hdfs(cluster_env, "-mkdir", "-p", "/stop-check")
    hdfs(cluster_env, "-put", "-f", str(tmp_path / "in.txt"), "/stop-check/in.txt")
    bystander = subprocess.Popen([*marker])  # not the cluster's: it must outlive the stop
    with (tmp_path / "client.log").open("wb") as client_log:
        client = subprocess.Popen(
            [str(HADOOP), "jar", str(REPO / "hadoop" / "hadoop-streaming.jar"),
             "-D", "mapreduce.job.reduces=0", "-input", "/stop-check/in.txt",
             "-output", "/stop-check/out", "-mapper", " ".join(marker)],
            env=cluster_env, stdout=subprocess.DEVNULL, stderr=client_log,
            start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while len(_processes_running(marker)) < 2:  # the bystander and the task's mapper
            log = (tmp_path / "client.log").read_text(errors="replace")[-2000:]
            assert client.poll() is None, f"the streaming job ended before its task started:\n{log}"
            assert time.monotonic() < deadline, f"the task's mapper did not start in 300 s:\n{log}"
            time.sleep(1)
        os.killpg(client.pid, signal.SIGKILL)  # the client dies; its job runs on
        client.wait(timeout=30)
        assert len(_processes_running(marker)) >= 2  # the bystander, and the job's tasks

        stopped = subprocess.run([str(MINICLUSTER), "stop"], capture_output=True, text=True,
                                 timeout=120)
        assert stopped.returncode == 0, stopped.stderr
        assert _processes_running(marker) == [bystander.pid]
        assert not (REPO / "hadoop" / "minicluster" / "run").exists()
    finally:
        bystander.kill()
        bystander.wait(timeout=30)
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait(timeout=30)
