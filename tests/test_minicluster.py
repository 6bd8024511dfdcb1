"""The related chain on Hadoop's MiniCluster: HDFS and YARN on loopback, ``hdfs://`` paths.

``scripts/minicluster start --datanodes 2 --nodemanagers 2`` brings up a NameNode, two
DataNodes, a ResourceManager, two NodeManagers and the JobHistory server in one JVM (jars
from Maven Central); the jobs then
run as they would on a cluster — inputs and outputs on HDFS, every task a YARN container
JVM that starts from an empty environment and gets the code only through ``DIRS`` — and
their output must equal ``-r inline``'s.  Here ``scripts/nightly`` (``relatedpages build
--runner hadoop --work hdfs:///…``) is checked down to the database records; the chain alone
on YARN is checked against inline by ``tests/test_bench_scale.py`` (its ``--graph`` run), and
its counters by ``tests/test_hadoop.py`` on Hadoop's local runner (the same streaming tasks).

Faults (issue 44; the table in ``docs/guides/faults.md``): task processes killed mid-job,
a DataNode and a NodeManager stopped mid-job, a build's client killed outright.  Their
builds run ``--algorithm cocitation --job-arg=--min-degree=1``: two jobs instead of six,
the configuration of the default build's fallback job, whose output on the cluster
``test_nightly_on_the_cluster`` shows equal to inline's, so the fault-free reference is an
inline build.

Slow: about 20 s to start the cluster and 1–2 minutes per job (a JVM per container).
Skipped without a JDK 17 or Maven, except in CI (``CI=true``), where that fails.
"""
from __future__ import annotations

import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from relatedpages.bench.proctree import descendants
from relatedpages.store import applications
from relatedpages.store.db import RelatedPagesDB
from tests.prerequisites import guard, run_hadoop_script
from tests.test_hadoop import HADOOP_FRAMEWORK_GROUP, REPO, job_env

pytestmark = [pytest.mark.hadoop, pytest.mark.slow]

MINICLUSTER = REPO / "scripts" / "minicluster"
HADOOP = REPO / "hadoop" / "bin" / "hadoop"
RUN = REPO / "hadoop" / "minicluster" / "run"  # the running cluster's folders


@pytest.fixture(scope="module")
def cluster_env() -> Iterator[dict[str, str]]:
    """A running MiniCluster of two DataNodes and two NodeManagers (a node can be lost) and
    the client environment that points at it; stopped after."""
    run_hadoop_script([str(MINICLUSTER), "start", "--datanodes", "2", "--nodemanagers", "2"])
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


def _generated_on_hdfs(env: dict[str, str], crawl: Path, folder: str) -> None:
    """300 generated pages (seed 4) written to ``crawl``, and put into the HDFS ``folder``."""
    generated = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "generate", "--pages", "300", "--seed", "4",
         "-o", str(crawl)], cwd=REPO, capture_output=True, text=True, timeout=guard(300))
    assert generated.returncode == 0, generated.stderr
    hdfs(env, "-mkdir", "-p", folder)
    hdfs(env, "-put", "-f", str(crawl), folder)


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
    _generated_on_hdfs(cluster_env, crawl, "/crawl/latest/")

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


# -- faults (issue 44) ---------------------------------------------------------------------

#: The faults' builds: the default build's fallback job alone (module docstring).
FAULT_BUILD = ("--algorithm", "cocitation", "--job-arg=--min-degree=1")


@dataclass(frozen=True)
class FaultWeb:
    crawl: str  # on HDFS
    records: list[tuple[str, Any]]  # the database of an inline build of it


@pytest.fixture(scope="module")
def fault_web(cluster_env, tmp_path_factory) -> FaultWeb:
    """300 generated pages on HDFS, and the records of a fault-free inline build of them."""
    folder = tmp_path_factory.mktemp("fault-web")
    crawl = folder / "crawl.warc.gz"
    _generated_on_hdfs(cluster_env, crawl, "/faults/")
    inline = subprocess.run(
        [sys.executable, "-m", "relatedpages.cli", "build", str(crawl), "--db",
         str(folder / "db-inline"), "--runner", "inline", *FAULT_BUILD],
        cwd=folder, capture_output=True, text=True, timeout=guard(300))
    assert inline.returncode == 0, inline.stderr[-3000:]
    with RelatedPagesDB(folder / "db-inline") as reference:
        records = list(reference.records())
    assert len(records) > 100, "a small database proves little"
    return FaultWeb("hdfs:///faults/crawl.warc.gz", records)


def _start_build(env: dict[str, str], tmp_path: Path, web: FaultWeb, db: Path,
                 name: str) -> subprocess.Popen[str]:
    """``relatedpages build --runner hadoop`` of the fault web into ``db``, its intermediate
    outputs and the chain's scratch on HDFS, in a session of its own; stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "relatedpages.cli", "build", web.crawl, "--db", str(db),
         "--runner", "hadoop", *FAULT_BUILD, "--work", f"hdfs:///faults/{name}",
         "--job-arg=--hadoop-tmp-dir=hdfs:///tmp/mrjob", "--log", str(tmp_path / f"{name}.log")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)


def _finish(build: subprocess.Popen[str], seconds: float) -> tuple[str, str]:
    try:
        return build.communicate(timeout=guard(seconds))
    finally:
        if build.poll() is None:
            os.killpg(build.pid, signal.SIGKILL)
            build.wait(timeout=guard(30))


def _task_python(kind: str, script: str) -> tuple[int, str] | None:
    """A Python process of a streaming task of the cluster running ``script`` as the
    ``--mapper`` or ``--reducer`` (``kind``) of a step, and its working folder (a
    container's, in one NodeManager's folders)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue  # gone meanwhile
        if (cwd.startswith(f"{RUN}/") and "/appcache/application_" in cwd and argv
                and Path(argv[0]).name.startswith("python") and script in argv
                and f"--{kind}" in argv and any(a.startswith("--step-num=") for a in argv)):
            return int(entry.name), cwd
    return None


def _wait_for_task(build: subprocess.Popen[str], kind: str, script: str) -> tuple[int, str]:
    """Until a task's Python ``kind`` of ``script`` runs (polled often: a reducer of the
    small web lives about a second)."""
    deadline = time.monotonic() + guard(300)
    while (found := _task_python(kind, script)) is None:
        assert build.poll() is None, f"the build ended before a {script} {kind} ran"
        assert time.monotonic() < deadline, f"no {script} {kind} in {guard(300):.0f} s"
        time.sleep(0.05)
    return found


def _same_database(db: Path, web: FaultWeb) -> None:
    with RelatedPagesDB(db) as built:
        assert list(built.records()) == web.records


def test_killed_map_and_reduce_tasks_are_retried_and_the_database_is_the_same(
        cluster_env, fault_web, tmp_path):
    """The Python of the segment job's map task and of the chain's reduce task, killed
    mid-job (SIGKILL, by pid): YARN runs each attempt again, and the build's database equals
    the fault-free one record for record."""
    build = _start_build(cluster_env, tmp_path, fault_web, tmp_path / "db", "tasks")
    try:
        for kind, script in (("mapper", "segment.py"), ("reducer", "cocitation.py")):
            pid, _ = _wait_for_task(build, kind, script)
            os.kill(pid, signal.SIGKILL)
    finally:
        out, err = _finish(build, 900)
    assert build.returncode == 0, err[-3000:]
    log = (tmp_path / "tasks.log").read_text(encoding="utf-8")
    # Hadoop saw each attempt fail (the streaming task's Python ended on SIGKILL), and ran another
    assert log.count("subprocess failed with code 137") >= 2, log[-3000:]
    assert re.search(r"Failed map tasks=1$", log, re.M) and re.search(r"Failed reduce tasks=1$", log, re.M)
    _same_database(tmp_path / "db", fault_web)


def _job_states(env: dict[str, str]) -> dict[str, str]:
    """Every job the cluster knows, by YARN application id: its state (PREP, RUNNING,
    KILLED, SUCCEEDED, …), from ``hadoop job -list all``."""
    done = subprocess.run([str(HADOOP), "job", "-list", "all"], env=env, capture_output=True,
                          text=True, timeout=guard(120))
    assert done.returncode == 0, done.stderr[-2000:]
    states = {}
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) > 2 and re.fullmatch(r"job_\d+_\d+", fields[0]):
            states[fields[0].replace("job_", "application_", 1)] = fields[2]
    return states


def _recorded(db: Path, pid: int, what: str = "applications") -> list[str]:
    """The YARN applications (or job scratch folders) the build ``pid`` has recorded
    beside ``db``."""
    for path in db.with_name(db.name + applications.SUFFIX).glob("*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # replaced meanwhile
        if data["pid"] == pid:
            return list(data[what])
    return []


def _wait_for_recorded(build: subprocess.Popen[str], db: Path) -> str:
    deadline = time.monotonic() + guard(300)
    while not (recorded := _recorded(db, build.pid)):
        assert build.poll() is None, "the build ended before it submitted a job"
        assert time.monotonic() < deadline, f"no YARN application recorded in {guard(300):.0f} s"
        time.sleep(0.2)
    return recorded[-1]


def test_a_killed_clients_application_is_killed_by_the_next_build_and_sigterm_kills_its_own(
        cluster_env, fault_web, tmp_path):
    """A build killed outright leaves its YARN application running (Hadoop's client only
    watches it) and its job's scratch folder on HDFS; the next build of the same database
    kills the one and removes the other, recognised by what the killed build recorded; a
    build stopped by SIGTERM kills its own, in one line, exit 143."""
    db = tmp_path / "db"
    killed = _start_build(cluster_env, tmp_path, fault_web, db, "killed")
    try:
        orphan = _wait_for_recorded(killed, db)
        scratch = _recorded(db, killed.pid, "scratch")
    finally:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=guard(30))
    time.sleep(3)  # the killed build's Hadoop client is gone by now (its terminal hung up)
    assert _job_states(cluster_env)[orphan] in ("PREP", "RUNNING")  # the job runs on
    # mrjob's, for the running job (the segment job's on the local file system, through
    # the project's mrjob.conf; the chain's on HDFS, through --hadoop-tmp-dir)
    assert len(scratch) == 1, scratch
    hdfs(cluster_env, "-test", "-d", scratch[0])  # left behind (the job runs from it)

    following = _start_build(cluster_env, tmp_path, fault_web, db, "following")
    try:
        assert following.stderr is not None
        seen = []
        for line in following.stderr:
            seen.append(line)
            if line.startswith("[1/3]"):
                break
        assert any(f"killed YARN application {orphan}" in line for line in seen), "".join(seen)
        assert any(f"removed {scratch[0]}: the scratch folder" in line for line in seen), "".join(seen)
        gone = subprocess.run([str(HADOOP), "fs", "-test", "-e", scratch[0]], env=cluster_env,
                              capture_output=True, timeout=guard(120))
        assert gone.returncode == 1, gone.stderr[-2000:]
        own = _wait_for_recorded(following, db)
        following.send_signal(signal.SIGTERM)
    finally:
        out, err = _finish(following, 300)
    assert following.returncode == 143, err[-3000:]
    assert err.strip().splitlines()[-1] == "relatedpages: terminated", err[-3000:]
    states = _job_states(cluster_env)
    assert (states[orphan], states[own]) == ("KILLED", "KILLED")
    # nothing is left recorded, and no database was made
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("db")] == []


def _node_manager_of(folder: str) -> int:
    """The number of the NodeManager whose local folders hold ``folder``."""
    listing = subprocess.run([str(MINICLUSTER), "nodes"], capture_output=True, text=True,
                             timeout=guard(120), check=True).stdout
    for line in listing.splitlines():
        kind, number, _, _, dirs = (line.split(" ", 4) + [""])[:5]
        if kind == "nodemanager" and any(folder.startswith(d + "/") for d in dirs.split(",")):
            return int(number)
    raise AssertionError(f"no NodeManager holds {folder}:\n{listing}")


def _ends(pid: int) -> bool:
    """Whether process ``pid`` ends (or is left a zombie) within 30 s."""
    deadline = time.monotonic() + guard(30)
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.2)
    return False


def test_a_lost_datanode_and_nodemanager_mid_job_cost_time_not_data(
        cluster_env, fault_web, tmp_path):
    """While the segment job's map task runs, its NodeManager (with the task, and the
    application master when it runs there too) and a DataNode stop: the cluster notices
    both within seconds, YARN runs the lost work again on the other node (a new attempt of
    the application master too, which recovers the job), HDFS serves the other replica, and
    the database equals the fault-free one.  Last but one: it leaves one node of each."""
    build = _start_build(cluster_env, tmp_path, fault_web, tmp_path / "db", "nodes")
    try:
        task, folder = _wait_for_task(build, "mapper", "segment.py")
        stopped = []
        for kind, number in (("nodemanager", _node_manager_of(folder)), ("datanode", 1)):
            done = subprocess.run([str(MINICLUSTER), "stop-node", kind, str(number)],
                                  capture_output=True, text=True, timeout=guard(120))
            assert done.returncode == 0, done.stderr
            address = re.search(r"\((\S+)\)", done.stdout)
            assert address, done.stdout
            stopped.append(address.group(1))
        assert _ends(task), "the task's Python outlived its NodeManager"
    finally:
        out, err = _finish(build, 1200)
    assert build.returncode == 0, err[-3000:]
    _same_database(tmp_path / "db", fault_web)
    # the cluster noticed: the NodeManager lost, the DataNode dead
    cluster_log = (RUN / "logs" / "minicluster.out").read_text(errors="replace")
    node_manager, data_node = stopped
    assert re.search(rf"{re.escape(node_manager)} Node Transitioned from RUNNING to (LOST|SHUTDOWN)",
                     cluster_log)
    assert f"removeDeadDatanode: lost heartbeat from {data_node}" in cluster_log


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
