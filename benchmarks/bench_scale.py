"""``searchgen-nb data`` against its floor, on releases of growing size (see benchmarks/README.md).

Usage::

    .venv/bin/python benchmarks/bench_scale.py RELEASE.yml [--rounds 3] [--json OUT.json]
    .venv/bin/python benchmarks/bench_scale.py --compare demo.json p8.json p103.json

Each of R interleaved rounds runs, each as a separate process, in alternating order:

* the floor: a whole Python process that reads the list of the release's result files and
  ``json.loads`` every file, once in 1 process and once split over 2 (fork); the round's
  floor is the faster of the two;
* ``searchgen-nb data CONFIG --out TMP --timings TIMINGS.json`` (without ``--timings`` when
  the command does not know it yet: then only totals are reported).

For every process: wall time, CPU time (user + sys of the child and the children it reaped,
from ``os.wait4``) and peak RSS (``ru_maxrss``: the largest single process of the tree, not
their sum). Reported: the per-round ratio data wall / floor wall and the MEDIAN of those
ratios, per-stage figures from the timings file, CPU per pair and peak RSS; Markdown on
stdout, everything also as JSON with ``--json``. One untimed floor run warms the page cache.

``--compare`` reads several ``--json`` outputs and checks the scaling targets: CPU per pair
flat within ±20% of the smallest release, extra memory per extra pair ≤ 2 KB.

Nothing of ``searchgen_nb`` is imported: the file list is built from the release's YAML,
its prompt metadata and ``result_path``; the pipeline is only run through its command line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import posixpath
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Targets (benchmarks/README.md).
RATIO_TARGET_LARGE = 1.5  # data wall ≤ 1.5× floor at 78k and 1M pairs
RATIO_TARGET_SMALL = 3.0  # ≤ 3× on the demo (process start-up and fixed costs weigh more)
LARGE_FROM_PAIRS = 50_000
AGG_VAL_TARGET_S = 10.0  # aggregation + validation of 1M pairs
RSS_TARGET_MB = 2048.0  # peak RSS at 1M pairs
CPU_PER_PAIR_SPREAD = 0.20  # ±20% from 10k to 1M
EXTRA_BYTES_PER_PAIR = 2048  # extra memory per extra pair
TARGET_1M_FROM_PAIRS = 900_000

UNKNOWN_OPTION = ("no such option", "unrecognized arguments", "unrecognised arguments")


# ---------------------------------------------------------------------------------------
# The floor (runs in its own process: ``bench_scale.py _floor LIST NPROCS``)
# ---------------------------------------------------------------------------------------
_PATHS: list[str] = []


def _read_all(span: tuple[int, int]) -> int:
    loads = json.loads
    n = 0
    for p in _PATHS[span[0] : span[1]]:
        with open(p, "rb") as fh:
            data = fh.read()
        try:
            loads(data)
        except ValueError:  # the demo's broken result files (cut-off JSON)
            pass
        n += 1
    return n


def floor_main(list_path: str, procs: int) -> int:
    global _PATHS
    with open(list_path, "rb") as fh:
        _PATHS = [p for p in fh.read().decode("utf-8").split("\n") if p]
    n = len(_PATHS)
    if procs <= 1:
        done = _read_all((0, n))
    else:
        import multiprocessing

        spans = [(k * n // procs, (k + 1) * n // procs) for k in range(procs)]
        with multiprocessing.get_context("fork").Pool(procs) as pool:  # workers inherit _PATHS
            done = sum(pool.map(_read_all, spans, chunksize=1))
    if done != n:
        print(f"floor: read {done} of {n} files", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------------------
# The release's result files (without the package: YAML + metadata + result_path)
# ---------------------------------------------------------------------------------------
def _resolve(base: Path, rel: str) -> Path:
    return (base / os.path.expandvars(rel)).resolve()


def list_result_files(config: Path, out_list: Path) -> dict:
    """Write the existing result files of every prompt × model pair to ``out_list``, one a line."""
    import yaml

    cfg = yaml.safe_load(config.read_text(encoding="utf-8"))
    base = config.parent
    root = _resolve(base, cfg["results_root"])
    template = cfg.get(
        "result_path", "{release_row}/{lane}/{source_id}/augmented_parsed_result_ffjudge_pp.json"
    )
    prompts = []
    for raw in _resolve(base, cfg["dataset"]).read_bytes().split(b"\n"):
        if raw.strip():
            row = json.loads(raw)
            sid = row.get("sample_id", row.get("bench_id"))
            prompts.append(
                (sid, posixpath.normpath(str(row.get("release_row", sid)).replace("\\", "/")))
            )
    models = [(m["source_id"], m.get("lane", "none")) for m in cfg["models"].values()]
    n_files = 0
    with open(out_list, "w", encoding="utf-8") as fh:
        for sid, row in sorted(prompts):
            for source_id, lane in models:
                path = os.path.join(
                    root,
                    template.format(release_row=row, sample_id=sid, lane=lane, source_id=source_id),
                )
                if os.path.isfile(path):
                    fh.write(path + "\n")
                    n_files += 1
    return {
        "n_prompts": len(prompts),
        "n_models": len(models),
        "n_pairs": len(prompts) * len(models),
        "n_files": n_files,
    }


# ---------------------------------------------------------------------------------------
# Measuring one child process
# ---------------------------------------------------------------------------------------
PR_SET_CHILD_SUBREAPER = 36


def measure_main(result_path: str, argv: list[str]) -> int:
    """``bench_scale.py _measure RESULT.json -- CMD…``: run CMD as a child subreaper.

    Writes CMD's figures to RESULT.json. A plain ``wait4`` of the command misses processes it
    does not reap itself (a worker that outlives the main process as an orphan). As a child
    subreaper (Linux ``prctl``) this process inherits such orphans and reaps them, so
    ``RUSAGE_CHILDREN`` holds the CPU of the whole process tree. Wall time ends when CMD's main
    process exits (what a user waits for); CPU and peak RSS include stragglers reaped up to 60 s
    later.
    """
    import ctypes
    import resource

    libc = ctypes.CDLL(None, use_errno=True)
    subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv)
    _, status, ru_main = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    deadline = time.monotonic() + 60
    stragglers = 0
    while True:  # reap orphaned descendants
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                stragglers = -1  # some descendant still runs: its CPU is not counted
                break
            time.sleep(0.005)
        else:
            stragglers += 1
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {
        "wall_s": wall,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "peak_rss_mb": ru.ru_maxrss / 1024.0,  # Linux: KiB; the largest single process of the tree
        "main_cpu_s": ru_main.ru_utime + ru_main.ru_stime,  # what a plain wait4 of the command sees
        "orphans_reaped": stragglers,
        "subreaper": subreaper,
        "rc": proc.returncode,
    }
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(out, fh)
    return 0


def run_measured(
    argv: list[str], env: dict | None, log_dir: Path, tag: str, cwd: Path | None = None
) -> dict:
    """Run ``argv`` to its end under the ``_measure`` wrapper: wall, CPU (user + sys of the
    whole process tree) and peak RSS (largest process of the tree)."""
    out_path, err_path, res_path = (
        log_dir / f"{tag}.out",
        log_dir / f"{tag}.err",
        log_dir / f"{tag}.json",
    )
    wrapper = [
        sys.executable,
        str(Path(__file__).resolve()),
        "_measure",
        str(res_path),
        "--",
        *argv,
    ]
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        rc = subprocess.run(
            wrapper, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd
        ).returncode
    stderr = err_path.read_text(encoding="utf-8", errors="replace")[-2000:]
    if rc != 0 or not res_path.is_file():
        raise SystemExit(f"bench_scale: the measuring wrapper failed (exit {rc}): {stderr}")
    r = json.loads(res_path.read_text(encoding="utf-8"))
    r["stderr"] = stderr
    return r


class Runner:
    def __init__(self, args: argparse.Namespace, config: Path, work: Path, file_list: Path):
        self.config, self.work, self.file_list = config, work, file_list
        self.env = dict(os.environ)
        if args.src:
            self.env["PYTHONPATH"] = str(Path(args.src).resolve()) + (
                os.pathsep + self.env["PYTHONPATH"] if self.env.get("PYTHONPATH") else ""
            )
            self.data_cmd = [sys.executable, "-m", "searchgen_nb"]
        elif args.searchgen:
            self.data_cmd = shlex.split(args.searchgen)
        else:
            exe = Path(sys.executable).with_name("searchgen-nb")
            self.data_cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "searchgen_nb"]
        # Run from the work folder: `python -m` puts the cwd first on sys.path, and from the
        # checkout that would import its work tree instead of --src / --rev.
        self.cwd = work
        probe = [
            sys.executable,
            "-c",
            "import searchgen_nb, sys; sys.stdout.write(searchgen_nb.__file__)",
        ]
        if (
            self.data_cmd[:3] == [sys.executable, "-m", "searchgen_nb"]
            or Path(self.data_cmd[0]).name == "searchgen-nb"
        ):
            self.package = subprocess.run(
                probe, env=self.env, cwd=work, capture_output=True, text=True
            ).stdout.strip()
        else:
            self.package = None
        if args.src and self.package and not self.package.startswith(str(Path(args.src).resolve())):
            raise SystemExit(
                f"bench_scale: --src/--rev given, but searchgen_nb is imported from {self.package}"
            )
        help_text = subprocess.run(
            [*self.data_cmd, "data", "--help"],
            env=self.env,
            cwd=work,
            capture_output=True,
            text=True,
        ).stdout
        self.timings = "--timings" in help_text
        self.no_progress = ["--no-progress"] if "--no-progress" in help_text else []
        self.n = 0

    def floor(self, procs: int) -> dict:
        self.n += 1
        argv = [
            sys.executable,
            str(Path(__file__).resolve()),
            "_floor",
            str(self.file_list),
            str(procs),
        ]
        r = run_measured(argv, None, self.work, f"{self.n:03d}-floor{procs}", self.cwd)
        if r["rc"] != 0:
            raise SystemExit(f"bench_scale: the floor failed (exit {r['rc']}): {r['stderr']}")
        return r

    def data(self) -> dict:
        self.n += 1
        out = self.work / f"out-{self.n:03d}"
        timings = self.work / f"timings-{self.n:03d}.json"
        base = [*self.data_cmd, "data", str(self.config), "--out", str(out), *self.no_progress]
        r = run_measured(
            base + (["--timings", str(timings)] if self.timings else []),
            self.env,
            self.work,
            f"{self.n:03d}-data",
            self.cwd,
        )
        if self.timings and r["rc"] == 2 and any(s in r["stderr"].lower() for s in UNKNOWN_OPTION):
            print("bench_scale: `data` does not know --timings (yet): totals only", file=sys.stderr)
            self.timings = False
            shutil.rmtree(out, ignore_errors=True)
            r = run_measured(base, self.env, self.work, f"{self.n:03d}-data-retry", self.cwd)
        r["timings"] = None
        if r["rc"] == 0 and timings.is_file():
            try:
                r["timings"] = json.loads(timings.read_text(encoding="utf-8"))
            except ValueError as exc:
                r["timings_error"] = str(exc)
        shutil.rmtree(out, ignore_errors=True)  # untimed
        return r


# ---------------------------------------------------------------------------------------
# Rounds and report
# ---------------------------------------------------------------------------------------
def _git_head(folder: Path) -> str | None:
    try:
        return (
            subprocess.run(
                ["git", "-C", str(folder), "log", "-1", "--format=%h"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.CalledProcessError):
        return None


def snapshot(rev: str, dest: Path) -> tuple[str, str]:
    """Unpack ``git archive REV`` of this checkout into ``dest``; return (dest, short commit)."""
    here = Path(__file__).resolve().parent.parent
    commit = subprocess.run(
        ["git", "-C", str(here), "rev-parse", "--short", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dest.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(here), "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"bench_scale: git archive {rev} failed")
    return str(dest), commit


def _commit(src: str | None, src_commit: str | None = None) -> str:
    """What code ran: the checkout's commit (flagged when its searchgen_nb/ has local changes),
    or, with --src, that folder (its own commit when it is a git checkout)."""
    here = Path(__file__).resolve().parent.parent
    head = _git_head(here) or "unknown"
    if src_commit:
        return f"{src_commit} (git archive of that commit)"
    if src:
        own = _git_head(Path(src)) if (Path(src) / ".git").exists() else None
        return (
            f"{own} (checkout {src})"
            if own
            else f"unknown (code from {src}; this checkout is at {head})"
        )
    dirty = subprocess.run(
        ["git", "-C", str(here), "status", "--porcelain", "--", "searchgen_nb"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return head + (" (searchgen_nb/ modified in the work tree)" if dirty else "")


def _loadavg() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def bench(args: argparse.Namespace) -> dict:
    config = Path(args.config).resolve()
    parent = Path(args.workdir)
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-", dir=parent))
    try:
        if args.rev:
            args.src, args.src_commit = snapshot(args.rev, work / "src")
        key = hashlib.sha256(str(config).encode()).hexdigest()[:12]
        file_list = work / f"files-{key}.txt"
        t = time.perf_counter()
        sizes = list_result_files(config, file_list)
        print(
            f"bench_scale: {config}: {sizes['n_prompts']} prompts × {sizes['n_models']} models = "
            f"{sizes['n_pairs']} pairs, "
            f"{sizes['n_files']} result files (listed in {time.perf_counter() - t:.1f} s)",
            file=sys.stderr,
        )
        runner = Runner(args, config, work, file_list)
        runner.floor(1)  # untimed: warms the page cache (and the interpreter's files)
        rounds = []
        for i in range(args.rounds):
            load = _loadavg()
            procs = (1, 2) if i % 2 == 0 else (2, 1)
            res: dict = {}
            steps = ["floor", "data"] if i % 2 == 0 else ["data", "floor"]
            for step in steps:
                if step == "floor":
                    for p in procs:
                        res[f"floor{p}"] = runner.floor(p)
                else:
                    res["data"] = runner.data()
            f1, f2, d = res["floor1"], res["floor2"], res["data"]
            floor_wall = min(f1["wall_s"], f2["wall_s"])
            rnd = {
                "round": i + 1,
                "order": " → ".join(
                    "data" if s == "data" else f"floor{procs[0]}+{procs[1]}" for s in steps
                ),
                "loadavg_1min": load,
                "floor1": f1,
                "floor2": f2,
                "floor_wall_s": floor_wall,
                "floor_procs": 1 if f1["wall_s"] <= f2["wall_s"] else 2,
                "data": d,
                "ratio": d["wall_s"] / floor_wall if d["rc"] == 0 else None,
            }
            rounds.append(rnd)
            status = (
                f"ratio {rnd['ratio']:.2f}"
                if rnd["ratio"] is not None
                else f"data FAILED (exit {d['rc']})"
            )
            print(
                f"bench_scale: round {i + 1}/{args.rounds}: floor {floor_wall:.2f} s, data "
                f"{d['wall_s']:.2f} s, {status}",
                file=sys.stderr,
            )
            if d["rc"] != 0:
                print(d["stderr"], file=sys.stderr)
        res = summarise(args, config, sizes, rounds, runner.timings, runner.data_cmd)
        res["package"] = runner.package
        return res
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def summarise(
    args,
    config: Path,
    sizes: dict,
    rounds: list[dict],
    timings_supported: bool,
    data_cmd: list[str],
) -> dict:
    ok = [r for r in rounds if r["data"]["rc"] == 0]
    n_pairs = sizes["n_pairs"]
    stages: dict[str, dict] = {}
    for r in ok:
        t = r["data"].get("timings") or {}
        if t.get("n_pairs") is not None and t["n_pairs"] != n_pairs:
            r["n_pairs_mismatch"] = t["n_pairs"]
        for name, v in (t.get("stages") or {}).items():
            s = stages.setdefault(name, {"wall_s": [], "cpu_s": []})
            s["wall_s"].append(v.get("wall_s"))
            s["cpu_s"].append(v.get("cpu_s"))
    stage_med = {
        k: {"wall_s": _med(v["wall_s"]), "cpu_s": _med(v["cpu_s"])} for k, v in stages.items()
    }
    agg_val = [k for k in stage_med if "aggreg" in k.lower() or "valid" in k.lower()]
    agg_val_s = None
    if agg_val:
        per_round = []
        for r in ok:
            st = (r["data"].get("timings") or {}).get("stages") or {}
            per_round.append(
                sum(st[k]["wall_s"] for k in agg_val if k in st and st[k].get("wall_s") is not None)
            )
        agg_val_s = _med(per_round)
    summary = {
        "median_ratio": _med([r["ratio"] for r in rounds]),
        "ratios": [r["ratio"] for r in rounds],
        "floor_wall_s": _med([r["floor_wall_s"] for r in rounds]),
        "floor1_cpu_us_per_file": _med(
            [r["floor1"]["cpu_s"] / max(sizes["n_files"], 1) * 1e6 for r in rounds]
        ),
        "data_wall_s": _med([r["data"]["wall_s"] for r in ok]),
        "data_cpu_s": _med([r["data"]["cpu_s"] for r in ok]),
        "data_cpu_us_per_pair": _med([r["data"]["cpu_s"] / n_pairs * 1e6 for r in ok]),
        "data_peak_rss_mb": max((r["data"]["peak_rss_mb"] for r in ok), default=None),
        "data_peak_rss_mb_reported": _med(
            [(r["data"].get("timings") or {}).get("peak_rss_mb") for r in ok]
        ),
        "stages": stage_med,
        "aggregate_validate_stages": agg_val,
        "aggregate_validate_wall_s": agg_val_s,
        "failed_rounds": len(rounds) - len(ok),
    }
    return {
        "config": str(config),
        "commit": _commit(args.src, getattr(args, "src_commit", None)),
        "data_command": " ".join(data_cmd)
        + (
            "  (PYTHONPATH="
            + (f"<git archive {args.src_commit}>" if args.src_commit else str(args.src))
            + ")"
            if args.src
            else ""
        ),
        "timings_supported": timings_supported,
        "cpus": os.cpu_count(),
        "sizes": sizes,
        "rounds": [
            {
                **r,
                "floor1": _strip(r["floor1"]),
                "floor2": _strip(r["floor2"]),
                "data": _strip(r["data"]),
            }
            for r in rounds
        ],
        "summary": summary,
    }


def _strip(run: dict) -> dict:
    out = {k: v for k, v in run.items() if k != "stderr"}
    if run.get("rc"):
        out["stderr_tail"] = run["stderr"][-600:]
    return out


def _f(x, spec=".2f", unit="") -> str:
    return "—" if x is None else f"{x:{spec}}{unit}"


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


def markdown(res: dict) -> str:
    s, z = res["summary"], res["sizes"]
    n = z["n_pairs"]
    lines = [
        f"### `searchgen-nb data` vs floor — {z['n_prompts']:,} prompts × {z['n_models']} models "
        f"= {n:,} pairs ({z['n_files']:,} result files)",
        "",
        f"Config `{res['config']}`; commit {res['commit']}; command `{res['data_command']}`; "
        f"package `{res.get('package')}`; {res['cpus']} CPUs; "
        "stage timings "
        + (
            "from --timings"
            if res["timings_supported"]
            else "not available (no --timings): totals only"
        )
        + ".",
        "",
        "| round | order | load | floor 1 proc wall / CPU / RSS | floor 2 procs wall / CPU / RSS "
        "| floor | data wall / CPU / RSS | data / floor |",
        "|---:|---|---:|---|---|---:|---|---:|",
    ]
    for r in res["rounds"]:
        f1, f2, d = r["floor1"], r["floor2"], r["data"]

        def trio(x):
            return f"{x['wall_s']:.2f} s / {x['cpu_s']:.2f} s / {x['peak_rss_mb']:.0f} MB"

        data_cell = trio(d) if d["rc"] == 0 else f"FAILED (exit {d['rc']})"
        lines.append(
            f"| {r['round']} | {r['order']} | {_f(r['loadavg_1min'], '.1f')} | {trio(f1)} | "
            f"{trio(f2)} | {r['floor_wall_s']:.2f} s ({r['floor_procs']}p) | {data_cell} | "
            f"{_f(r['ratio'], '.2f', '×')} |"
        )
    target = RATIO_TARGET_LARGE if n >= LARGE_FROM_PAIRS else RATIO_TARGET_SMALL
    ratio = s["median_ratio"]
    big = n >= TARGET_1M_FROM_PAIRS
    agg = s["aggregate_validate_wall_s"]
    rss = s["data_peak_rss_mb"]
    lines += [
        "",
        "| summary (median over rounds) | value | target |",
        "|---|---:|---|",
        f"| **data / floor (median of per-round ratios)** | **{_f(ratio, '.2f', '×')}** | ≤ "
        f"{target}× — {_verdict(None if ratio is None else ratio <= target)} |",
        f"| floor wall (faster of 1 and 2 processes) | {_f(s['floor_wall_s'], '.2f', ' s')} | |",
        f"| floor CPU per file (1 process) | {_f(s['floor1_cpu_us_per_file'], '.1f', ' µs')} | |",
        f"| data wall | {_f(s['data_wall_s'], '.2f', ' s')} | |",
        f"| data CPU (user + sys, all its processes) | {_f(s['data_cpu_s'], '.2f', ' s')} | |",
        f"| data CPU per pair | {_f(s['data_cpu_us_per_pair'], '.1f', ' µs')} | flat ±20% from "
        f"10k to 1M (`--compare`) |",
        f"| data peak RSS (ru_maxrss, largest process; max over rounds) | {_f(rss, '.0f', ' MB')} "
        f"| ≤ 2 GB at 1M — {_verdict((rss <= RSS_TARGET_MB) if big and rss is not None else None)} "
        f"|",
        f"| data peak RSS as reported in --timings | "
        f"{_f(s['data_peak_rss_mb_reported'], '.0f', ' MB')} | |",
        f"| aggregation + validation wall "
        f"({', '.join(s['aggregate_validate_stages']) or 'no such stages'}) | "
        f"{_f(agg, '.2f', ' s')} | ≤ 10 s at 1M — "
        f"{_verdict((agg <= AGG_VAL_TARGET_S) if big and agg is not None else None)} |",
    ]
    if s["stages"]:
        lines += [
            "",
            "| stage (from --timings, median) | wall | CPU | CPU per pair |",
            "|---|---:|---:|---:|",
        ]
        for name, v in s["stages"].items():
            per = None if v["cpu_s"] is None else v["cpu_s"] / n * 1e6
            lines.append(
                f"| {name} | {_f(v['wall_s'], '.3f', ' s')} | {_f(v['cpu_s'], '.3f', ' s')} | "
                f"{_f(per, '.1f', ' µs')} |"
            )
    if s["failed_rounds"]:
        lines += [
            "",
            f"**{s['failed_rounds']} round(s) failed** (exit code of `data` non-zero); see the "
            f"JSON for the error.",
        ]
    return "\n".join(lines) + "\n"


def compare(paths: list[str]) -> str:
    """Scaling across several ``--json`` results.

    Targets: CPU per pair flat ±20%, extra memory per pair ≤ 2 KB.
    """
    res = sorted(
        (json.loads(Path(p).read_text(encoding="utf-8")) for p in paths),
        key=lambda r: r["sizes"]["n_pairs"],
    )
    base = res[0]
    b_cpu, b_rss, b_n = (
        base["summary"]["data_cpu_us_per_pair"],
        base["summary"]["data_peak_rss_mb"],
        base["sizes"]["n_pairs"],
    )
    lines = [
        "| pairs | rounds | data / floor (median) | data wall | CPU per pair | vs smallest "
        "(target ±20%) | peak RSS | extra memory per extra pair (target ≤ 2 KB) | agg + val | "
        "commit |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in res:
        s, n = r["summary"], r["sizes"]["n_pairs"]
        cpu = s["data_cpu_us_per_pair"]
        dev = None if cpu is None or not b_cpu or r is base else cpu / b_cpu - 1
        dev_cell = "—" if dev is None else f"{dev:+.0%} {_verdict(abs(dev) <= CPU_PER_PAIR_SPREAD)}"
        extra = None
        if r is not base and s["data_peak_rss_mb"] is not None and b_rss is not None and n > b_n:
            extra = (s["data_peak_rss_mb"] - b_rss) * 1024 * 1024 / (n - b_n)
        extra_cell = (
            "—"
            if extra is None
            else f"{extra / 1024:.2f} KB {_verdict(extra <= EXTRA_BYTES_PER_PAIR)}"
        )
        lines.append(
            f"| {n:,} | {len(r['rounds'])} | {_f(s['median_ratio'], '.2f', '×')} | "
            f"{_f(s['data_wall_s'], '.1f', ' s')} | {_f(cpu, '.1f', ' µs')} | {dev_cell} | "
            f"{_f(s['data_peak_rss_mb'], '.0f', ' MB')} | {extra_cell} | "
            f"{_f(s['aggregate_validate_wall_s'], '.2f', ' s')} | {r['commit']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_floor"]:
        return floor_main(argv[1], int(argv[2]))
    if argv[:1] == ["_measure"] and argv[2:3] == ["--"]:
        return measure_main(argv[1], argv[3:])
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "config", nargs="?", help="the release's YAML (e.g. one written by make_scale.py)"
    )
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--json", dest="json_out", help="also write every figure as JSON here")
    ap.add_argument(
        "--workdir",
        default="/tmp/sgbench/runs",
        help="parent of the temporary output/timings/file-list folder",
    )
    ap.add_argument(
        "--src",
        help="run `python -m searchgen_nb` with PYTHONPATH=SRC (e.g. a `git archive` of a commit) "
        "instead of the console script",
    )
    ap.add_argument(
        "--rev",
        help="run the code of this git revision of the checkout (`git archive REV` unpacked into "
        "the work folder, "
        "then as --src): measures exactly one commit while the work tree changes",
    )
    ap.add_argument(
        "--searchgen",
        help="the searchgen-nb command line to run (shell-quoted), instead of the console script",
    )
    ap.add_argument(
        "--keep", action="store_true", help="keep the work folder (logs of every process)"
    )
    ap.add_argument(
        "--compare",
        nargs="+",
        metavar="JSON",
        help="summarise several --json results (scaling targets)",
    )
    args = ap.parse_args(argv)
    if args.compare:
        sys.stdout.write(compare(args.compare))
        return 0
    if not args.config:
        ap.error("a release config is required (or --compare)")
    if args.rounds < 1:
        ap.error("--rounds must be ≥ 1")
    args.src_commit = None
    res = bench(args)
    sys.stdout.write(markdown(res))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return 1 if res["summary"]["failed_rounds"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
