"""Command line: ``searchgen-nb {demo,data,validate,diff,textconv,release}`` (also ``python -m
searchgen_nb``). Every failure ends with a bounded message naming the step and the offending
file / line / sample_id / model, and a non-zero exit code; never a bare traceback."""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import NoReturn

import click

from searchgen_nb.errors import ReleaseInterrupted, SearchGenError, Terminated

FILE = click.Path(dir_okay=False)
FOLDER = click.Path(file_okay=False)
EXISTING_FOLDER = click.Path(file_okay=False, exists=True)
#: What a command interrupted leaves behind (default: nothing was written).
_LEFT = {
    "data": "nothing was published",
    "release": "nothing was published",
    "demo": "the demo folder may be incomplete",
}


def _fail(step: str, why: object, code: int = 1) -> NoReturn:
    click.echo(f"searchgen-nb {step}: FAILED: {why}", err=True)
    sys.exit(code)


class _Commands(click.Group):
    """Ctrl-C or SIGTERM in any command ends with one line saying what was left and exit 130 or
    143 (instead of click's bare "Aborted!"); a :class:`SearchGenError` with one line, exit 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (ReleaseInterrupted, KeyboardInterrupt) as exc:
            step = ctx.invoked_subcommand or "command"
            term = isinstance(exc, Terminated) or isinstance(exc.__context__, Terminated)
            left = _LEFT.get(step, "nothing was written")
            message = str(exc) if isinstance(exc, ReleaseInterrupted) else f"interrupted; {left}"
            if term:
                message = message.replace("interrupted", "terminated (SIGTERM)", 1)
            _fail(step, message, 143 if term else 130)
        except SearchGenError as exc:
            _fail(ctx.invoked_subcommand or "command", exc)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """SearchGen-Bench release pipeline and audit book."""


@cli.command()
@click.argument("config", type=FILE)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=FOLDER,
    help="Folder that receives the artifacts (replaced atomically; only an empty "
    "folder or one that data wrote is replaced).",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar (default: only on a terminal)."
)
@click.option(
    "--timings",
    "timings_path",
    type=FILE,
    default=None,
    help="Write per-stage wall/CPU seconds and peak RSS as JSON here (benchmarks).",
)
@click.option(
    "--thumb-cache",
    type=FOLDER,
    default=None,
    help="Keep the thumbnails in this folder, so that the next run decodes only the "
    "images that changed (default: $SEARCHGEN_THUMB_CACHE, else no cache).",
)
def data(
    config: str,
    out_dir: str,
    progress: bool | None,
    timings_path: str | None,
    thumb_cache: str | None,
) -> None:
    """Extract, aggregate and validate CONFIG's release; write the artifacts to --out."""
    from searchgen_nb.artifacts import source_date_epoch
    from searchgen_nb.config import load_config
    from searchgen_nb.pipeline import inputs, run_data
    from searchgen_nb.publish import check_no_dangling_link, check_output_file

    check_no_dangling_link(out_dir, "--out")
    if timings_path:
        check_no_dangling_link(timings_path, "--timings")
    source_date_epoch()  # a bad SOURCE_DATE_EPOCH stops here, naming it
    cfg = load_config(config)
    if timings_path:  # checked before any work: nothing may fail after publication
        forbidden = {k: v for k, v in inputs(cfg).items() if k != "project"}
        forbidden["--out folder"] = Path(os.path.realpath(out_dir))
        check_output_file(Path(os.path.realpath(timings_path)), "--timings", {"stages"}, forbidden)
    result = run_data(cfg, out_dir, progress, thumb_cache)
    counts = result.extraction
    if timings_path:  # a failure is said, not fatal: the release is published
        rss = max(
            resource.getrusage(w).ru_maxrss
            for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        stats = {
            "n_pairs": counts.table.n_prompts * counts.table.n_models,
            "stages": result.timings,
            "peak_rss_mb": round(rss / 1024, 1),
        }
        try:
            Path(timings_path).write_text(json.dumps(stats, indent=1) + "\n")
        except OSError as exc:
            click.echo(
                f"searchgen-nb data: published {result.out_dir}, but --timings "
                f"{Path(timings_path)} could not be written: {exc.strerror or exc}",
                err=True,
            )
    n = len(counts.warnings) + len(result.report.warnings)
    click.echo(
        f"searchgen-nb data: wrote {counts.table.n_prompts} prompts × {len(cfg.models)} "
        f"models to {result.out_dir} ({counts.n_files_read} result files read, "
        f"{n} {'warning' if n == 1 else 'warnings'}); all release checks passed"
    )
    for line in extraction_warning_lines(counts.warnings) + result.report.warning_lines():
        click.echo(f"searchgen-nb data: {line}")


#: How many of the extraction's warnings ``data`` prints (all are in the manifest).
SHOWN_WARNINGS = 5


def extraction_warning_lines(warnings: list[dict]) -> list[str]:
    """The first :data:`SHOWN_WARNINGS` of the extraction's warnings (data contract, § Artifacts:
    the manifest's ``extraction.warnings``) as ``warning <check> [sample_id …, model_id …]:
    <message>`` (escaped, at most 300 characters), then where the rest are."""
    from searchgen_nb.untrusted import excerpt  # a result file's text: escaped and bounded

    lines = []
    for w in warnings[:SHOWN_WARNINGS]:
        where = ", ".join(f"{k} {excerpt(w[k])}" for k in ("sample_id", "model_id") if w.get(k))
        said = excerpt(w["message"], 300)
        lines.append(f"warning {w['check']}{f' [{where}]' if where else ''}: {said}")
    if (more := len(warnings) - SHOWN_WARNINGS) > 0:
        noun = "warning" if more == 1 else "warnings"
        lines.append(f"… and {more} more {noun} in manifest.json (extraction.warnings)")
    return lines


@cli.command()
@click.option("--out", "out_dir", type=FOLDER, help="Folder for the synthetic release.")
@click.option(
    "--print-config",
    is_flag=True,
    help="Print the text releases/demo.yml must hold "
    "(the demo's config reading from data/demo) and exit.",
)
@click.option(
    "--changed",
    is_flag=True,
    help="Write the second, changed release instead (one "
    "model lower on 5 prompts of one domain, 2 results of another model lost).",
)
@click.option(
    "--previous",
    type=EXISTING_FOLDER,
    default=None,
    help="With --changed: the first "
    "release's published data folder, written into release.yml as previous_release.",
)
def demo(out_dir: str | None, print_config: bool, changed: bool, previous: str | None) -> None:
    """Write the deterministic synthetic demo release (prompts, results, release.yml,
    paper_table.json)."""
    from searchgen_nb.demo import committed_config_text, write_demo
    from searchgen_nb.publish import check_no_dangling_link, os_failure
    from searchgen_nb.published import check_previous

    if print_config:
        click.echo(committed_config_text(), nl=False)
        return
    if out_dir is None:
        _fail("demo", "--out is required (the folder for the synthetic release)", 2)
    check_no_dangling_link(out_dir, "--out")
    if previous is not None:
        try:
            check_previous(Path(previous), "--previous")
        except SearchGenError as exc:
            _fail("demo", exc, 2)
        if not changed:
            _fail(
                "demo", "--previous goes with --changed (the first release has no previous one)", 2
            )
    try:
        previous_path = None if previous is None else Path(previous)
        summary = write_demo(Path(out_dir), changed=changed, previous=previous_path)
    except OSError as exc:  # a refusal says it all; a system error: where and why
        _fail("demo", os_failure("demo, write", exc) if exc.errno is not None else exc)
    config = Path(out_dir) / "release.yml"
    click.echo(
        f"searchgen-nb demo: wrote {summary.get('n_prompts')} prompts and results to "
        f"{out_dir} (config: {config})"
    )


@cli.command()
@click.argument("old_dir", type=EXISTING_FOLDER)
@click.argument("new_dir", type=EXISTING_FOLDER)
@click.option(
    "--json", "as_json", is_flag=True, help="Print changes.json instead of the Markdown summary."
)
def diff(old_dir: str, new_dir: str, as_json: bool) -> None:
    """What changed from the release published in OLD_DIR to the one in NEW_DIR: Markdown for a
    pull-request description (headline facts, then tables), or changes.json with --json."""
    from searchgen_nb.artifacts import dumps
    from searchgen_nb.changes import compare
    from searchgen_nb.changes_markdown import markdown
    from searchgen_nb.published import check_previous

    old = check_previous(Path(old_dir), "OLD_DIR")
    new = check_previous(Path(new_dir), "NEW_DIR")
    try:
        ch = compare(old, new)
    except (KeyError, ValueError, TypeError) as exc:
        _fail(
            "diff",
            f"the folders are not releases this version can read: {type(exc).__name__}: {exc}",
        )
    if as_json:
        click.echo(dumps(ch), nl=False)
        return
    models = new.manifest["models"].items()
    names = {m: meta["display_name"] for m, meta in models}
    policies = {m: meta.get("missing_policy") for m, meta in models}
    decimals = new.manifest["scoring"]["public_rounding_decimals"]
    click.echo(markdown(ch, names, policies=policies, decimals=decimals), nl=False)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
def textconv(file: str) -> None:
    """Print a published JSON or JSONL artifact FILE as short lines, each naming what it is (a
    prompt × model pair of prompt_scores.jsonl per line), for `git diff` (README, Review a
    change)."""
    from searchgen_nb.textconv import textconv as lines

    out = click.get_text_stream("stdout")
    for line in lines(file):
        out.write(line + "\n")


@cli.command()
@click.argument("folder", type=EXISTING_FOLDER)
@click.option(
    "--report", "report_path", type=FILE, default=None, help="Also write the report as JSON here."
)
def validate(folder: str, report_path: str | None) -> None:
    """Re-check a published (or staged) artifact FOLDER on its own; exit 1 on any failed check."""
    from searchgen_nb.artifacts import dumps
    from searchgen_nb.constants import MANIFEST
    from searchgen_nb.gate.checks import validate_folder
    from searchgen_nb.publish import check_no_dangling_link, check_output_file

    if report_path:  # checked before the work
        check_no_dangling_link(report_path, "--report")
        check_output_file(
            Path(os.path.realpath(report_path)),
            "--report",
            {"passed", "checks"},
            {"FOLDER": Path(os.path.realpath(folder))},
        )
    if not os.path.lexists(Path(folder) / MANIFEST):
        _fail(
            "validate",
            f"{folder} is not a release folder: it holds no {MANIFEST} (name the folder that "
            "`data --out` wrote, or a published public/data)",
        )
    report = validate_folder(folder)
    if report_path:
        try:
            Path(report_path).write_text(dumps(report.as_dict()), encoding="utf-8")
        except OSError as exc:
            _fail("validate", f"--report {report_path}: {exc.strerror or exc}")
    if not report.passed:
        _fail("validate", f"{folder}:\n{report.summary()}")
    click.echo(f"searchgen-nb validate: {folder}: all {len(report.checks)} release checks passed")
    for line in report.warning_lines():
        click.echo(f"searchgen-nb validate: {line}")


@cli.command()
@click.argument("config", type=FILE)
@click.option(
    "--output-root",
    type=FOLDER,
    default=None,
    help="Publish below this folder instead of the project folder.",
)
@click.option(
    "--project",
    type=EXISTING_FOLDER,
    default=None,
    help="Folder with notebooks/, "
    "book/, _config.yml, _toc.yml (default: this checkout, or the cwd).",
)
def release(config: str, output_root: str | None, project: str | None) -> None:
    """Run every notebook with papermill, build the book, then publish public/data, _build/html
    and book/notebooks. Nothing is published unless every notebook, the validation and the book
    build succeed."""
    from searchgen_nb.book.release import run_release
    from searchgen_nb.publish import check_no_dangling_link

    if output_root:
        check_no_dangling_link(output_root, "--output-root")
    outcome = run_release(
        config,
        output_root=output_root,
        project=project,
        log=lambda msg: click.echo(f"searchgen-nb release: {msg}", err=True),
    )
    t = outcome.timings
    nb_time = sum(v for k, v in t.items() if k.endswith(".ipynb"))
    click.echo(
        f"searchgen-nb release: published {outcome.public_data} and "
        f"{outcome.html / 'index.html'} (notebooks {nb_time:.1f} s, book {t['book']:.1f} s,"
        f" total {t['total']:.1f} s)"
    )


def main() -> None:
    """The command line in this process (the process's entry point is
    :func:`searchgen_nb.launch.main`): while a command runs (main thread only) SIGTERM raises
    :class:`Terminated` and SIGINT ``KeyboardInterrupt``, whatever handler the process had (a
    library can leave its own), unless SIGINT is ignored; an unexpected crash still ends with
    one line (a traceback with ``SEARCHGEN_DEBUG=1``)."""

    def on_term(signum, frame):
        raise Terminated()

    handlers = {signal.SIGTERM: on_term}
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # `cmd &` in a script: kept
        handlers[signal.SIGINT] = signal.default_int_handler
    try:
        saved = {s: signal.signal(s, h) for s, h in handlers.items()}
    except ValueError:  # not the main thread
        saved = {}
    try:
        cli(prog_name="searchgen-nb", standalone_mode=True)
    except Exception as exc:  # last line of defence: name it, exit non-zero
        if os.environ.get("SEARCHGEN_DEBUG"):
            raise
        step = sys.argv[1] if len(sys.argv) > 1 else "command"
        click.echo(
            f"searchgen-nb {step}: FAILED with an internal error: {type(exc).__name__}: "
            f"{exc} (rerun with SEARCHGEN_DEBUG=1 for the traceback)",
            err=True,
        )
        sys.exit(2)
    finally:
        for s, handler in saved.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(s, handler)


if __name__ == "__main__":  # python -m searchgen_nb.cli
    main()
