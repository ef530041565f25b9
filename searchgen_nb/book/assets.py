"""Offline front-end assets for the book (the display object the notebooks emit: :mod:`.display`).

The book must work opened from disk (``file://``) with no network, so every script and style
sheet a page needs is written into a vendor folder (``book/vendor/``) at build time and
loaded through Sphinx ``html_js_files`` / ``html_css_files`` (``_config.yml``):

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
    Our glue (``static/``): an "N/A last" numeric sort type for DataTables and the
    initialisation of every ``table.sg-table`` (options read from its ``data-sg-options``
    attribute), plus styles for N/A cells, unranked badges and chart containers.

Nothing here is random or time-dependent: rerunning :func:`write_vendor_assets` gives
byte-identical files. The folder must NOT be called ``_static`` (Jupyter Book 1 then adds every
``.js`` in every static folder to every page); list it in ``html_static_path`` instead.
"""

from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources
from pathlib import Path

#: Load order matters: libraries first, then the glue that uses them.
VENDOR_JS = ("vega-embed.bundle.js", "datatables.bundle.js", "searchgen-nb.js")
VENDOR_CSS = ("datatables.bundle.css", "searchgen-nb.css")
#: A vendor script a page loads only when its body holds the marker (the book's Sphinx
#: extension drops it from every other page): Vega where a chart is drawn (charts.py), DataTables
#: where a table is enhanced (tables.py). Parsing both costs a page about a quarter of a second.
PAGE_SCRIPTS = {"vega-embed.bundle.js": 'class="sg-chart"',
                "datatables.bundle.js": "data-sg-options="}
#: The global the converted DataTables bundle defines.
DATATABLES_GLOBAL = "SearchgenDataTables"
PROVENANCE_FILE = "VENDOR.txt"


def _vl_version() -> str | None:
    """The Vega-Lite ``major.minor`` altair writes specs for, if vl-convert ships it."""
    import altair as alt
    import vl_convert as vlc

    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return wanted if wanted in vlc.get_vegalite_versions() else None


@functools.cache
def vega_bundle() -> str:
    """Vega + Vega-Lite + vega-embed (with vega-tooltip) as one classic script, made by
    vl-convert (about a CPU-second, once per process).

    ``vl_convert.javascript_bundle()`` already ends with ``window.vegaEmbed=...``; its many
    top-level ``const`` declarations would clash with other scripts if loaded bare, so it is
    wrapped in an IIFE.
    """
    import vl_convert as vlc

    version = _vl_version()
    body = vlc.javascript_bundle(vl_version=version) if version else vlc.javascript_bundle()
    if "window.vegaEmbed=" not in body.replace(" ", ""):
        raise RuntimeError("vl_convert.javascript_bundle() no longer assigns window.vegaEmbed")
    header = (
        f"/* Vega {vlc.get_vega_version()} / Vega-Lite {version or 'latest'} / vega-embed "
        f"{vlc.get_vega_embed_version()}, bundled by vl-convert "
        "(vl_convert.javascript_bundle). BSD-3-Clause, https://vega.github.io */\n"
    )
    return header + "(function(){\n" + body + "\n})();\n"


_EXPORT_RE = re.compile(r"export\s*\{([^}]*)\}\s*;?")


@functools.cache
def datatables_bundle() -> tuple[str, str]:
    """(js, css): itables' offline DataTables bundle, converted from ES module to classic script."""
    import itables
    from itables.version import __version__ as itables_version

    folder = Path(itables.__file__).resolve().parent / "html"
    js = (folder / "dt_bundle.js").read_text(encoding="utf-8")
    css = (folder / "dt_bundle.css").read_text(encoding="utf-8")
    matches = list(_EXPORT_RE.finditer(js))
    if len(matches) != 1:
        raise RuntimeError("expected exactly one export statement in itables dt_bundle.js, "
                           f"found {len(matches)}")
    if re.search(r"(^|[;\s])import[\s{*(]|import\.meta", js):
        raise RuntimeError("itables dt_bundle.js imports other modules; "
                           "cannot convert to a classic script")
    pairs = []
    for item in matches[0].group(1).split(","):
        local, _, exported = item.strip().partition(" as ")
        exported = exported.strip() or local
        pairs.append(f"{'DataTable' if exported == 'default' else exported}:{local.strip()}")
    m = matches[0]
    assignment = f"window.{DATATABLES_GLOBAL}={{{','.join(sorted(pairs))}}};"
    header = (
        f"/* DataTables + jQuery from itables {itables_version} (itables/html/dt_bundle.js), "
        f"MIT; ES module converted to a classic script defining window.{DATATABLES_GLOBAL}. */\n"
    )
    converted = js[: m.start()] + assignment + js[m.end():]
    return header + '(function(){"use strict";\n' + converted + "\n})();\n", css


def _static(name: str) -> str:
    """A file of ``searchgen_nb/book/static/`` (package data: real JS/CSS files)."""
    return resources.files("searchgen_nb.book").joinpath("static", name).read_text(encoding="utf-8")


def write_vendor_assets(dest: Path | str) -> list[str]:
    """Write the offline JS/CSS into ``dest`` (created if needed), byte-identical on rerun,
    with a ``VENDOR.txt`` holding the sha256 of each file; return the file names in load
    order, JS first then CSS (as ``html_js_files`` / ``html_css_files`` list them)."""
    dest = Path(dest)
    if dest.name == "_static":
        raise ValueError("do not vendor into a folder named _static "
                         "(Jupyter Book 1 auto-loads every .js in it)")
    dest.mkdir(parents=True, exist_ok=True)
    dt_js, dt_css = datatables_bundle()
    files = {
        "vega-embed.bundle.js": vega_bundle(),
        "datatables.bundle.js": dt_js,
        "searchgen-nb.js": _static("searchgen-nb.js").replace("__DTGLOBAL__", DATATABLES_GLOBAL),
        "datatables.bundle.css": dt_css,
        "searchgen-nb.css": _static("searchgen-nb.css"),
    }
    lines = [
        "Generated by searchgen_nb.book.assets.write_vendor_assets(); do not edit, do not commit.",
        "Loaded on every page via Sphinx html_js_files / html_css_files (see _config.yml).",
        "",
    ]
    for name in (*VENDOR_JS, *VENDOR_CSS):
        (dest / name).write_text(files[name], encoding="utf-8", newline="")
        lines.append(f"{hashlib.sha256(files[name].encode('utf-8')).hexdigest()}  {name}")
    (dest / PROVENANCE_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    return [*VENDOR_JS, *VENDOR_CSS]
