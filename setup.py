"""relatedpages: related web pages by block co-citation on Hadoop Streaming."""
import hashlib
from pathlib import Path

from setuptools import Extension, find_packages, setup

HERE = Path(__file__).resolve().parent
#: The compiled scan: one extension module per .pyx, cimporting each other's .pxd
#: (segmenter/native_scan.pyx says which does what).
NATIVE_SOURCES = "segmenter/native_*.pyx"


def native_sources_sha256() -> str:
    """sha256 of the compiled scan's sources, every ``segmenter/native_*.pyx`` and ``.pxd``
    by name: the same digest as ``segmenter.scan.native_sources_sha256`` (which compares it
    with the one the compiled scan was built with)."""
    digest = hashlib.sha256()
    sources = [*(HERE / "segmenter").glob("native_*.pyx"), *(HERE / "segmenter").glob("native_*.pxd")]
    for path in sorted(sources, key=lambda path: path.name):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# Pinned to versions that work together on Python 3.11 (mrjob 0.7.4 is the last
# release and imports `pipes`, removed in 3.13).  colormath2 is the maintained
# fork of colormath; we use only its colour *conversion* (colormath 3.0.0's
# delta_e_* crash on NumPy >= 1.23) and compute CIELAB distances ourselves.
INSTALL_REQUIRES = [
    "mrjob==0.7.4",
    "PyYAML==6.0.3",
    "lxml==6.1.3",
    "nltk==3.10.4",
    "jieba==0.42.1",
    "tldextract==5.4.0",
    "colormath2==3.0.3",
    "warcio==1.8.1",
    "fastwarc==2.0.0",
    "charset-normalizer==3.5.2",
    "matplotlib==3.11.2",
    "tqdm==4.70.1",  # the progress line's bar and rates (jobs/progress.py)
    "flask==3.1.3",  # relatedpages serve: the WSGI app
    "gunicorn==27.0.1",  # relatedpages serve --server gunicorn: the pre-fork server
    "granian==2.8.7",  # relatedpages serve: the default server, its HTTP core compiled (Rust)
    "uvloop==0.22.1",  # granian's event loop (relatedpages/serve/server.py)
    "numpy==2.4.6",  # the connectivity server's arrays and LLI's SVD (also matplotlib's)
    "zstandard==0.25.0",  # database format 2: the zstd blocks of relatedpages/store/dbblocks.py
]

#: mrjob's ``-r spark`` on pyspark's local master (Spark's jars come in the wheel), pinned like
#: the rest: 3.5.9 runs mrjob 0.7.4's harness on Java 17 (tests/test_job_spark.py).
SPARK_REQUIRES = ["pyspark==3.5.9"]

#: The documentation site (docs/conf.py): Sphinx with MyST Markdown pages.
DOCS_REQUIRES = ["sphinx==9.0.4", "myst-parser==5.2.0"]

TEST_REQUIRES = [
    "pytest==9.2.0",
    "pytest-xdist==3.8.0",  # scripts/test: the Hadoop tests in one lane, the rest beside them
    "hypothesis==6.170.15",
    "mypy==2.4.1",
    "lxml-stubs==0.5.1",
    "selenium==4.50.0",  # the explorer's tests drive Debian's chromium (chromium-driver)
    "networkx==3.6.1",  # the walk baselines are checked against its pagerank
    "scipy==1.17.1",  # networkx.pagerank needs it
    *SPARK_REQUIRES,  # the Spark runner's tests and bench_scale.py --spark
    *DOCS_REQUIRES,  # tests/test_docs.py builds the documentation site with -W
]


def native_extensions() -> list[Extension]:
    """The compiled scan (README "Speed"), built with Cython against lxml's own headers
    (pyproject.toml's build requirements).  ``optional``: without a C compiler, or when
    Cython or lxml is missing, the package installs as pure Python and ``segmenter.scan``
    runs its own scan (same output, slower)."""
    try:
        import lxml
        from Cython.Build import cythonize
        from Cython.Compiler.Errors import CompileError
    except ImportError as error:
        print(f"relatedpages: {NATIVE_SOURCES} not compiled ({error}): pure-Python segmenter")
        return []
    # segmenter.scan uses the compiled scan only while the sources it was built from are unchanged
    digest = native_sources_sha256()
    extensions = [
        Extension(f"segmenter.{path.stem}", [str(path.relative_to(HERE))],
                  include_dirs=lxml.get_include(),
                  define_macros=[("NATIVE_SCAN_SOURCE_SHA256", f'"{digest}"')]
                  if path.stem == "native_scan" else [])
        for path in sorted((HERE / "segmenter").glob("native_*.pyx"))
    ]
    try:
        extensions = cythonize(extensions, quiet=True, compiler_directives={"language_level": 3})
    except CompileError as error:
        print(f"relatedpages: {NATIVE_SOURCES} not compiled ({error}): pure-Python segmenter")
        return []
    for built in extensions:
        built.optional = True  # a C compiler error is a warning (cythonize drops the flag)
    return list(extensions)


setup(
    name="relatedpages",
    version="0.1.0",
    description="Related web pages by block co-citation, as mrjob jobs on Hadoop Streaming",
    license="MIT",
    python_requires=">=3.11,<3.12",
    packages=find_packages(include=["relatedpages*", "jobs*", "segmenter*", "filters*"]),
    package_data={"filters": ["data/*"], "relatedpages": ["serve/static/*", "study/static/*"],
                  "segmenter": ["native_*.pyi"]},
    # the configuration a user edits (filters/config.py finds it: a checkout's conf/ first)
    data_files=[("share/relatedpages/conf", ["conf/mrjob.conf", "conf/sites.tsv",
                                             "conf/stoplist.txt", "conf/relatedpages.cron"])],
    ext_modules=native_extensions(),
    install_requires=INSTALL_REQUIRES,
    extras_require={"test": TEST_REQUIRES, "spark": SPARK_REQUIRES, "docs": DOCS_REQUIRES},
    entry_points={"console_scripts": ["relatedpages=relatedpages.cli:main"]},
)
