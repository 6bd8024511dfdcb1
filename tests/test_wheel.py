"""The package installs from a wheel with its configuration (issue 13, item 5): built from
the tracked files, installed into a fresh virtual environment (its dependencies borrowed from
``.venv``, the checkout not importable), it runs the demo and a Companion query from a folder
outside the checkout, reading the installed ``share/relatedpages/conf``."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.prerequisites import guard

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_wheel_installs_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    source = tmp_path / "source"
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                            "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(source)],
                           capture_output=True, text=True, timeout=guard(600))
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("relatedpages-*.whl"))

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=guard(120))
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    # the dependencies from .venv, by a plain path line: .venv's own .pth files (the
    # editable install of this checkout) are not processed, so the checkout stays out
    (purelib / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                                "--no-deps", "--no-index", "--quiet", "--disable-pip-version-check",
                                str(wheel)], capture_output=True, text=True, timeout=guard(600))
    assert installed.returncode == 0, installed.stderr[-3000:]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env["PATH"]])

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(venv / "bin" / "relatedpages"), *args], cwd=elsewhere, env=env,
                              capture_output=True, text=True, timeout=guard(600))

    where = subprocess.run([str(python), "-c", "import relatedpages, filters.config as c; "
                            "print(relatedpages.__file__); print(c.conf_path('stoplist.txt'))"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert str(REPO) not in where[0] and where[0].startswith(str(venv))
    assert where[1] == str(venv / "share" / "relatedpages" / "conf" / "stoplist.txt")

    assert run("--version").stdout.strip() == "relatedpages 0.1.0"
    demo = run("demo", "--pages", "300", "--out", "demo", "--queries", "1")
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert (elsewhere / "demo" / "db" / "manifest.json").is_file()
    links = run("linkgraph", "build", "demo/crawl.warc.gz", "--db", "links")
    assert links.returncode == 0, links.stderr[-3000:]
    queried = subprocess.run([str(venv / "bin" / "relatedpages"), "query", "--links", "links",
                              "--algorithm", "companion", "--json", "--input", "-"],
                             input=demo.stdout.split("==> relatedpages query --db ")[1].split()[1] + "\n",
                             cwd=elsewhere, env=env, capture_output=True, text=True, timeout=guard(600))
    assert queried.returncode == 0, queried.stderr[-3000:]
    assert json.loads(queried.stdout)["found"] is True
