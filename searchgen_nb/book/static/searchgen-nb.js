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
  var FILTERS = { stratum: "stratum", domain: "domains", failure_mode: "failure_modes", slice: "slices" };
  var SHOWN = 80;  // characters of a parameter repeated in the filter's note
  function clip(s) { return s.length > SHOWN ? s.slice(0, SHOWN - 1) + "\u2026" : s; }
  function columnIndex(table) {  // read before DataTables removes the hidden columns' headers
    var cols = {}, models = 0;
    table.querySelectorAll("thead th").forEach(function (th, i) {
      var key = th.getAttribute("data-sg-col");
      cols[key] = i;
      if (key && key.indexOf("m:") === 0) { cols["status:" + key.slice(2)] = models++; }  // its place in statuses
    });
    return cols;
  }
  function rowValues(tr) {
    if (!tr.sgValues) {
      try { tr.sgValues = JSON.parse(tr.getAttribute("data-sg-values") || "{}"); } catch (e) { tr.sgValues = {}; }
    }
    return tr.sgValues;
  }
  function holds(list, value) { return Array.isArray(list) && list.indexOf(value) !== -1; }
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
    var tests = [], said = [];
    Object.keys(FILTERS).forEach(function (key) {
      var value = params.get(key);
      if (value) {
        tests.push(function (v) { return holds(v[FILTERS[key]], value); });
        said.push(key.replace("_", " ") + " " + clip(value));
      }
    });
    var model = params.get("model"), status = params.get("status"), whose = "";
    if (model && cols["m:" + model] !== undefined) {
      api.column(cols["m:" + model]).nodes().each(function (td) { td.classList.add("sg-highlight"); });
      var name = clip(api.column(cols["m:" + model]).header().textContent.trim() || model);
      if (status) {
        var k = cols["status:" + model];
        // status=not_scored: every status but scored (a leaderboard's coverage link)
        tests.push(function (v) {
          var s = Array.isArray(v.statuses) ? v.statuses[k] : undefined;
          return status === "not_scored" ? s !== undefined && s !== "scored" : s === status;
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
        { targets: "sg-num", type: "sg-num-na", orderSequence: ["desc", "asc"] },
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
   excluded or N/A) and its status; a text cell starting with = + - @ tab or CR gets a leading
   ' (as searchgen_nb/untrusted.py csv_cell), so a spreadsheet never reads it as a formula. */
(function () {
  "use strict";
  function cell(text, isText) {
    var s = String(text === null || text === undefined ? "" : text);
    if (isText && /^[=+\-@\t\r]/.test(s)) { s = "'" + s; }
    return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function rowsCsv(table, api) {
    var keys = [], lines = [];
    api.columns().every(function (i) { keys.push([i, this.header().getAttribute("data-sg-col")]); });
    keys = keys.filter(function (k) { return k[1] && k[1] !== "statuses"; });
    var head = [];
    keys.forEach(function (k) {
      if (k[1].indexOf("m:") === 0) { head.push(cell(k[1].slice(2), true), cell(k[1].slice(2) + " status", true)); }
      else { head.push(cell(k[1], true)); }
    });
    lines.push(head.join(","));
    api.rows({ search: "applied", order: "applied" }).every(function (r) {
      var tr = this.node(), v = {}, m = 0, out = [];
      try { v = JSON.parse(tr.getAttribute("data-sg-values") || "{}"); } catch (e) { v = {}; }
      keys.forEach(function (k) {
        var td = api.cell(r, k[0]).node(), num = td.classList.contains("sg-num");
        // its data-order, else the number its text starts with (tables.py: sorts as shown)
        var key = td.hasAttribute("data-order") ? td.getAttribute("data-order")
          : (/^\s*[+-]?\d*\.?\d+/.exec(td.textContent) || [""])[0].trim();
        if (k[1].indexOf("m:") === 0) {
          out.push(cell(key, false), cell((v.statuses || [])[m++], true));
        } else { out.push(num ? cell(key, false) : cell(td.textContent, true)); }
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
