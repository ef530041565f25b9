"""Scale releases for ``bench_scale.py``: the synthetic demo grown along three axes.

Usage::

    .venv/bin/python benchmarks/make_scale.py --out /tmp/sgbench/p8 --prompts 8
    .venv/bin/python benchmarks/make_scale.py --out /tmp/sgbench/m8 --models 8
    .venv/bin/python benchmarks/make_scale.py --out /tmp/sgbench/t8 --tags 8
    .venv/bin/python benchmarks/make_scale.py --out /tmp/sgbench/p103 --prompts 103 --jobs 2
    (the last: ~1M pairs)

The demo (751 prompts × 13 models) is written once with ``searchgen-nb demo --out CACHE``
(``--demo-cache``, default ``/tmp/sgbench/demo-cache``) and read back; nothing of the package
is imported, so this works whatever the state of ``searchgen_nb/``'s internals.

Axes (combinable):

* ``--prompts K``: every demo prompt K times. Copy 1 keeps the demo's ids; copy c ≥ 2 gets
  sample_id ``{id}-k{c}`` (the id stem — ``texthard``, ``text_rendering``, ``vis`` — stays, so
  the partition rule gives the same stratum) and release_row ``evalset_rows/{new id}``, with
  the same metadata. Every result file is written again with its own ``sample_id`` /
  ``bench_id`` (the release's identity check), so each pair reads a file of its own.
* ``--models K``: every model K times: model_id ``{id}_k{c}``, source_id ``{source_id}-k{c}``,
  display name ``{name} k{c}``; the copies' result files carry the new ``generator_name``.
* ``--tags K``: every domain and failure-mode tag split into K variants: the prompt at
  position i (sorted by sample_id over the whole grown set) carries ``TAG~{i % K}`` for each of
  its tags, so there are K× more tag groups, each about 1/K as large. The data pipeline takes
  tags as free strings (the taxonomy in ``searchgen_nb/data/taxonomy.json`` only names tags in
  the book, falling back to the code), so no extended taxonomy is needed for ``data``.

Every pair keeps the status it has in the demo (scored, invalid of nine kinds, missing
evaluation = an image without result, missing generation = no folder), byte for byte apart
from the ids. Hence the release.yml's ``expected`` block scales exactly (n_prompts and the
partition × prompts K, n_scored × prompts K, copied to model copies) and the paper table stays
valid: a group Overall-10 over K identical copies of the demo's prompts is the same exact
fraction, and a model copy has the values of its model.

Speed: files are written with plain ``os`` calls from the demo's bytes held in memory (no
subprocess or JSON encoding per file). Images (never read by ``data``: only their presence
matters, for a missing result) are hard links into a small pool by default (``--images
link``; ``copy`` writes a file each, ``needed`` only where no result sits beside it). Result
files are never linked: the pipeline refuses one file read for two pairs. About 150 µs per
pair on this machine's file system: 1M pairs in 2–3 minutes (``--jobs 2`` splits the prompts
over two processes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

DEFAULT_CACHE = "/tmp/sgbench/demo-cache"
MARKER = "scale.json"
LINKS_PER_POOL_FILE = 60_000  # ext4 allows 65,000 links per inode


# ---------------------------------------------------------------------------------------
# The demo, read back from its files
# ---------------------------------------------------------------------------------------
def searchgen_cmd() -> list[str]:
    """The ``searchgen-nb`` console script of this interpreter's environment (else ``-m``)."""
    exe = Path(sys.executable).with_name("searchgen-nb")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "searchgen_nb"]


def ensure_demo(cache: Path) -> Path:
    """The demo's folder, written with ``searchgen-nb demo --out`` when it is not there yet."""
    if not (cache / "release.yml").is_file() or not (cache / "results").is_dir():
        cache.parent.mkdir(parents=True, exist_ok=True)
        print(f"make_scale: writing the demo into {cache}", file=sys.stderr)
        subprocess.run([*searchgen_cmd(), "demo", "--out", str(cache)], check=True)
    return cache


class Demo:
    """Everything of the demo needed to grow it, in memory (~12 MB)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.config_text = (folder / "release.yml").read_text(encoding="utf-8")
        self.config = yaml.safe_load(self.config_text)
        cfg = self.config
        self.template: str = cfg.get(
            "result_path",
            "{release_row}/{lane}/{source_id}/augmented_parsed_result_ffjudge_pp.json",
        )
        self.results_root = (folder / cfg["results_root"]).resolve()
        lines = (folder / cfg["dataset"]).read_bytes().split(b"\n")
        self.line_order: list[dict] = [json.loads(raw) for raw in lines if raw.strip()]
        for p in self.line_order:
            if "sample_id" not in p:
                p["sample_id"] = p["bench_id"]
            p.setdefault("release_row", p["sample_id"])
        self.prompts = sorted(self.line_order, key=lambda p: p["sample_id"])
        self.index = {p["sample_id"]: i for i, p in enumerate(self.prompts)}
        self.models: list[tuple[str, dict]] = list(cfg["models"].items())
        self.paper_table = None
        if cfg.get("paper_table"):
            self.paper_table = json.loads((folder / cfg["paper_table"]).read_text(encoding="utf-8"))
        # pairs[i][j] = (result bytes or None,
        #                [other file names in the pair's folder] or None = no folder)
        self.pairs: list[list[tuple[bytes | None, list[str] | None]]] = []
        self.extra_bytes: dict[str, bytes] = {}
        n_results = 0
        for p in self.prompts:
            row = []
            for _, m in self.models:
                rel = self.result_rel(p["release_row"], p["sample_id"], m)
                path = self.results_root / rel
                folder_path, name = os.path.split(path)
                try:
                    names = os.listdir(folder_path)
                except FileNotFoundError:
                    row.append((None, None))
                    continue
                data = None
                others = []
                for n in sorted(names):
                    if n == name:
                        data = (Path(folder_path) / n).read_bytes()
                        n_results += 1
                    else:
                        others.append(n)
                        if n not in self.extra_bytes:
                            self.extra_bytes[n] = (Path(folder_path) / n).read_bytes()
                row.append((data, others))
            self.pairs.append(row)
        self.n_results = n_results

    def result_rel(self, release_row: str, sample_id: str, model: dict) -> str:
        return self.template.format(
            release_row=release_row,
            sample_id=sample_id,
            lane=model.get("lane", "none"),
            source_id=model["source_id"],
        )


# ---------------------------------------------------------------------------------------
# The grown release
# ---------------------------------------------------------------------------------------
def copy_suffix(c: int, sep: str) -> str:
    """Copy 0 keeps the demo's name; copy c ≥ 1 is the (c+1)-th: ``-k2``, ``_k2`` …"""
    return "" if c == 0 else f"{sep}k{c + 1}"


class Plan:
    """Names of the grown release: prompts (copy-major), models, tags."""

    def __init__(self, demo: Demo, k_prompts: int, k_models: int, k_tags: int):
        self.demo, self.kp, self.km, self.kt = demo, k_prompts, k_models, k_tags
        n = len(demo.prompts)
        # Prompts in sample_id order of the grown set decide the tag variant (i % K).
        ids = [
            (p["sample_id"] + copy_suffix(c, "-"), c, j)
            for c in range(k_prompts)
            for j, p in enumerate(demo.prompts)
        ]
        ids.sort()
        self.position = {(c, j): i for i, (_, c, j) in enumerate(ids)}
        self.n_prompts = n * k_prompts
        # Models: copy-major, the demo's order inside each copy (display order for ties).
        self.models: list[
            tuple[str, dict, int, int]
        ] = []  # (model_id, config, demo model index, copy)
        for c in range(k_models):
            for j, (mid, m) in enumerate(demo.models):
                cfg = json.loads(json.dumps(m))  # a deep, alias-free copy (YAML dump)
                cfg["source_id"] = m["source_id"] + copy_suffix(c, "-")
                if c:
                    cfg["display_name"] = f"{m['display_name']} k{c + 1}"
                self.models.append((mid + copy_suffix(c, "_"), cfg, j, c))

    def prompt(self, c: int, j: int) -> dict:
        """The metadata line of copy ``c`` of demo prompt ``j``."""
        p = dict(self.demo.prompts[j])
        if c:
            sid = p["sample_id"] + copy_suffix(c, "-")
            p["sample_id"] = sid
            p.pop("bench_id", None)
            p["release_row"] = f"evalset_rows/{sid}"
        if self.kt > 1:
            v = self.position[(c, j)] % self.kt
            for key in ("domains", "failure_modes"):
                if p.get(key):
                    p[key] = [f"{t}~{v}" for t in p[key]]
        return p

    def config(self, has_paper_table: bool) -> dict:
        demo_cfg = self.demo.config
        cfg: dict = {}
        for key in ("benchmark", "data_origin"):
            if key in demo_cfg:
                cfg[key] = demo_cfg[key]
        cfg["dataset"] = "prompts.jsonl"
        cfg["results_root"] = "results"
        cfg["result_path"] = self.demo.template
        for key in ("generation_glob", "extractor"):
            if key in demo_cfg:
                cfg[key] = demo_cfg[key]
        if has_paper_table:
            cfg["paper_table"] = "paper_table.json"
        cfg["scoring"] = json.loads(json.dumps(demo_cfg.get("scoring", {})))
        cfg["models"] = {mid: m for mid, m, _, _ in self.models}
        exp = demo_cfg.get("expected")
        if exp:
            new: dict = {}
            if exp.get("n_prompts") is not None:
                new["n_prompts"] = exp["n_prompts"] * self.kp
            if exp.get("partition"):
                new["partition"] = {k: v * self.kp for k, v in exp["partition"].items()}
            if exp.get("n_scored"):
                new["n_scored"] = {
                    mid: exp["n_scored"][self.demo.models[j][0]] * self.kp
                    for mid, _, j, _ in self.models
                    if self.demo.models[j][0] in exp["n_scored"]
                }
            cfg["expected"] = new
        return cfg


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data):  # the release loader refuses anchors and aliases
        return True


def _token(key: str, value: str) -> bytes:
    """How ``"key": value`` appears in a result file (json.dumps' default separators)."""
    return f'"{key}": {json.dumps(value)}'.encode()


def write_prompts_range(
    out: Path, plan: Plan, copies: list[int], worker: int, images: str
) -> tuple[int, int]:
    """Write the results of prompt copies ``copies`` (all models).

    Returns (result files, folders).
    """
    demo = plan.demo
    root = str(out / "results")
    pool_dir = out / ".image-pool"
    pool: dict[str, tuple[str, int]] = {}  # name -> (pool file, links used)
    pool_seq = 0
    made_parents: set[str] = set()
    n_files = n_dirs = 0
    o_flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL

    def write(path: str, data: bytes) -> None:
        fd = os.open(path, o_flags, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def image(path: str, name: str) -> None:
        nonlocal pool_seq
        if images == "copy":
            write(path, demo.extra_bytes[name])
            return
        src, used = pool.get(name, ("", LINKS_PER_POOL_FILE))
        if used >= LINKS_PER_POOL_FILE:
            pool_seq += 1
            src = str(pool_dir / f"w{worker}-{pool_seq}-{name}")
            write(src, demo.extra_bytes[name])
            used = 0
        os.link(src, path)
        pool[name] = (src, used + 1)

    def mkdir(folder: str) -> None:
        nonlocal n_dirs
        try:
            try:
                os.mkdir(folder)
            except FileNotFoundError:
                parent = os.path.dirname(folder)
                if parent not in made_parents:
                    os.makedirs(parent, exist_ok=True)
                    made_parents.add(parent)
                os.mkdir(folder)
        except FileExistsError:  # a layout whose pairs share folders
            return
        n_dirs += 1

    models = [
        (
            m,
            j,
            c,
            _token("generator_name", demo.models[j][1]["source_id"]),
            _token("generator_name", m["source_id"]),
        )
        for _, m, j, c in plan.models
    ]
    for c in copies:
        for j, dp in enumerate(demo.prompts):
            p = plan.prompt(c, j)
            sid, row = p["sample_id"], p["release_row"]
            old_sid = dp["sample_id"]
            swaps = []
            if c:
                swaps = [(_token(k, old_sid), _token(k, sid)) for k in ("sample_id", "bench_id")]
            for m, mj, mc, old_gen, new_gen in models:
                data, others = demo.pairs[j][mj]
                if others is None:
                    continue  # missing generation: no folder at all
                rel = demo.result_rel(row, sid, m)
                path = os.path.join(root, rel)
                folder, _ = os.path.split(path)
                mkdir(folder)
                if data is not None:
                    for old, new in swaps:
                        data = data.replace(old, new)
                    if mc:
                        data = data.replace(old_gen, new_gen)
                    write(path, data)
                    n_files += 1
                for name in others:
                    if images != "needed" or data is None:
                        image(os.path.join(folder, name), name)
    return n_files, n_dirs


def _worker(args: tuple) -> tuple[int, int]:
    out, copies, worker, images = args
    return write_prompts_range(Path(out), _PLAN["plan"], copies, worker, images)


_PLAN: dict = {}


def make_release(
    out: Path, k_prompts: int, k_models: int, k_tags: int, cache: Path, images: str, jobs: int
) -> dict:
    t0 = time.perf_counter()
    demo = Demo(ensure_demo(cache))
    plan = Plan(demo, k_prompts, k_models, k_tags)
    t_read = time.perf_counter() - t0
    out.mkdir(parents=True)
    (out / "results").mkdir()
    (out / ".image-pool").mkdir()
    with open(out / "prompts.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        order = [demo.index[p["sample_id"]] for p in demo.line_order]
        for c in range(k_prompts):
            fh.writelines(json.dumps(plan.prompt(c, j), sort_keys=True) + "\n" for j in order)
    copies = list(range(k_prompts))
    if jobs > 1 and k_prompts > 1:
        import multiprocessing

        _PLAN["plan"] = plan
        chunks = [copies[w::jobs] for w in range(jobs)]
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            done = pool.map(
                _worker, [(str(out), ch, w, images) for w, ch in enumerate(chunks) if ch]
            )
        _PLAN.clear()
    else:
        done = [write_prompts_range(out, plan, copies, 0, images)]
    n_files = sum(d[0] for d in done)
    has_table = demo.paper_table is not None
    if has_table:
        table = {
            mid: demo.paper_table[demo.models[j][0]]
            for mid, _, j, _ in plan.models
            if demo.models[j][0] in demo.paper_table
        }
        (out / "paper_table.json").write_text(
            json.dumps(table, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
    header = (
        f"# Scale release written by benchmarks/make_scale.py from the synthetic demo: prompts "
        f"×{k_prompts}, models ×{k_models}, tags ×{k_tags}.\n# Every model name and score in it is "
        f"invented. Regenerate, do not edit.\n"
    )
    text = yaml.dump(
        plan.config(has_table), Dumper=_NoAliases, sort_keys=False, allow_unicode=True, width=200
    )
    (out / "release.yml").write_text(header + text, encoding="utf-8")
    summary = {
        "prompts_x": k_prompts,
        "models_x": k_models,
        "tags_x": k_tags,
        "n_prompts": plan.n_prompts,
        "n_models": len(plan.models),
        "n_pairs": plan.n_prompts * len(plan.models),
        "n_result_files": n_files,
        "demo_result_files": demo.n_results,
        "images": images,
        "seconds": round(time.perf_counter() - t0, 1),
        "seconds_reading_demo": round(t_read, 1),
    }
    (out / MARKER).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--out",
        required=True,
        type=Path,
        help="release folder to write (must not exist; see --force)",
    )
    ap.add_argument(
        "--prompts", type=int, default=1, metavar="K", help="demo prompts ×K (new sample_ids)"
    )
    ap.add_argument(
        "--models",
        type=int,
        default=1,
        metavar="K",
        help="demo models ×K (new model ids / source_ids)",
    )
    ap.add_argument(
        "--tags", type=int, default=1, metavar="K", help="every tag split into K variants"
    )
    ap.add_argument(
        "--demo-cache",
        type=Path,
        default=Path(DEFAULT_CACHE),
        help=f"where the demo is written once (default {DEFAULT_CACHE})",
    )
    ap.add_argument(
        "--images",
        choices=("link", "copy", "needed"),
        default="link",
        help="images beside results: hard links into a pool (default), one file each, or only "
        "where no result is",
    )
    ap.add_argument(
        "--jobs", type=int, default=1, help="processes writing files (split by prompt copy)"
    )
    ap.add_argument(
        "--force",
        action="store_true",
        help=f"replace --out if it holds a previous scale release ({MARKER})",
    )
    args = ap.parse_args(argv)
    if min(args.prompts, args.models, args.tags, args.jobs) < 1:
        ap.error("every factor and --jobs must be ≥ 1")
    out = args.out.resolve()
    if out.exists():
        if not args.force:
            ap.error(f"{out} exists (use --force to replace a previous scale release)")
        if not (out / MARKER).is_file() and not (out / "release.yml").is_file():
            ap.error(f"{out} exists and holds no scale release; refusing to delete it")
        print(f"make_scale: removing {out}", file=sys.stderr)
        shutil.rmtree(out)
    summary = make_release(
        out, args.prompts, args.models, args.tags, args.demo_cache.resolve(), args.images, args.jobs
    )
    print(
        f"make_scale: {out}: {summary['n_prompts']} prompts × {summary['n_models']} models = "
        f"{summary['n_pairs']} pairs, {summary['n_result_files']} result files, in "
        f"{summary['seconds']} s (config: {out / 'release.yml'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
