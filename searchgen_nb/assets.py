"""Offline front-end assets for the book, and the display object the notebooks emit.

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

import hashlib
import re
from pathlib import Path

__all__ = [
    "DATATABLES_GLOBAL",
    "HTMLFragment",
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
#: The global the converted DataTables bundle defines.
DATATABLES_GLOBAL = "SearchgenDataTables"
PROVENANCE_FILE = "VENDOR.txt"


class HTMLFragment:
    """A notebook display object that only emits ``text/html`` (plus a fixed plain-text label).

    Deterministic: no memory addresses in ``repr``, no random ids, no extra mime types (in
    particular no ``application/vnd.vegalite...`` bundle pointing at a CDN).
    """

    def __init__(self, html_text: str, label: str) -> None:
        self.html = html_text
        self.label = label

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html, "text/plain": f"<{self.label}>"}

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<{self.label}>"

    def __str__(self) -> str:
        return self.html

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HTMLFragment) and (self.html, self.label) == (other.html, other.label)

    def __hash__(self) -> int:
        return hash((self.html, self.label))


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


def vega_bundle() -> str:
    """Vega + Vega-Lite + vega-embed (with vega-tooltip) as one classic script.

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

_GLUE_JS = r"""/* searchgen-nb: table initialisation and an "N/A last" numeric sort type. */
(function () {
  "use strict";
  var lib = window.__DTGLOBAL__;
  if (!lib || !lib.DataTable) { return; }
  var DataTable = lib.DataTable;

  function num(v) {
    if (v === null || v === undefined) { return null; }
    var s = String(v).trim();
    if (s === "") { return null; }
    var x = parseFloat(s);
    return isNaN(x) ? null : x;
  }
  // Numbers from the cells' data-order attribute; empty (N/A) sorts last in BOTH directions.
  DataTable.type("sg-num-na", {
    className: "dt-type-numeric",
    order: {
      pre: num,
      asc: function (a, b) {
        if (a === null) { return b === null ? 0 : 1; }
        if (b === null) { return -1; }
        return a < b ? -1 : (a > b ? 1 : 0);
      },
      desc: function (a, b) {
        if (a === null) { return b === null ? 0 : 1; }
        if (b === null) { return -1; }
        return a < b ? 1 : (a > b ? -1 : 0);
      }
    }
  });

  // The prompt explorer: filters from the page's URL (?domain=FAS&model=m&status=scored), so a
  // link from any heatmap or table cell opens exactly that cell's prompts and can be shared.
  var FILTERS = { stratum: "stratum", domain: "domains", failure_mode: "failure_modes", slice: "slices" };
  function escapeRe(s) { return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }
  function columnIndex(table) {  // read before DataTables removes the hidden columns' headers
    var cols = {};
    table.querySelectorAll("thead th").forEach(function (th, i) { cols[th.getAttribute("data-sg-col")] = i; });
    return cols;
  }
  function filterFromUrl(table, api, cols) {
    var params = new URLSearchParams(window.location.search);
    var said = [];
    Object.keys(FILTERS).forEach(function (key) {
      var value = params.get(key);
      if (value && cols[FILTERS[key]] !== undefined) {
        api.column(cols[FILTERS[key]]).search("(^|\\s)" + escapeRe(value) + "(\\s|$)", true, false);
        said.push(key.replace("_", " ") + " " + value);
      }
    });
    var model = params.get("model"), status = params.get("status");
    if (model && cols["m:" + model] !== undefined) {
      api.column(cols["m:" + model]).nodes().each(function (td) { td.classList.add("sg-highlight"); });
      said.push("model " + model);
      if (status) {
        api.column(cols["statuses"]).search("(^|\\s)" + escapeRe(model + "=" + status) + "(\\s|$)", true, false);
        said.push("status " + status);
      }
    }
    api.draw();
    var n = api.rows({ search: "applied" }).count();
    table.setAttribute("data-sg-shown", String(n));
    var note = document.getElementById(table.id + "-filter");
    if (note) {
      note.textContent = said.length ? "Showing the " + n + " prompts of: " + said.join(", ") + ". " : "";
      if (said.length) {
        var a = document.createElement("a");
        a.href = window.location.pathname;
        a.textContent = "Show every prompt";
        note.appendChild(a);
      }
    }
  }

  // A leaderboard's tools: filter by model type; hide or show the component columns as a group.
  function wireTools(table, api, cols) {
    var tools = document.querySelector('.sg-table-tools[data-sg-for="' + table.id + '"]');
    if (!tools) { return; }
    tools.querySelectorAll("select[data-sg-filter-col]").forEach(function (sel) {
      var idx = cols[sel.getAttribute("data-sg-filter-col")];
      sel.addEventListener("change", function () {
        api.column(idx).search(sel.value ? "^" + sel.value + "$" : "", true, false).draw();
      });
    });
    tools.querySelectorAll("button[data-sg-toggle]").forEach(function (btn) {
      var which = api.columns("." + btn.getAttribute("data-sg-toggle"));
      btn.addEventListener("click", function () {
        var hide = btn.getAttribute("aria-pressed") !== "true";
        which.visible(!hide);
        btn.setAttribute("aria-pressed", hide ? "true" : "false");
        btn.textContent = hide ? "Show the components" : "Hide the components";
      });
    });
  }

  function initTables() {
    if (lib.set_or_remove_dark_class) {
      try { lib.set_or_remove_dark_class(); } catch (e) { /* theme detection is cosmetic */ }
    }
    document.querySelectorAll("table.sg-table").forEach(function (table) {
      if (DataTable.isDataTable(table)) { return; }
      var opts = {};
      try { opts = JSON.parse(table.getAttribute("data-sg-options") || "{}"); } catch (e) { opts = {}; }
      // DataTables applies columnDefs so that EARLIER entries win. Numbers sort best-first
      // (desc, then asc), text and ranks asc first; no third "unsorted" click state.
      opts.columnDefs = (opts.columnDefs || []).concat([
        { targets: "sg-asc-first", orderSequence: ["asc", "desc"] },
        { targets: "sg-hidden", visible: false },
        { targets: "sg-num", type: "sg-num-na", orderSequence: ["desc", "asc"] },
        { targets: "_all", orderSequence: ["asc", "desc"] }
      ]);
      var cols = columnIndex(table);
      var api = new DataTable(table, opts);
      if (table.hasAttribute("data-sg-explorer")) { filterFromUrl(table, api, cols); }
      wireTools(table, api, cols);
      // A help link inside a header opens the Methods page instead of re-sorting the table.
      table.querySelectorAll("thead a.sg-help").forEach(function (a) {
        a.addEventListener("click", function (ev) { ev.stopPropagation(); });
      });
      table.setAttribute("data-sg-ready", "1");
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initTables);
  } else {
    initTables();
  }
})();
"""

_GLUE_CSS = """/* searchgen-nb: N/A cells, unranked rows, badges, chart containers. */
.sg-table-wrap { overflow-x: auto; margin: 0.5em 0 1.5em 0; }
.sg-table-wrap table.sg-table { font-size: 0.8em; }
.sg-table-wrap table.sg-table thead th { vertical-align: bottom; }
.sg-table-wrap table.dataTable.compact > thead > tr > th,
.sg-table-wrap table.dataTable.compact > tbody > tr > td { padding: 4px 6px; }
table.sg-table td.sg-na { color: #6c6c6c; font-style: italic; }
table.sg-table tr.sg-unranked td { background-color: rgba(127, 127, 127, 0.08); }
table.sg-table .sg-badge {
  display: inline-block; margin-left: 0.4em; padding: 0 0.4em; border-radius: 0.6em;
  font-size: 0.8em; font-weight: normal; white-space: nowrap;
  background: #fde2c8; color: #7a3d00; border: 1px solid #f0b27a;
}
table.sg-table .sg-model-id { display: block; font-size: 0.8em; color: #6c6c6c; }
table.sg-table a.sg-help { text-decoration: none; font-size: 0.8em; margin-left: 0.2em; }
table.sg-table caption { caption-side: top; text-align: left; font-weight: bold; }
.sg-chart { margin: 0.5em 0 1.5em 0; max-width: 100%; overflow-x: auto; }
.sg-chart-fallback { color: #6c6c6c; font-style: italic; }
.sg-demo-banner {
  margin: 0.5em 0 1em 0; padding: 0.6em 0.9em; border-radius: 0.3em;
  background: #fff4d6; color: #5a4300; border: 1px solid #e6c35c; border-left: 6px solid #d9a400;
}
.sg-note { padding: 0.5em 0.8em; border-left: 4px solid #8aa4c8; background: rgba(138, 164, 200, 0.1); }
details.sg-model-tags { margin: 0.3em 0; }
.sg-chart-legend { font-size: 0.85em; color: #555; margin-top: -0.8em; }
/* the book's pages hold wide tables: use the window's width (no secondary sidebar) */
.bd-page-width { max-width: 100%; }
.bd-main .bd-content .bd-article-container { max-width: 100%; }
table.sg-table td.sg-num, table.sg-table td.sg-nowrap { white-space: nowrap; }
table.sg-table th[data-sg-col="overall_9"] { white-space: nowrap; }
table.sg-table th[data-sg-col="overall_10"] { min-width: 7.5em; }
details.sg-model-tags > summary { cursor: pointer; padding: 0.2em 0; }
table.sg-table thead th { white-space: normal; }
table.sg-explorer td.sg-highlight { background: rgba(255, 214, 102, 0.35); font-weight: bold; }
.sg-explorer-filter { font-weight: bold; }
.sg-table-tools { margin: 0.3em 0; font-size: 0.85em; display: flex; gap: 1em; align-items: center; flex-wrap: wrap; }
.sg-table-tools select, .sg-table-tools button { font-size: 1em; padding: 0.1em 0.4em; }
@media print { .sg-table-tools { display: none !important; } }
/* leaderboards: the model column stays put while the numbers scroll */
table.sg-leaderboard > thead > tr > th:nth-child(2),
table.sg-leaderboard > tbody > tr > td:nth-child(2) {
  position: sticky; left: 0; z-index: 1; background: var(--pst-color-background, #fff);
}
table.sg-leaderboard > tbody > tr.sg-unranked > td:nth-child(2) { background: var(--pst-color-surface, #f3f3f3); }
/* phones: rank, model and Overall-9 fit the screen (type and the model id give way) */
@media (max-width: 640px) {
  table.sg-leaderboard > thead > tr > th:nth-child(3),
  table.sg-leaderboard > tbody > tr > td:nth-child(3) { display: none; }
  table.sg-leaderboard .sg-model-id { display: none; }
  table.sg-leaderboard .sg-badge { white-space: normal; }
  .bd-main .bd-content .bd-article-container { padding-left: 0.4rem; padding-right: 0.4rem; }
}
/* print: tables wrap instead of scrolling, controls are hidden, the demo banner stays */
@media print {
  .sg-table-wrap, .sg-chart { overflow: visible !important; }
  table.sg-table { font-size: 7pt !important; width: 100% !important; }
  table.sg-table td.sg-num, table.sg-table td.sg-nowrap, table.sg-table th { white-space: normal !important; }
  table.sg-leaderboard > thead > tr > th:nth-child(2), table.sg-leaderboard > tbody > tr > td:nth-child(2) { position: static; }
  .dt-search, .dt-length, .dt-paging, .dt-info, .dataTables_filter, .dataTables_length, .dataTables_paginate, .dataTables_info,
  details.hide.above-input, .cell_input, .toggle-details, button.toggle-button, .vega-embed details, a.sg-help,
  .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article, .prev-next-area, .bd-footer, .bd-footer-content,
  .search-button, .theme-switch-button { display: none !important; }
  .bd-header-announcement, .sg-demo-banner { display: block !important; position: static !important; visibility: visible !important; }
  details.sg-slice, details.sg-model-tags { display: block; }
}
"""


def _glue_js() -> str:
    return _GLUE_JS.replace("__DTGLOBAL__", DATATABLES_GLOBAL)


# --------------------------------------------------------------------------- writing

def _vendor_files() -> dict[str, str]:
    dt_js, dt_css = datatables_bundle()
    return {
        "vega-embed.bundle.js": vega_bundle(),
        "datatables.bundle.js": dt_js,
        "datatables.bundle.css": dt_css,
        "searchgen-nb.js": _glue_js(),
        "searchgen-nb.css": _GLUE_CSS,
    }


def _write_if_changed(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    if path.is_file() and path.read_bytes() == data:
        return  # keep mtimes stable too: Sphinx then sees nothing new
    path.write_bytes(data)


def write_vendor_assets(dest: Path | str) -> list[str]:
    """Write the offline JS/CSS into ``dest`` (created if needed); byte-identical on rerun.

    Returns the file names in load order, JS first then CSS; split them with
    ``[n for n in names if n.endswith(".js")]`` for ``html_js_files`` and ``.css`` for
    ``html_css_files`` (or use :func:`sphinx_config_snippet`). A ``VENDOR.txt`` with the
    sha256 of each file is written alongside (not returned: it is not loaded by pages).
    """
    dest = Path(dest)
    if dest.name == "_static":
        raise ValueError("do not vendor into a folder named _static (Jupyter Book 1 auto-loads every .js in it)")
    dest.mkdir(parents=True, exist_ok=True)
    files = _vendor_files()
    names = list(VENDOR_JS) + list(VENDOR_CSS)
    assert set(names) == set(files)
    lines = [
        "Generated by searchgen_nb.assets.write_vendor_assets(); do not edit, do not commit.",
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
    ``extra_extensions`` loads this module as a Sphinx extension (:func:`setup`): it removes
    the duplicate inline scripts Jupyter Book emits and turns any web-hosted script/style
    (e.g. MathJax on a page with math) into a warning, i.e. a failed ``-W`` build. It needs
    ``searchgen_nb`` importable by ``jupyter-book`` (installed in the venv); otherwise use
    ``local_extensions: {searchgen_nb.assets: <repo root>}``. ``mathjax_path`` is left at its
    CDN default on purpose: the book has no math (``dollarmath``/``amsmath`` off), and a page
    that gets math anyway fails the build through the guard instead of loading silently broken.
    """
    return {
        "extra_extensions": ["searchgen_nb.assets"],
        "config": {
            "html_static_path": [vendor_dir],
            "html_js_files": list(VENDOR_JS),
            "html_css_files": list(VENDOR_CSS),
        },
    }


# --------------------------------------------------------------------------- Sphinx extension

_EXTERNAL_RE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.IGNORECASE)


def _asset_url(asset: object) -> str:
    # Sphinx 7.4 passes _JavaScript/_CascadingStyleSheet objects (their str() is a repr, not
    # the URL); inline scripts have filename None or "" depending on when they were added.
    filename = getattr(asset, "filename", asset)
    return "" if filename is None else str(filename)


def _asset_key(asset: object) -> tuple:
    attrs = getattr(asset, "attributes", None) or {}
    return (_asset_url(asset), tuple(sorted((str(k), str(v)) for k, v in attrs.items())))


def _page_assets_guard(app, pagename, templatename, context, doctree) -> None:
    """Per page: drop exact duplicate script/style entries and warn about any web URL.

    Jupyter Book 1.0.4 (Sphinx 7.4) emits sphinx-thebe's and sphinx-togglebutton's inline
    scripts twice on every page; the second ``const THEBE_JS_URL`` throws "Identifier
    'THEBE_JS_URL' has already been declared" in the console. A script or style sheet whose
    URL points at the web (MathJax from a page with math, require.js for widget outputs,
    thebe ``always_load``...) is reported as a warning, which ``-W`` turns into a failed build.
    """
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    for key in ("script_files", "css_files"):
        files = context.get(key)
        if not files:
            continue
        seen, kept = set(), []
        for asset in files:
            k = _asset_key(asset)
            if k in seen:
                continue
            seen.add(k)
            kept.append(asset)
            if _EXTERNAL_RE.match(_asset_url(asset)):
                logger.warning(
                    "%s: page loads %s from the web (the book must work offline)", pagename, _asset_url(asset),
                    type="searchgen", subtype="offline",
                )
        context[key] = kept


def setup(app):
    """Sphinx extension (``sphinx: extra_extensions: [searchgen_nb.assets]``): see
    :func:`_page_assets_guard`. It loads nothing itself; the assets come from ``_config.yml``."""
    app.connect("html-page-context", _page_assets_guard, priority=900)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
