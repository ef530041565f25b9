/* searchgen-nb: table initialisation and an "N/A last" numeric sort type. */
(function () {
  "use strict";
  var lib = window.__DTGLOBAL__;
  if (!lib || !lib.DataTable) { return; }
  var DataTable = lib.DataTable;
  // Tables stay hidden until DataTables has made them (searchgen-nb.css): the browser does not
  // lay out every row of a long table that is then shown a page at a time (the prompt
  // explorer: half the page's work). Only when this script runs: without it, tables show.
  document.documentElement.classList.add("sg-tables-js");

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
  // A filter compares whole values, read from each row's data-sg-values (the tag "A B" is
  // neither "A" nor "B"); a URL parameter is only compared as a string, never compiled.
  var SHOWN = 80;  // characters of a parameter repeated in the filter's note
  function clip(s) { return s.length > SHOWN ? s.slice(0, SHOWN - 1) + "\u2026" : s; }
  function columnIndex(table) {  // read before DataTables removes the hidden columns' headers
    var cols = {};
    table.querySelectorAll("thead th").forEach(function (th, i) { cols[th.getAttribute("data-sg-col")] = i; });
    return cols;
  }
  function rowValues(tr) {
    if (!tr.sgValues) {
      try { tr.sgValues = JSON.parse(tr.getAttribute("data-sg-values") || "{}"); } catch (e) { tr.sgValues = {}; }
    }
    return tr.sgValues;
  }
  function holds(list, value) { return Array.isArray(list) && list.indexOf(value) !== -1; }
  // The table's filters, as the page declares them: {"filters": {URL key: row value key},
  // "lists": [row value keys shown as lists]} (a breakdown's by_<name> is both).
  function tableFilters(table) {
    try { return JSON.parse(table.getAttribute("data-sg-filters") || "{}"); } catch (e) { return {}; }
  }
  // A model's status on a row: its statuses name the models without a score only.
  function statusOf(v, model) {
    var s = v.statuses || {};
    return Object.prototype.hasOwnProperty.call(s, model) ? s[model] : "scored";
  }
  // Scroll the table's own frame (not the page) so that a column shows beside the sticky first one.
  function showColumn(table, th) {
    for (var f = table.parentElement; f && f !== document.body; f = f.parentElement) {
      if (f.scrollWidth > f.clientWidth && getComputedStyle(f).overflowX !== "visible") {
        var first = table.querySelector("thead th");
        f.scrollLeft = Math.max(0, th.offsetLeft - (first ? first.offsetWidth : 0));
        return;
      }
    }
  }
  function filterFromUrl(table, api, cols) {
    var params = new URLSearchParams(window.location.search);
    var tests = [], said = [], filters = tableFilters(table).filters || {};
    Object.keys(filters).forEach(function (key) {
      var value = params.get(key);
      if (value) {
        tests.push(function (v) { return holds(v[filters[key]], value); });
        said.push(key.replace("_", " ") + " " + clip(value));
      }
    });
    var model = params.get("model"), status = params.get("status"), whose = "";
    if (model && cols["m:" + model] !== undefined) {
      api.column(cols["m:" + model]).nodes().each(function (td) { td.classList.add("sg-highlight"); });
      var name = clip(api.column(cols["m:" + model]).header().textContent.trim() || model);
      if (status) {
        // status=not_scored: every status but scored (a leaderboard's coverage link)
        tests.push(function (v) {
          var s = statusOf(v, model);
          return status === "not_scored" ? s !== "scored" : s === status;
        });
      }
      if (status === "not_scored") { whose = " of " + name + " without a score"; }
      else { said.push("model " + name); if (status) { said.push("status " + clip(status)); } }
    }
    if (tests.length) {
      DataTable.ext.search.push(function (settings, data, index) {
        if (settings.nTable !== table) { return true; }
        var v = rowValues(api.row(index).node());
        return tests.every(function (test) { return test(v); });
      });
    }
    api.draw();
    if (model && cols["m:" + model] !== undefined) {  // once the table is shown (data-sg-ready)
      var th = api.column(cols["m:" + model]).header();
      setTimeout(function () { showColumn(table, th); }, 0);
    }
    var n = api.rows({ search: "applied" }).count();
    table.setAttribute("data-sg-shown", String(n));
    var note = document.getElementById(table.id + "-filter");
    if (note) {
      var what = "Showing the " + (n === 1 ? "1 prompt" : n + " prompts") + whose;
      note.textContent = whose ? what + (said.length ? " in " + said.join(", ") : "") + ". "
        : said.length ? what + " of: " + said.join(", ") + ". " : "";
      if (said.length || whose) {
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
        // the header alone says a column is numeric: its cells get the class (alignment, CSS)
        { targets: "sg-num", type: "sg-num-na", className: "sg-num", orderSequence: ["desc", "asc"] },
        { targets: "_all", orderSequence: ["asc", "desc"] }
      ]);
      try {
        var cols = columnIndex(table);
        var api = table.sgApi = new DataTable(table, opts);
        if (table.hasAttribute("data-sg-explorer")) { filterFromUrl(table, api, cols); }
        wireTools(table, api, cols);
        // A help link inside a header opens the Methods page instead of re-sorting the table.
        table.querySelectorAll("thead a.sg-help").forEach(function (a) {
          a.addEventListener("click", function (ev) { ev.stopPropagation(); });
        });
      } catch (e) {
        console.error("searchgen-nb: table " + table.id + " could not be made interactive: " + e);
      } finally {
        table.setAttribute("data-sg-ready", "1");  // shown, made or not (searchgen-nb.css)
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", initTables);
  } else {
    initTables();
  }
})();

/* searchgen-nb: the prompt explorer's "Download these rows (CSV)": the rows it shows (filter,
   search and order applied), each model's value as it counts (0 when zero-filled, empty when
   excluded or N/A) and its status; a list (domains, failure modes, slices) as its JSON array,
   so that the tag "A B" stays one tag; a text cell starting with = + - @ tab or CR gets a leading
   ' (as searchgen_nb/untrusted.py csv_cell), so a spreadsheet never reads it as a formula. */
(function () {
  "use strict";
  function cell(text, isText) {
    var s = String(text === null || text === undefined ? "" : text);
    if (isText && /^[=+\-@\t\r]/.test(s)) { s = "'" + s; }
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function rowsCsv(table, api) {
    var keys = [], lines = [], lists = {};
    try { JSON.parse(table.getAttribute("data-sg-filters") || "{}").lists.forEach(function (k) { lists[k] = true; }); } catch (e) { lists = {}; }
    api.columns().every(function (i) { keys.push([i, this.header().getAttribute("data-sg-col")]); });
    keys = keys.filter(function (k) { return k[1] && k[1] !== "statuses"; });
    var head = [];
    keys.forEach(function (k) {
      if (k[1].indexOf("m:") === 0) { head.push(cell(k[1].slice(2), true), cell(k[1].slice(2) + " status", true)); }
      else { head.push(cell(k[1], true)); }
    });
    lines.push(head.join(","));
    api.rows({ search: "applied", order: "applied" }).every(function (r) {
      var tr = this.node(), v = {}, out = [];
      try { v = JSON.parse(tr.getAttribute("data-sg-values") || "{}"); } catch (e) { v = {}; }
      keys.forEach(function (k) {
        var td = api.cell(r, k[0]).node(), num = td.classList.contains("sg-num");
        // its data-order, else the number its text starts with (tables.py: sorts as shown)
        var key = td.hasAttribute("data-order") ? td.getAttribute("data-order")
          : (/^\s*[+-]?\d*\.?\d+/.exec(td.textContent) || [""])[0].trim();
        if (k[1].indexOf("m:") === 0) {
          var s = v.statuses || {}, model = k[1].slice(2);  // only the models without a score
          out.push(cell(key, false), cell(Object.prototype.hasOwnProperty.call(s, model) ? s[model] : "scored", true));
        } else if (lists[k[1]] === true) { out.push(cell(JSON.stringify(v[k[1]] || []), true)); }
        else { out.push(num ? cell(key, false) : cell(td.textContent, true)); }
      });
      lines.push(out.join(","));
    });
    return lines.join("\n") + "\n";
  }
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("button.sg-export-rows");
    var table = btn && document.getElementById(btn.getAttribute("data-sg-for"));
    if (!table || !table.sgApi) { return; }
    var url = URL.createObjectURL(new Blob([rowsCsv(table, table.sgApi)], { type: "text/csv" }));
    var a = document.createElement("a");
    a.href = url; a.download = table.id + "-rows.csv";
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
  });
})();

/* ---- Prompt card (searchgen_nb.book.cards): book/prompt_card.html?id=<sample_id>[&tag=<tag>]
   drawn from evidence/index.js and the one evidence/shard-<n>.js holding the prompt, loaded by
   script tag (a book opened from disk cannot fetch); every string is set as text, never markup.
   A card link followed from a filtered prompt list carries the list's tag (&tag=). ---- */
(function () {
  "use strict";
  var SHOWN = 80;
  function clip(s) { s = String(s); return s.length > SHOWN ? s.slice(0, SHOWN - 1) + "\u2026" : s; }
  document.addEventListener("click", function (ev) {
    var a = ev.target && ev.target.closest ? ev.target.closest('a[href*="prompt_card.html?id="]') : null;
    if (!a) { return; }
    var params = new URLSearchParams(window.location.search), tag = null;
    var own = document.querySelector("table[data-sg-filters]"), keys = [];
    try { keys = own ? Object.keys(JSON.parse(own.getAttribute("data-sg-filters")).filters) : []; } catch (e) { keys = []; }
    keys.forEach(function (k) { tag = tag || params.get(k); });
    if (tag) { var u = new URL(a.href); u.searchParams.set("tag", tag); a.href = u.toString(); }
  });

  function el(name, cls, text) {
    var e = document.createElement(name);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function table(head, rows, cls) {
    var wrap = el("div", "sg-card-scroll"), t = el("table", "sg-card-table " + (cls || ""));
    var tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", null, h)); });
    t.appendChild(el("thead")).appendChild(tr);
    var body = t.appendChild(el("tbody"));
    rows.forEach(function (cells) {
      var row = body.appendChild(el("tr"));
      cells.forEach(function (c) { row.appendChild(c instanceof Node ? c : el("td", null, c)); });
    });
    wrap.appendChild(t);
    return wrap;
  }
  function tags(label, list, tag) {
    var p = el("p", "sg-card-tags");
    p.appendChild(el("strong", null, label + ": "));
    if (!list.length) { p.appendChild(el("span", "sg-na", "none")); }
    list.forEach(function (t) { p.appendChild(el("span", "sg-card-tag" + (t === tag ? " sg-card-this" : ""), t)); });
    return p;
  }
  // An unscored pair's cell says how it counts, as Python wrote it (searchgen_nb/book/fmt.py
  // unscored_cell): m.counts = [text, title, class, how it counts].
  function statusCell(m) {
    var td = el("td", m.counts[2], m.counts[0]);
    td.title = m.counts[1];
    return td;
  }
  function modelsTable(index, p, base) {
    var head = ["Model", "Image", "Status", "Overall-9", "Overall-10"].concat(index.components);
    return table(head, index.models.map(function (mn, k) {
      var m = p.models[mn[0]], img = el("td", "sg-card-thumb"), st = el("td");
      if (m.thumbnail) {
        var a = img.appendChild(el("a"));
        a.href = "#sg-card-m" + k; a.title = "the image at a larger size, with the judge's reasons";
        var i = a.appendChild(el("img"));
        i.src = base + m.thumbnail; i.alt = "thumbnail: " + mn[1]; i.width = 64; i.loading = "lazy";
        a.addEventListener("click", function () {
          var d = document.querySelector("#sg-card-m" + k + " details");
          if (d) { d.open = true; }
        });
      } else { img.textContent = "\u2013"; }
      st.appendChild(el("span", "sg-card-status", m.status.replace(/_/g, " ")));
      if (m.reason) { st.appendChild(el("span", "sg-card-reason", m.reason)); }
      if (m.counts) {
        if (m.counts[3]) { st.appendChild(el("span", "sg-card-reason", m.counts[3])); }
        var cells = [];
        for (var c = 0; c < 2 + m.components.length; c++) { cells.push(statusCell(m)); }
        return [mn[1], img, st].concat(cells);
      }
      return [mn[1], img, st, m.overall_9, m.overall_10].concat(m.components);
    }), "sg-card-models");
  }
  // Each model's image at the preview's size, side by side, and the judge's reasons beside
  // each score; a preview links to the full image when the release names where it is hosted.
  function gallery(index, p, base) {
    var url = (index.previews || {}).image_base_url, grid = el("div", "sg-card-gallery");
    index.models.forEach(function (mn, k) {
      var m = p.models[mn[0]], fig = grid.appendChild(el("figure", "sg-card-figure"));
      fig.id = "sg-card-m" + k;
      if (m.preview) {
        var a = fig.appendChild(el("a"));
        a.href = url && m.image ? url + m.image.split("/").map(encodeURIComponent).join("/") : base + m.preview;
        a.title = url && m.image ? "the full image" : "the preview on its own";
        var i = a.appendChild(el("img"));
        i.src = base + m.preview; i.alt = "generated image: " + mn[1]; i.loading = "lazy";
      } else { fig.appendChild(el("div", "sg-card-noimage", "no image")); }
      var cap = fig.appendChild(el("figcaption"));
      cap.appendChild(el("strong", null, mn[1]));
      cap.appendChild(document.createTextNode(m.status === "scored"
        ? " \u00b7 Overall-9 " + m.overall_9
        : " \u00b7 " + m.counts[0]));
      var rows = [];
      m.checklist.forEach(function (c, i) { rows.push([c[0] || p.checklist[i] || "item " + (i + 1), c[1], c[2]]); });
      m.rubric.forEach(function (r) { rows.push([r[0].replace(/_/g, " "), r[1], r[2]]); });
      (m.references || []).forEach(function (r) { rows.push([r[0].replace(/_/g, " "), r[1], r[2]]); });
      if (rows.some(function (r) { return r[2]; })) {
        var det = fig.appendChild(el("details", "sg-card-reasons"));
        det.appendChild(el("summary", null, "The judge's reasons"));
        det.appendChild(table(["Item or dimension", "Score (0\u20133)", "Reason"], rows.map(function (r) {
          return [r[0], r[1], el("td", "sg-card-why", r[2] || "\u2013")];
        }), "sg-card-why-table"));
      }
    });
    return grid;
  }
  function judgeTables(index, p) {
    var names = index.models.map(function (mn) { return mn[1]; }), out = [];
    var n = p.checklist.length;
    index.models.forEach(function (mn) { n = Math.max(n, p.models[mn[0]].checklist.length); });
    var rows = [];
    for (var i = 0; i < n; i++) {
      var text = p.checklist[i];
      index.models.forEach(function (mn) { var c = p.models[mn[0]].checklist[i]; text = text || (c && c[0]); });
      rows.push([text || "item " + (i + 1)].concat(index.models.map(function (mn) {
        var c = p.models[mn[0]].checklist[i];
        return c ? c[1] : "\u2013";
      })));
    }
    if (rows.length) { out.push(el("h3", null, "The judge's checklist (0\u20133)"), table(["Checklist item"].concat(names), rows, "sg-card-checklist")); }
    var dims = Object.create(null);  // a dimension may be named like a member of every object
    index.models.forEach(function (mn) { p.models[mn[0]].rubric.forEach(function (r) { dims[r[0]] = true; }); });
    rows = Object.keys(dims).sort().map(function (dim) {
      return [dim.replace(/_/g, " ")].concat(index.models.map(function (mn) {
        var r = p.models[mn[0]].rubric.filter(function (x) { return x[0] === dim; })[0];
        return r ? r[1] : "\u2013";
      }));
    });
    if (rows.length) { out.push(el("h3", null, "The judge's rubric dimensions (0\u20133)"), table(["Dimension"].concat(names), rows, "sg-card-rubric")); }
    return out;
  }
  function render(root, index, p, tag, base) {
    root.textContent = "";
    root.appendChild(el("h2", "sg-card-id", p.id));
    if (tag) {
      var all = [].concat.apply([], p.tags);
      var holds = all.indexOf(tag) !== -1;
      root.appendChild(el("p", holds ? "sg-card-from" : "sg-card-from sg-card-warn", holds
        ? "Opened from the prompts of " + clip(tag) + ": this prompt is one of them."
        : "Opened from the prompts of " + clip(tag) + ", but this prompt does not hold it."));
    }
    index.tags.forEach(function (label, i) { root.appendChild(tags(label, p.tags[i], tag)); });
    root.appendChild(el("blockquote", "sg-card-text", p.text === null ? "The metadata gives no prompt text (user_prompt)." : p.text));
    root.appendChild(el("h3", null, "Scores (0\u2013100)"));
    root.appendChild(modelsTable(index, p, base));
    judgeTables(index, p).forEach(function (e) { root.appendChild(e); });
    root.appendChild(el("h3", null, "Each model's image and the judge's reasons"));
    root.appendChild(gallery(index, p, base));
    weight(root, index);
  }
  // Every figure of the card is a text the book wrote (searchgen_nb/book/cards.py).
  function weight(root, index) { root.appendChild(el("p", "sg-card-weight", index.weight)); }
  function start() {
    var root = document.getElementById("sg-card");
    if (!root) { return; }
    var base = root.getAttribute("data-sg-base") || "";
    var params = new URLSearchParams(window.location.search), id = params.get("id");
    var index = (window.SGEvidence || {}).index;
    function say(text) { root.textContent = ""; root.appendChild(el("p", "sg-card-note", text)); }
    if (!index) { say("The card's data (evidence/index.js) is missing from this book."); return; }
    if (!id) { say("No prompt chosen: open one from the Prompts page (its sample_id links here)."); weight(root, index); return; }
    if (!Object.prototype.hasOwnProperty.call(index.shards, id)) { say("No prompt " + clip(id) + " in this release."); return; }
    var n = index.shards[id], s = document.createElement("script");
    s.src = base + "shard-" + n + ".js";
    s.onload = function () {
      var p = ((window.SGEvidence || {})[n] || []).filter(function (x) { return x.id === id; })[0];
      if (p) { render(root, index, p, params.get("tag"), base); } else { say("No data for prompt " + clip(id) + "."); }
    };
    s.onerror = function () { say("The card's data file " + s.src.split("/").pop() + " is missing from this book."); };
    document.head.appendChild(s);
  }
  // The prompt explorer's search covers the prompt texts (evidence/texts.js, loaded by the page):
  // each sample_id cell's search data becomes its id and its text.
  function explorerTexts() {
    var texts = (window.SGEvidence || {}).texts, lib = window.__DTGLOBAL__;
    if (!texts || !lib || !lib.DataTable) { return; }
    document.querySelectorAll("table[data-sg-explorer][data-sg-ready]").forEach(function (t) {
      var api = new lib.DataTable.Api(t);
      api.column(0).nodes().each(function (td) {
        var id = td.textContent;
        if (Object.prototype.hasOwnProperty.call(texts, id)) { td.setAttribute("data-search", id + " " + texts[id]); }
      });
      api.rows().invalidate("dom").draw(false);
    });
  }
  function both() { start(); explorerTexts(); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", both); } else { both(); }
})();

/* ---- Navigation: a contents list on a long page (three sections or more), and a search for a
   prompt's sample_id opens its card (searched from any page's search box). ---- */
(function () {
  "use strict";
  function contents() {
    var main = document.querySelector("main article") || document.querySelector("article");
    var title = main && main.querySelector("h1");
    if (!title || document.getElementById("sg-card")) { return; }
    var heads = [].slice.call(main.querySelectorAll("section > h2")).filter(function (h) {
      return h.parentElement.id;
    });
    if (heads.length < 3) { return; }
    var nav = document.createElement("nav"), list = document.createElement("ul");
    nav.className = "sg-contents"; nav.setAttribute("aria-label", "Contents of this page");
    var label = nav.appendChild(document.createElement("strong"));
    label.textContent = "On this page: ";
    heads.forEach(function (h) {
      var a = list.appendChild(document.createElement("li")).appendChild(document.createElement("a"));
      a.href = "#" + h.parentElement.id;
      a.textContent = (h.firstChild && h.firstChild.nodeType === 3 ? h.firstChild.textContent : h.textContent)
        .replace(/#$/, "").trim();
    });
    nav.appendChild(list);
    title.parentNode.insertBefore(nav, title.nextSibling);
  }
  function promptSearch() {
    if (!document.getElementById("search-results") && !/\/search\.html$/.test(window.location.pathname)) { return; }
    var q = (new URLSearchParams(window.location.search).get("q") || "").trim();
    if (!q || /\s/.test(q)) { return; }
    var root = document.documentElement.getAttribute("data-content_root") || "";
    var s = document.createElement("script");
    s.src = root + "evidence/index.js";
    s.onload = function () {
      var index = (window.SGEvidence || {}).index;
      if (index && Object.prototype.hasOwnProperty.call(index.shards, q)) {
        window.location.replace(root + "book/prompt_card.html?id=" + encodeURIComponent(q));
      }
    };
    document.head.appendChild(s);
  }
  function both() { contents(); promptSearch(); }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", both); } else { both(); }
})();
