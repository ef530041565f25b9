"""Offline front-end assets for the book (the display object the notebooks emit: :mod:`.display`).

The book must work opened from disk (``file://``) with no network, so every script and style
sheet a page needs is written once into a vendor folder (``book/vendor/``) at build time and
loaded on every page through Sphinx ``html_js_files`` / ``html_css_files``:

``vega-embed.bundle.js``
    Vega, Vega-Lite, vega-embed and vega-tooltip as produced by
    ``vl_convert.javascript_bundle()`` (pinned via ``vl-convert-python``), wrapped in an IIFE
    so its top-level ``const``/``function`` names do not leak into the page; it defines
    ``window.vegaEmbed``, ``window.vega`` and ``window.vegaLite``.
``datatables.bundle.js`` / ``datatables.bundle.css``
    DataTables 2 + jQuery as shipped inside the pinned ``itables`` wheel
    (``itables/html/dt_bundle.js``). That file is an ES module (one trailing ``export{...}``)
    and Chrome refuses module scripts from ``file://``, so the export statement is rewritten
    into ``window.SearchgenDataTables = {...}`` and the whole is wrapped in a strict-mode IIFE:
    a classic script that works from disk.
``searchgen-nb.js`` / ``searchgen-nb.css``
    Our glue: an "N/A last" numeric sort type for DataTables and the initialisation of every
    ``table.sg-table`` (options read from its ``data-sg-options`` attribute), plus styles for
    N/A cells, unranked badges and chart containers.

Nothing here is random or time-dependent: rerunning :func:`write_vendor_assets` gives
byte-identical files. The folder must NOT be called ``_static`` (Jupyter Book 1 then adds every
``.js`` in every static folder to every page); list it in ``html_static_path`` instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
from pathlib import Path

__all__ = [
    "DATATABLES_GLOBAL",
    "VENDOR_CSS",
    "VENDOR_JS",
    "datatables_bundle",
    "sphinx_config_snippet",
    "vega_bundle",
    "write_vendor_assets",
]

#: Load order matters: libraries first, then the glue that uses them.
VENDOR_JS = (
    "vega-embed.bundle.js",
    "datatables.bundle.js",
    "searchgen-nb.js",
)
VENDOR_CSS = (
    "datatables.bundle.css",
    "searchgen-nb.css",
)
#: A vendor script a page loads only when its body holds the marker (the book's Sphinx
#: extension drops it from every other page): Vega where a chart is drawn (charts.py), DataTables
#: where a table is enhanced (tables.py). Parsing both costs a page about a quarter of a second.
PAGE_SCRIPTS = {"vega-embed.bundle.js": 'class="sg-chart"', "datatables.bundle.js": "data-sg-options="}
#: The global the converted DataTables bundle defines.
DATATABLES_GLOBAL = "SearchgenDataTables"
PROVENANCE_FILE = "VENDOR.txt"




# --------------------------------------------------------------------------- bundles

def _vl_version() -> str | None:
    """The Vega-Lite ``major.minor`` altair writes specs for, if vl-convert ships it."""
    import vl_convert as vlc

    try:
        import altair as alt

        wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    except Exception:  # pragma: no cover - altair is a pinned dependency
        return None
    return wanted if wanted in vlc.get_vegalite_versions() else None


#: A folder that keeps vl-convert's bundle between processes (making it takes about a CPU-second):
#: when set, it is used instead of the one the caller names (a release names ``build/cache``
#: below its output root); the tests point every process of a run at one.
CACHE_ENV = "SEARCHGEN_CACHE_DIR"
_BODIES: dict[str, str] = {}  # this process's bundles, by cache key


def _vega_key() -> tuple[str, str | None]:
    """``(file stem, Vega-Lite version)`` of the bundle this environment makes: it depends only
    on the installed vl-convert and the Vega-Lite version altair writes specs for."""
    from importlib.metadata import version as installed

    vl = _vl_version()
    return f"vega-embed-vl-convert-{installed('vl-convert-python')}-vega-lite-{vl or 'latest'}", vl


def _make_vega_body(vl_version: str | None) -> str:
    """vl-convert's bundle of Vega, Vega-Lite and vega-embed (about a CPU-second)."""
    import vl_convert as vlc

    return vlc.javascript_bundle(vl_version=vl_version) if vl_version else vlc.javascript_bundle()


def _cached_vega_body(folder: Path | None, stem: str, vl: str | None) -> str:
    """vl-convert's bundle (``stem, vl``: :func:`_vega_key`), made once per process and, given a
    ``folder``, once per environment: kept there as ``<stem>.js`` with its sha256 in
    ``<stem>.js.sha256``, read back only when the digest matches (a damaged or half-written file
    is made again). Concurrent processes wait for the one making it (a lock file beside it). A
    folder that cannot be written is no error: the bundle is then made for this process only."""
    if stem not in _BODIES:
        body = None
        if folder is not None:
            with contextlib.suppress(OSError):
                body = _kept_body(folder, stem, vl)
        _BODIES[stem] = body if body is not None else _make_vega_body(vl)
    return _BODIES[stem]


def _kept_body(folder: Path, stem: str, vl: str | None) -> str:
    """The bundle kept in ``folder`` (made and kept there when missing or damaged)."""
    folder.mkdir(parents=True, exist_ok=True)
    path, digest_path = folder / f"{stem}.js", folder / f"{stem}.js.sha256"
    with open(folder / f"{stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with contextlib.suppress(OSError, UnicodeDecodeError):
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() == digest_path.read_text(encoding="ascii").strip():
                return data.decode("utf-8")
        body = _make_vega_body(vl)
        data = body.encode("utf-8")
        for target, content in ((path, data), (digest_path, hashlib.sha256(data).hexdigest().encode("ascii") + b"\n")):
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_bytes(content)
            os.replace(tmp, target)
        return body


def vega_bundle(cache: Path | str | None = None) -> str:
    """Vega + Vega-Lite + vega-embed (with vega-tooltip) as one classic script.

    vl-convert bundles it anew on each call (about a second); it only depends on the installed
    vl-convert and altair, so it is made once per process, and once per environment when a
    ``cache`` folder is given or :data:`CACHE_ENV` names one (which takes precedence).

    ``vl_convert.javascript_bundle()`` already ends with ``window.vegaEmbed=...``; its many
    top-level ``const`` declarations would clash with other scripts if loaded bare, so it is
    wrapped in an IIFE.
    """
    import vl_convert as vlc

    folder = os.environ.get(CACHE_ENV) or cache
    stem, version = _vega_key()
    body = _cached_vega_body(Path(folder) if folder else None, stem, version)
    if "window.vegaEmbed=" not in body.replace(" ", ""):
        raise RuntimeError("vl_convert.javascript_bundle() no longer assigns window.vegaEmbed")
    header = (
        "/* Vega {vega} / Vega-Lite {vl} / vega-embed {embed}, bundled by vl-convert "
        "(vl_convert.javascript_bundle). BSD-3-Clause, https://vega.github.io */\n"
    ).format(
        vega=vlc.get_vega_version(),
        vl=version or "latest",
        embed=vlc.get_vega_embed_version(),
    )
    return header + "(function(){\n" + body + "\n})();\n"


_EXPORT_RE = re.compile(r"export\s*\{([^}]*)\}\s*;?")


def _itables_html_dir() -> Path:
    import itables

    return Path(itables.__file__).resolve().parent / "html"


@functools.cache
def datatables_bundle() -> tuple[str, str]:
    """(js, css): itables' offline DataTables bundle, converted from ES module to classic script."""
    folder = _itables_html_dir()
    js = (folder / "dt_bundle.js").read_text(encoding="utf-8")
    css = (folder / "dt_bundle.css").read_text(encoding="utf-8")
    matches = list(_EXPORT_RE.finditer(js))
    if len(matches) != 1:
        raise RuntimeError(f"expected exactly one export statement in itables dt_bundle.js, found {len(matches)}")
    if re.search(r"(^|[;\s])import[\s{*(]|import\.meta", js):
        raise RuntimeError("itables dt_bundle.js imports other modules; cannot convert to a classic script")
    pairs = []
    for item in matches[0].group(1).split(","):
        local, _, exported = item.strip().partition(" as ")
        exported = exported.strip() or local
        if exported == "default":
            exported = "DataTable"
        pairs.append(f"{exported}:{local.strip()}")
    assignment = f"window.{DATATABLES_GLOBAL}={{{','.join(sorted(pairs))}}};"
    m = matches[0]
    converted = js[: m.start()] + assignment + js[m.end():]
    try:
        from itables.version import __version__ as itables_version
    except Exception:  # pragma: no cover
        itables_version = "?"
    header = (
        f"/* DataTables + jQuery from itables {itables_version} (itables/html/dt_bundle.js), "
        f"MIT; ES module converted to a classic script defining window.{DATATABLES_GLOBAL}. */\n"
    )
    return header + '(function(){"use strict";\n' + converted + "\n})();\n", css


# --------------------------------------------------------------------------- glue




def _static(name: str) -> str:
    """A file of ``searchgen_nb/book/static/`` (package data: real JS/CSS files)."""
    from importlib import resources

    return resources.files("searchgen_nb.book").joinpath("static", name).read_text(encoding="utf-8")


def _glue_js() -> str:
    return _static("searchgen-nb.js").replace("__DTGLOBAL__", DATATABLES_GLOBAL)


# --------------------------------------------------------------------------- writing

def _vendor_files(cache: Path | str | None = None) -> dict[str, str]:
    dt_js, dt_css = datatables_bundle()
    return {
        "vega-embed.bundle.js": vega_bundle(cache),
        "datatables.bundle.js": dt_js,
        "datatables.bundle.css": dt_css,
        "searchgen-nb.js": _glue_js(),
        "searchgen-nb.css": _static("searchgen-nb.css"),
    }


def _write_if_changed(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    if path.is_file() and path.read_bytes() == data:
        return  # keep mtimes stable too: Sphinx then sees nothing new
    path.write_bytes(data)


def write_vendor_assets(dest: Path | str, cache: Path | str | None = None) -> list[str]:
    """Write the offline JS/CSS into ``dest`` (created if needed); byte-identical on rerun.
    ``cache``: a folder keeping the Vega bundle between processes (:func:`vega_bundle`).

    Returns the file names in load order, JS first then CSS; split them with
    ``[n for n in names if n.endswith(".js")]`` for ``html_js_files`` and ``.css`` for
    ``html_css_files`` (or use :func:`sphinx_config_snippet`). A ``VENDOR.txt`` with the
    sha256 of each file is written alongside (not returned: it is not loaded by pages).
    """
    dest = Path(dest)
    if dest.name == "_static":
        raise ValueError("do not vendor into a folder named _static (Jupyter Book 1 auto-loads every .js in it)")
    dest.mkdir(parents=True, exist_ok=True)
    files = _vendor_files(cache)
    names = list(VENDOR_JS) + list(VENDOR_CSS)
    assert set(names) == set(files)
    lines = [
        "Generated by searchgen_nb.book.assets.write_vendor_assets(); do not edit, do not commit.",
        "Loaded on every page via Sphinx html_js_files / html_css_files (see _config.yml).",
        "",
    ]
    for name in names:
        _write_if_changed(dest / name, files[name])
        digest = hashlib.sha256(files[name].encode("utf-8")).hexdigest()
        lines.append(f"{digest}  {name}")
    _write_if_changed(dest / PROVENANCE_FILE, "\n".join(lines) + "\n")
    return names


def sphinx_config_snippet(vendor_dir: str = "vendor") -> dict:
    """The ``sphinx:`` block of ``_config.yml`` that loads the vendored assets.

    ``vendor_dir`` is relative to the book root (the folder of ``_config.yml``); Sphinx copies
    its files into ``_build/html/_static/`` and adds ``?v=<checksum>`` to the URLs.
    ``extra_extensions`` loads :mod:`searchgen_nb.book.sphinx_ext` as a Sphinx extension: it removes
    the duplicate inline scripts Jupyter Book emits and turns any web-hosted script/style
    (e.g. MathJax on a page with math) into a warning, i.e. a failed ``-W`` build. It needs
    ``searchgen_nb`` importable by ``jupyter-book`` (installed in the venv); otherwise use
    ``local_extensions: {searchgen_nb.book.sphinx_ext: <repo root>}``. ``mathjax_path`` is left at its
    CDN default on purpose: the book has no math (``dollarmath``/``amsmath`` off), and a page
    that gets math anyway fails the build through the guard instead of loading silently broken.
    """
    return {
        "extra_extensions": ["searchgen_nb.book.sphinx_ext"],
        "config": {
            "html_static_path": [vendor_dir],
            "html_js_files": list(VENDOR_JS),
            "html_css_files": list(VENDOR_CSS),
        },
    }
