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

import ipaddress
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from relatedpages.bench.proctree import descendants
from relatedpages.store.db import RelatedPagesDB
from tests.prerequisites import guard, run_hadoop_script
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
        subprocess.run([str(MINICLUSTER), "stop"], capture_output=True, timeout=guard(120))


def hdfs(env: dict[str, str], *args: str) -> bytes:
    done = subprocess.run([str(HADOOP), "fs", *args], env=env, capture_output=True, timeout=guard(300))
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
         "-o", str(crawl)], cwd=REPO, capture_output=True, text=True, timeout=guard(300))
    assert generated.returncode == 0, generated.stderr
    hdfs(cluster_env, "-mkdir", "-p", "/crawl/latest")
    hdfs(cluster_env, "-put", "-f", str(crawl), "/crawl/latest/")

    night = subprocess.run(
        [str(REPO / "scripts" / "nightly"), "--runner", "hadoop", "--work", "hdfs:///user/rp",
         "--db", str(tmp_path / "db-yarn"), "--job-arg=--t=1.0",
         "--job-arg=--hadoop-tmp-dir=hdfs:///tmp/mrjob", "hdfs:///crawl/latest/*.warc.gz"],
        cwd=tmp_path, env=cluster_env, capture_output=True, text=True, timeout=guard(900))
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
        cwd=tmp_path, capture_output=True, text=True, timeout=guard(900))
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


def _start_streaming_job(env: dict[str, str], tmp_path: Path, folder: str,
                         mapper: list[str]) -> subprocess.Popen[bytes]:
    """A map-only streaming job of one line whose mapper is ``mapper``, on ``/folder`` in
    HDFS, its client in a session of its own, logging to ``tmp_path/client.log``."""
    (tmp_path / "in.txt").write_text("one line\n")
    hdfs(env, "-mkdir", "-p", f"/{folder}")
    hdfs(env, "-put", "-f", str(tmp_path / "in.txt"), f"/{folder}/in.txt")
    with (tmp_path / "client.log").open("wb") as client_log:
        return subprocess.Popen(
            [str(HADOOP), "jar", str(REPO / "hadoop" / "hadoop-streaming.jar"),
             "-D", "mapreduce.job.reduces=0", "-input", f"/{folder}/in.txt",
             "-output", f"/{folder}/out", "-mapper", " ".join(mapper)],
            env=env, stdout=subprocess.DEVNULL, stderr=client_log, start_new_session=True)


def _wait_for_processes(client: subprocess.Popen[bytes], tmp_path: Path, argv: list[str],
                        count: int) -> None:
    """Until ``count`` processes run ``argv`` (the job's task among them), for 300 s at most."""
    deadline = time.monotonic() + guard(300)
    while len(_processes_running(argv)) < count:
        log = (tmp_path / "client.log").read_text(errors="replace")[-2000:]
        assert client.poll() is None, f"the streaming job ended before its task started:\n{log}"
        assert time.monotonic() < deadline, f"the task's mapper did not start in {guard(300):.0f} s:\n{log}"
        time.sleep(1)


def _listening_addresses(pids: set[int]) -> dict[int, list[ipaddress.IPv4Address | ipaddress.IPv6Address]]:
    """The local address of every listening TCP socket the processes ``pids`` hold, by pid
    (/proc/net/tcp and tcp6: state 0A; each 32-bit word of an address in host order)."""
    listening: dict[str, ipaddress.IPv4Address | ipaddress.IPv6Address] = {}
    for table in ("tcp", "tcp6"):
        for line in Path("/proc/net", table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A":
                continue
            raw = bytes.fromhex(fields[1].split(":")[0])
            words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            listening[fields[9]] = ipaddress.ip_address(words)
    owned: dict[int, list[ipaddress.IPv4Address | ipaddress.IPv6Address]] = {}
    for pid in pids:
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue  # gone meanwhile, or a descriptor closed while listed
        for link in links:
            inode = link.removeprefix("socket:[").removesuffix("]")
            if link.startswith("socket:[") and inode in listening:
                owned.setdefault(pid, []).append(listening[inode])
    return owned


def _is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def test_the_cluster_and_its_containers_listen_on_loopback_only(cluster_env, tmp_path):
    """Every server of the cluster JVM and of a running job's containers listens on
    127.0.0.1: Hadoop's shuffle service and the application master bind the wildcard
    address with no setting to change it, and the preloaded bind() moves them
    (scripts/lib/loopback_bind.c); the JobHistory admin port is set, not Hadoop's 10033."""
    marker = ["sleep", "29"]  # the streaming task's mapper, found to know the job is running
    cluster = int((REPO / "hadoop" / "minicluster" / "run" / "pid").read_text())
    client = _start_streaming_job(cluster_env, tmp_path, "loopback-check", marker)
    try:
        _wait_for_processes(client, tmp_path, marker, 1)
        listening = _listening_addresses(descendants(cluster))
        assert cluster in listening and len(listening[cluster]) >= 10  # HDFS, YARN, history, shuffle
        assert set(listening) - {cluster}, "no container's server found: the check saw only the JVM"
        wide = {pid: [str(a) for a in addresses if not _is_loopback(a)]
                for pid, addresses in listening.items()}
        assert not any(wide.values()), f"listening beyond loopback: {wide}"
        assert client.wait(timeout=guard(300)) == 0, (tmp_path / "client.log").read_text()[-2000:]
    finally:
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait(timeout=guard(30))


def test_stop_ends_the_containers_of_a_job_stopped_half_way(cluster_env, tmp_path):
    """A job whose client was killed leaves its containers running, and the NodeManager does
    not always stop them when the cluster JVM exits (a benchmark stopped half-way left six
    busy tasks behind): ``scripts/minicluster stop`` stops them too (the cluster JVM's
    descendants, and processes working in its containers' folders), and nothing else.
    Last in this file: it stops the cluster the fixture started."""
    marker = ["sleep", "617"]  # the streaming task's mapper: a container's process to find
    client = _start_streaming_job(cluster_env, tmp_path, "stop-check", marker)
    bystander = subprocess.Popen([*marker])  # not the cluster's: it must outlive the stop
    try:
        _wait_for_processes(client, tmp_path, marker, 2)  # the bystander and the task's mapper
        os.killpg(client.pid, signal.SIGKILL)  # the client dies; its job runs on
        client.wait(timeout=guard(30))
        assert len(_processes_running(marker)) >= 2  # the bystander, and the job's tasks

        stopped = subprocess.run([str(MINICLUSTER), "stop"], capture_output=True, text=True,
                                 timeout=guard(120))
        assert stopped.returncode == 0, stopped.stderr
        assert _processes_running(marker) == [bystander.pid]
        assert not (REPO / "hadoop" / "minicluster" / "run").exists()
    finally:
        bystander.kill()
        bystander.wait(timeout=guard(30))
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait(timeout=guard(30))
