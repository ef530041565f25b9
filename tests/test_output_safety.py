"""Nothing outside the release is ever deleted (data contract, § Publication).

Every command that writes replaces only what it made itself (a data release with its own
manifest, a version or work folder with this tool's mark) or an empty folder; it refuses
anything else by name before any change: an input, a folder with foreign files, a published
version, a published path that is not its link. A file-system error names the step and the
path; temporary folders go on every exit path; SIGTERM is handled as Ctrl-C; the book's
download links stay inside their own version folder.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from factory import make_release, model, prompt, result, run_cli, terminal_sigint

import searchgen_nb.pipeline as pipeline
from searchgen_nb.book.release import fresh_work_folder, output_root_problems
from searchgen_nb.config import load_config, project_root
from searchgen_nb.errors import ReleaseError
from searchgen_nb.publish import (
    MARKER,
    PUBLISHED,
    current_version,
    os_failure,
    publish,
    release_lock,
    step,
)


def cli(*args, env: dict | None = None) -> tuple[int, str]:
    """``searchgen-nb ARGS`` in this process (:func:`factory.run_cli`) at a fixed
    ``SOURCE_DATE_EPOCH``: (exit code, its output)."""
    ran = run_cli(*args, env={"SOURCE_DATE_EPOCH": "1780000000", **(env or {})})
    return ran.returncode, ran.stdout + ran.stderr


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry below ``folder`` (links not followed): file bytes, link targets, folders."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            else:
                out[rel] = "dir" if path.is_dir() else path.read_bytes()
    return out


def kept(before: dict, after: dict) -> list[str]:
    """What of ``before`` is missing or changed in ``after`` (empty: every entry still there)."""
    return [k for k, v in before.items() if after.get(k) != v]


@pytest.fixture
def work(tmp_path):
    """The adversary's layout: ``work/in/`` (release.yml, prompts.jsonl, results/) and
    ``work/notes.txt``; returns ``work``."""
    ps = [prompt("p1"), prompt("p2", subset="NoSearch")]
    res = {(m, p["sample_id"]): result({"checklist:0": 2}) for m in "ab" for p in ps}
    make_release(tmp_path / "work" / "in", ps, {"a": model("A"), "b": model("B")}, res)
    (tmp_path / "work" / "notes.txt").write_text("mine\n")
    return tmp_path / "work"


def _fake_sources(base: Path) -> dict[str, Path]:
    for rel in PUBLISHED:
        (base / rel).mkdir(parents=True)
        (base / rel / "ID").write_text(base.name)
    return {rel: base / rel for rel in PUBLISHED}


# ---- 1. data --out and release --output-root against every input and foreign folder -------

TARGETS = (
    "input folder",
    "results_root",
    "parent",
    "project",
    "HOME",
    "foreign",
    "previous_release",
)


def _target(name: str, work: Path, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".bashrc").write_text("# mine\n")
    foreign = tmp_path / "foreign"
    foreign.mkdir(exist_ok=True)
    (foreign / "thesis.tex").write_text("mine\n")
    return {
        "input folder": work / "in",
        "results_root": work / "in" / "results",
        "parent": work,
        "project": project_root(),
        "HOME": home,
        "foreign": foreign,
        "previous_release": tmp_path / "prev",
    }[name]


def _with_previous(work: Path, tmp_path: Path) -> Path:
    """The config with ``previous_release`` set to a data release made first (``tmp/prev``)."""
    cfg = work / "in" / "release.yml"
    assert cli("data", cfg, "--out", tmp_path / "prev")[0] == 0
    cfg.write_text(cfg.read_text() + f"previous_release: {tmp_path / 'prev'}\n")
    return cfg


@pytest.mark.parametrize("name", TARGETS)
def test_data_refuses_every_input_and_foreign_folder(name, work, tmp_path):
    cfg = _with_previous(work, tmp_path)
    out = _target(name, work, tmp_path)
    look = (lambda: sorted(os.listdir(out))) if name == "project" else (lambda: snapshot(tmp_path))
    before = look()
    code, msg = cli("data", cfg, "--out", out, env={"HOME": str(tmp_path / "home")})
    assert code == 1 and f"--out {out}" in msg, msg
    inputs = "config|results_root|previous_release|project"
    assert re.search(rf"(is|contains|lies inside) the ({inputs}) |holds 1 entry", msg), msg
    assert look() == before  # every file still there, nothing added (no staging folder left)


@pytest.mark.parametrize("name", TARGETS)
def test_release_writes_only_its_own_paths(name, work, tmp_path):
    """The release's checks before any change, then what it writes (lock, work folder, the
    publication) into each output root it accepts: every file there before is still there."""
    cfg = load_config(_with_previous(work, tmp_path))
    out = _target(name, work, tmp_path)
    if name == "project":  # the default output root; its own checkout is not written by a test
        assert output_root_problems(out, cfg) == []
        return
    before = snapshot(tmp_path)
    problems = output_root_problems(out.resolve(), cfg)
    if name in ("results_root", "previous_release"):
        [problem] = problems
        assert f"the {name} " in problem and "never written" in problem
        assert snapshot(tmp_path) == before
        return
    assert problems == []
    with release_lock(out, "release.yml"):
        fresh_work_folder(out / "build" / "release")
        publish(out, _fake_sources(tmp_path / "sources" / "v1"), "v1")
    assert kept(before, snapshot(tmp_path)) == []
    assert current_version(out) == "v1" and (out / "public" / "data" / "ID").read_text() == "v1"


def test_data_replaces_only_an_empty_folder_or_its_own(work, tmp_path):
    cfg = work / "in" / "release.yml"
    (tmp_path / "empty").mkdir()
    assert cli("data", cfg, "--out", tmp_path / "empty")[0] == 0
    first = snapshot(tmp_path / "empty")
    assert cli("data", cfg, "--out", tmp_path / "empty")[0] == 0  # its own: replaced, same bytes
    assert snapshot(tmp_path / "empty") == first
    (tmp_path / "empty" / "notes.txt").write_text("mine\n")
    before = snapshot(tmp_path)
    code, msg = cli("data", cfg, "--out", tmp_path / "empty")
    assert code == 1 and "holds 1 entry (notes.txt) this command did not write" in msg
    assert snapshot(tmp_path) == before


# ---- 2. clean-up after publishing removes only versions this tool made -------------------


def test_publish_leaves_what_it_did_not_make_in_a_shared_releases_folder(tmp_path):
    shared = tmp_path / "shared"
    (shared / "team-archive").mkdir(parents=True)
    (shared / "team-archive" / "2025.tar").write_bytes(b"\0" * 10)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / ".releases").symlink_to(shared)
    said = []
    for v in ("v1", "v2", "v3"):
        publish(tmp_path / "site", _fake_sources(tmp_path / v), v, log=said.append)
    assert sorted(os.listdir(shared)) == ["current", "previous", "team-archive", "v2", "v3"]
    assert (shared / "team-archive" / "2025.tar").read_bytes() == b"\0" * 10
    assert said and all(
        "team-archive" in s and "not a release version this tool made" in s for s in said
    )


def test_publish_keeps_an_older_version_that_is_an_input_of_the_run(tmp_path):
    site, said = tmp_path / "site", []
    for v in ("v1", "v2"):
        publish(site, _fake_sources(tmp_path / v), v)
    previous = site / ".releases" / "v1" / "public" / "data"
    before = snapshot(site / ".releases" / "v1")
    ins = {"previous_release": previous.resolve()}
    publish(site, _fake_sources(tmp_path / "v3"), "v3", log=said.append, inputs=ins)
    assert sorted(os.listdir(site / ".releases")) == ["current", "previous", "v1", "v2", "v3"]
    assert snapshot(site / ".releases" / "v1") == before
    assert said == [
        f"kept v1 in {site / '.releases'}: it holds the previous_release "
        f"{previous.resolve()} of this run"
    ]


# ---- 3. a published version is never written into ------------------------------------------


@pytest.mark.parametrize(
    "target", ["public/data", ".releases/current/public/data", ".releases", "public/data/sub"]
)
def test_data_refuses_to_write_into_a_published_version(target, work, tmp_path):
    cfg = work / "in" / "release.yml"
    assert cli("data", cfg, "--out", tmp_path / "d")[0] == 0
    sources = _fake_sources(tmp_path / "src")
    shutil.rmtree(sources["public/data"])
    shutil.copytree(tmp_path / "d", sources["public/data"])
    site = tmp_path / "site"
    publish(site, sources, "v1")
    before = snapshot(site)
    code, msg = cli("data", cfg, "--out", site / target)
    assert code == 1 and "published release" in msg and "searchgen-nb release" in msg, msg
    assert re.search(r"published release (v1|\.releases)", msg)
    assert snapshot(site) == before


# ---- 4. every published path checked before any change; real folders refused by name -------


def _file(site):
    (site / "public").mkdir(parents=True)
    (site / "public" / "data").write_text("mine\n")


def _folder(site):
    (site / "_build" / "html").mkdir(parents=True)
    (site / "_build" / "html" / "index.html").write_text("<p>mine</p>\n")


def _foreign_link(site):
    (site / "book").mkdir(parents=True)
    (site / "book" / "notebooks").symlink_to(site.parent)


def _parent_is_file(site):
    site.mkdir()
    (site / "public").write_text("mine\n")


def _current_is_folder(site):
    (site / ".releases" / "current").mkdir(parents=True)
    (site / ".releases" / "current" / "keep.txt").write_text("mine\n")


@pytest.mark.parametrize(
    "make, where, what",
    [
        (_file, "public/data", "is a file"),
        (_folder, "_build/html", "is a folder holding 1 entry (index.html)"),
        (_foreign_link, "book/notebooks", "is a link to"),
        (_parent_is_file, "public", "is a file, not a folder"),
        (_current_is_folder, ".releases/current", "is a folder holding 1 entry (keep.txt)"),
    ],
)
def test_publication_refuses_what_it_did_not_make_and_changes_nothing(make, where, what, tmp_path):
    site = tmp_path / "site"
    make(site)
    before = snapshot(tmp_path)
    expect = rf"{re.escape(str(site / where))} {re.escape(what)}.*nothing was changed"
    with pytest.raises(ReleaseError, match=expect):
        publish(site, _fake_sources(tmp_path / "src"), "v1")
    shutil.rmtree(tmp_path / "src")
    assert snapshot(tmp_path) == before


def test_release_cli_refuses_a_file_at_public_data_before_any_work(work, tmp_path):
    site = tmp_path / "site"
    _file(site)
    before = snapshot(tmp_path)
    cfg = work / "in" / "release.yml"
    code, msg = cli("release", cfg, "--output-root", site, "--project", project_root())
    assert code == 1 and f"{site / 'public' / 'data'} is a file" in msg, msg
    assert "nothing was changed" in msg
    assert len(msg) < 1000 and snapshot(tmp_path) == before  # no lock, no work folder, no link


def test_release_refuses_a_work_folder_it_did_not_mark(work, tmp_path):
    cfg = load_config(work / "in" / "release.yml")
    (tmp_path / "build" / "release").mkdir(parents=True)
    (tmp_path / "build" / "release" / "mine.txt").write_text("mine\n")
    [problem] = output_root_problems(tmp_path, cfg)
    assert (
        f"the work folder {tmp_path / 'build' / 'release'} is a folder holding 1 entry "
        "(mine.txt)" in problem
    )
    (tmp_path / "build" / "release" / MARKER).write_text("release")
    assert output_root_problems(tmp_path, cfg) == []  # marked: its own, emptied on the next run


# ---- 8. a file-system error is a named, bounded failure; no temporary folder stays -----------


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device", str(args[0]))


def _read_only(dest):
    raise OSError(errno.EROFS, "Read-only file system", str(dest))


@pytest.mark.parametrize(
    "target, expect",
    [
        (
            "write_jsonl",
            r"data, stage extract: .*\.out\.staging-.*prompt_scores\.jsonl: No space left",
        ),
        ("staging_dir", r"data, staging: .*out: Read-only file system"),
        ("ismount", r"--out .*out is a mount point"),
    ],
)
def test_data_names_the_step_and_path_of_a_file_system_failure(
    target, expect, work, tmp_path, monkeypatch
):
    if target == "write_jsonl":  # disk full
        monkeypatch.setattr(pipeline, "write_jsonl", _no_space)
    elif target == "staging_dir":
        monkeypatch.setattr(pipeline, "staging_dir", _read_only)
    else:
        real = os.path.ismount
        monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == tmp_path / "out" or real(p))
    (tmp_path / "out").mkdir()
    before = snapshot(tmp_path)
    code, msg = cli("data", work / "in" / "release.yml", "--out", tmp_path / "out")
    assert code == 1 and re.search(expect, msg), msg
    assert "internal error" not in msg and len(msg) < 1000 and msg.count("\n") == 1
    assert snapshot(tmp_path) == before  # the staging folder went too


def test_a_copy_failure_while_publishing_is_bounded_and_leaves_no_temporary_folder(
    tmp_path, monkeypatch
):
    site = tmp_path / "site"
    publish(site, _fake_sources(tmp_path / "old"), "v-old")
    before = snapshot(site)
    tmp = site / ".releases" / ".v-new.tmp" / "public" / "data"
    errors = [
        (f"/s/f{i}", f"{tmp}/f{i}", "[Errno 28] No space left on device") for i in range(3000)
    ]

    def copytree(*args, **kwargs):
        raise shutil.Error(errors)

    monkeypatch.setattr(shutil, "copytree", copytree)
    with pytest.raises(ReleaseError) as info:
        with step("release, publish"):
            publish(site, _fake_sources(tmp_path / "new"), "v-new")
    message = str(info.value)
    assert message.startswith(f"release, publish: cannot write {tmp}/f0: [Errno 28] No space")
    assert message.endswith("(and 2999 more files)") and len(message) < 600
    assert snapshot(site) == before


def test_a_later_run_removes_what_a_killed_run_left_and_only_that(work, tmp_path):
    dead, alive = ".out.staging-999999999-x1", f".out.staging-{os.getpid()}-x2"
    for name in (dead, alive):
        (tmp_path / name).mkdir()
        (tmp_path / name / "prompt_scores.jsonl").write_text("{}\n")
    assert cli("data", work / "in" / "release.yml", "--out", tmp_path / "out")[0] == 0
    assert not (tmp_path / dead).exists() and (tmp_path / alive / "prompt_scores.jsonl").exists()
    site = tmp_path / "site"
    (site / ".releases" / ".v0.tmp").mkdir(parents=True)
    (site / ".releases" / ".v0.tmp" / MARKER).write_text("v0")
    (site / ".releases" / ".notes.tmp").mkdir()
    (site / ".releases" / ".notes.tmp" / "keep.txt").write_text("mine\n")
    publish(site, _fake_sources(tmp_path / "src"), "v1")
    assert sorted(os.listdir(site / ".releases")) == [".notes.tmp", "current", "v1"]


def test_os_failure_names_both_paths_of_a_rename():
    exc = OSError(errno.EXDEV, "Invalid cross-device link", "/a/.x.staging-1", None, "/b/x")
    assert (
        str(os_failure("data, stage publish", exc))
        == "data, stage publish: /a/.x.staging-1 → /b/x: Invalid cross-device link"
    )


# ---- 9. SIGTERM is handled as Ctrl-C ----------------------------------------------------------


@pytest.mark.parametrize(
    "when, said",
    [
        ("validate", "terminated (SIGTERM); nothing was published, {out} is as it was"),
        ("publish", "terminated (SIGTERM) after {out} was published"),
    ],
)
def test_sigterm_says_whether_anything_was_published_and_removes_staging(
    when, said, work, tmp_path, monkeypatch
):
    name = {"validate": "gate", "publish": "promote"}[when]
    real = getattr(pipeline, name)

    def term_then(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, name, term_then)
    handler = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "out"
    code, msg = cli("data", work / "in" / "release.yml", "--out", out)
    assert code == 143 and msg.strip() == "searchgen-nb data: FAILED: " + said.format(out=out), msg
    assert [p.name for p in tmp_path.iterdir() if "staging" in p.name] == []
    assert (out / "manifest.json").exists() == (when == "publish")
    assert signal.getsignal(signal.SIGTERM) == handler  # the command's handler is gone


# ---- 10. every output path is checked before the work starts --------------------------------


@pytest.mark.parametrize(
    "timings, reason",
    [
        ("/nonexistent/t.json", "cannot be written: there is no folder /nonexistent"),
        ("in/prompts.jsonl", "is the dataset"),
        ("out/t.json", "lies inside the --out folder"),
        ("notes.txt", "is a file this command did not write"),
    ],
)
def test_timings_is_checked_before_any_work(timings, reason, work, tmp_path):
    path = Path(timings) if timings.startswith("/") else work / timings
    before = snapshot(tmp_path)
    code, msg = cli("data", work / "in" / "release.yml", "--out", work / "out", "--timings", path)
    assert code == 1 and f"--timings {path.resolve()} {reason}" in msg, msg
    assert "nothing was done" in msg
    assert snapshot(tmp_path) == before


def test_validate_report_is_checked_before_validating(work, tmp_path):
    assert cli("data", work / "in" / "release.yml", "--out", tmp_path / "d")[0] == 0
    before = snapshot(tmp_path)
    for report, reason in (
        (tmp_path / "d" / "r.json", "lies inside the FOLDER"),
        (tmp_path / "no" / "r.json", "cannot be written: there is no folder"),
    ):
        code, msg = cli("validate", tmp_path / "d", "--report", report)
        assert code == 1 and f"--report {report} {reason}" in msg, msg
        assert snapshot(tmp_path) == before
    assert cli("validate", tmp_path / "d", "--report", tmp_path / "r.json")[0] == 0
    assert cli("validate", tmp_path / "d", "--report", tmp_path / "r.json")[0] == 0  # its own


# ---- 11. the book's download links stay inside their own version folder ---------------------


@pytest.mark.slow
def test_download_links_resolve_inside_their_own_version_folder(fixture_release):
    _, site, _ = fixture_release
    html = site / ".releases" / current_version(site) / "_build" / "html"
    links = 0
    for page in html.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"#?]*downloads/[^"#?]*)"', text):
            target = Path(os.path.normpath(page.parent / href))
            assert target.is_relative_to(html) and target.exists(), (page, href)
            links += 1
    assert links > 20


# ---- 12. a data folder is its own only if every entry is a file it writes -------------------


def _subfolder(out: Path) -> str:
    (out / "changes.json").unlink()
    (out / "changes.json").mkdir()
    (out / "changes.json" / "notes.txt").write_text("mine\n")
    return "changes.json"


def _schema_folder(out: Path) -> str:
    (out / "schemas" / "keep.schema.json").mkdir()
    (out / "schemas" / "keep.schema.json" / "f").write_text("mine\n")
    return "schemas/keep.schema.json"


def _artifact_link(out: Path) -> str:
    (out / "uncertainty.json").unlink()
    (out / "uncertainty.json").symlink_to(out.parent / "mine.json")
    return "uncertainty.json"


def _foreign_manifest(out: Path) -> str:
    (out / "manifest.json").write_text('{"mine": 1}\n')
    return "but no manifest.json of a data release"


@pytest.mark.parametrize("make", [_subfolder, _schema_folder, _artifact_link, _foreign_manifest])
def test_data_refuses_a_folder_with_entries_named_as_artifacts(make, work, tmp_path):
    cfg, out = work / "in" / "release.yml", tmp_path / "out"
    (tmp_path / "mine.json").write_text('{"mine": 1}\n')
    assert cli("data", cfg, "--out", out)[0] == 0
    named = make(out)
    before = snapshot(tmp_path)
    code, msg = cli("data", cfg, "--out", out)
    assert code == 1 and f"--out {out} holds " in msg and named in msg, msg
    assert snapshot(tmp_path) == before


def test_data_checks_the_folder_again_right_before_the_swap(work, tmp_path, monkeypatch):
    out, real = tmp_path / "out", pipeline.gate

    def then_a_thesis(*args, **kwargs):  # another program fills --out while data runs
        out.mkdir()
        (out / "thesis.tex").write_text("mine\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "gate", then_a_thesis)
    code, msg = cli("data", work / "in" / "release.yml", "--out", out)
    assert code == 1 and f"--out {out} changed while data ran" in msg, msg
    assert "holds 1 entry (thesis.tex)" in msg and "nothing was published" in msg
    assert sorted(os.listdir(tmp_path)) == ["out", "work"]  # the staging folder went
    assert snapshot(out) == {"thesis.tex": b"mine\n"}


# ---- 13. demo --out: only its own marked folder, never through a link, never half-written ----


@pytest.fixture
def tiny_demo(monkeypatch):
    """``demo`` cut to 2 prompts (what is tested is how it writes, not what)."""
    from searchgen_nb import demo

    prompts = demo.build_prompts()[:2]
    files = {
        f"{demo.result_folder(p, m)}/image.png": demo.PNG_BYTES
        for p in prompts
        for m in demo.ROSTER
    }
    plans = {m["model_id"]: {p.sample_id: "scored" for p in prompts} for m in demo.ROSTER}
    table = {m["model_id"]: 50.0 for m in demo.ROSTER}
    monkeypatch.setattr(demo, "build_demo", lambda changed=False: (prompts, files, plans, table))
    return demo


def _comment_only(out: Path) -> str:
    shutil.rmtree(out)
    out.mkdir()
    (out / "release.yml").write_text("benchmark: X  # data_origin: synthetic-demo\n")
    (out / "prompts.jsonl").symlink_to(out.parent / "mine.jsonl")
    return "holds no demo (no .searchgen-nb file"


def _linked_prompts(out: Path) -> str:
    (out / "prompts.jsonl").unlink()
    (out / "prompts.jsonl").symlink_to(out.parent / "mine.jsonl")
    return "holds 1 entry (prompts.jsonl) that are links or not"


def _linked_paper_table(out: Path) -> str:
    (out / "paper_table.json").unlink()
    (out / "paper_table.json").symlink_to(out.parent / "mine.jsonl")
    return "holds 1 entry (paper_table.json) that are links or not"


def _hard_linked_paper_table(out: Path) -> str:
    """The user's file under a second name: replacing that name would leave the user's file
    as it is, but the folder is then not one the demo wrote."""
    (out / "paper_table.json").unlink()
    os.link(out.parent / "mine.jsonl", out / "paper_table.json")
    return "holds 1 entry (paper_table.json) that are links or not"


def _hard_linked_result(out: Path) -> str:
    image = next((out / "results").rglob("image.png"))
    image.unlink()
    os.link(out.parent / "mine.jsonl", image)
    return "image.png (a link)"


def _linked_result(out: Path) -> str:
    image = next((out / "results").rglob("image.png"))
    image.unlink()
    image.symlink_to(out.parent / "mine.jsonl")
    return "image.png (a link)"


def _foreign_file(out: Path) -> str:
    (out / "notes.txt").write_text("mine\n")
    return "holds 1 entry (notes.txt)"


@pytest.mark.parametrize(
    "make",
    [
        _comment_only,
        _linked_prompts,
        _linked_paper_table,
        _hard_linked_paper_table,
        _linked_result,
        _hard_linked_result,
        _foreign_file,
    ],
)
def test_demo_refuses_links_and_what_it_did_not_write(make, tiny_demo, tmp_path):
    out = tmp_path / "demo"
    (tmp_path / "mine.jsonl").write_text("my dataset\n")
    assert cli("demo", "--out", out)[0] == 0
    named = make(out)
    before = snapshot(tmp_path)
    code, msg = cli("demo", "--out", out)
    assert code == 1 and str(out) in msg and named in msg and "nothing was changed" in msg, msg
    assert snapshot(tmp_path) == before


def test_a_demo_carries_the_one_mark_and_one_marked_as_before_is_still_its_own(tiny_demo, tmp_path):
    out = tmp_path / "demo"
    assert cli("demo", "--out", out)[0] == 0
    assert (out / MARKER).read_text() == "synthetic-demo"
    (out / MARKER).unlink()  # a demo as earlier versions marked it
    (out / ".searchgen-nb-demo").write_text("synthetic-demo\n")
    (out / "prompts.jsonl").write_text("stale\n")
    assert cli("demo", "--out", out)[0] == 0  # updated in place, not refused
    assert (out / MARKER).read_text() == "synthetic-demo"
    assert (out / "prompts.jsonl").read_text() != "stale\n"
    (out / ".searchgen-nb-demo").write_text("something else\n")
    (out / MARKER).write_text("release")  # another folder's mark is no demo's
    code, msg = cli("demo", "--out", out)
    assert code == 1 and "holds no demo (no .searchgen-nb file a demo writes)" in msg, msg


@pytest.mark.parametrize(
    "sig, code, said",
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")],
)
def test_an_interrupted_demo_leaves_no_half_written_folder(
    sig, code, said, tiny_demo, tmp_path, monkeypatch
):
    real, calls = tiny_demo._write, []

    def stop_on_the_fifth(path, data):
        calls.append(path)
        if len(calls) == 5:
            os.kill(os.getpid(), sig)
        real(path, data)

    monkeypatch.setattr(tiny_demo, "_write", stop_on_the_fifth)
    out = tmp_path / "demo"
    with terminal_sigint():
        got, msg = cli("demo", "--out", out)
    assert got == code and f"{said}; nothing was written, {out} is as it was" in msg, msg
    assert os.listdir(tmp_path) == []  # neither the folder nor its staging folder


# ---- 12. no output inside an input, a published version, or a folder this tool owns ---------


def _owned_layout(work: Path, tmp_path: Path) -> None:
    """``d`` and ``d2``: data releases; ``site``: d published as v1; ``root/build/release``: a
    release's work folder; ``demo``: a folder carrying the demo's marker."""
    assert cli("data", work / "in" / "release.yml", "--out", tmp_path / "d")[0] == 0
    shutil.copytree(tmp_path / "d", tmp_path / "d2")
    sources = _fake_sources(tmp_path / "src")
    shutil.rmtree(sources["public/data"])
    shutil.copytree(tmp_path / "d", sources["public/data"])
    publish(tmp_path / "site", sources, "v1")
    fresh_work_folder(tmp_path / "root" / "build" / "release")
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / ".searchgen-nb-demo").write_text("synthetic-demo\n")


@pytest.mark.parametrize(
    "args, reason",
    [
        ("validate {t}/d --report {t}/d2/validation_report.json", "lies inside the data release"),
        ("demo --out {t}/site/public/data/dm", "lies inside the published release v1"),
        ("demo --changed --previous {t}/d --out {t}/d/sub", "lies inside the --previous"),
        ("data {cfg} --out {t}/d/sub", "lies inside the data release"),
        ("data {cfg} --out {t}/demo/sub", "lies inside the demo"),
        ("demo --out {t}/demo/sub", "lies inside the demo"),
        ("validate {t}/d --report {t}/root/build/release/r.json", "lies inside the release work"),
        (
            "data {cfg} --out {t}/o --timings {t}/root/build/release/t.json",
            "inside the release work",
        ),
        ("data {cfg} --out {t}/root/build/release/x", "lies inside the release work"),
        ("demo --out {t}/root/build/release/x", "lies inside the release work"),
    ],
)
def test_no_output_lies_inside_an_input_or_what_this_tool_owns(args, reason, work, tmp_path):
    _owned_layout(work, tmp_path)
    before = snapshot(tmp_path)
    code, msg = cli(*args.format(t=tmp_path, cfg=work / "in" / "release.yml").split())
    assert code == 1 and reason in msg, msg
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "args, option",
    [
        ("data {cfg} --out {t}/link", "--out"),
        ("data {cfg} --out {t}/link/out", "--out"),
        ("data {cfg} --out {t}/o --timings {t}/link", "--timings"),
        ("validate {t}/d --report {t}/link", "--report"),
        ("release {cfg} --output-root {t}/link", "--output-root"),
        ("demo --out {t}/link", "--out"),
    ],
)
def test_no_output_is_written_through_a_dangling_link(args, option, work, tmp_path):
    """A link to a path that does not exist is refused by name: following it would make the
    missing target, and the folders above it, wherever the link points."""
    assert cli("data", work / "in" / "release.yml", "--out", tmp_path / "d")[0] == 0
    (tmp_path / "link").symlink_to(tmp_path / "gone" / "zz")
    before = snapshot(tmp_path)
    code, msg = cli(*args.format(t=tmp_path, cfg=work / "in" / "release.yml").split())
    assert code == 1 and msg.count("\n") == 1, msg
    assert (
        f"{option} {tmp_path}/link" in msg
        and f"{tmp_path}/link is a link to {tmp_path}/gone/zz, which does not exist" in msg
    ), msg
    assert snapshot(tmp_path) == before and not (tmp_path / "gone").exists()


def _file_size_limit(limit: int):
    """For a child process: files larger than ``limit`` bytes cannot be written (``write``
    fails with EFBIG, as it fails with ENOSPC on a full disk: an error that names no file)."""

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("command", ["data", pytest.param("demo", marks=pytest.mark.slow)])
def test_a_write_the_system_refuses_names_the_file_and_leaves_nothing(command, work, tmp_path):
    """A write the system refuses (files over a size limit here; on a full disk, as here, the
    error names no file) is one line naming the step, the file and the reason, and nothing
    stays. The demo case is slow: the whole demo is made before anything is written."""
    args = {
        "data": ["data", work / "in" / "release.yml", "--out", tmp_path / "out"],
        "demo": ["demo", "--out", tmp_path / "out"],
    }[command]
    before = snapshot(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "searchgen_nb", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_file_size_limit(4096),
    )
    step = {"data": "data, stage extract", "demo": "demo, write"}[command]
    said = re.escape(f"searchgen-nb {command}: FAILED: {step}: {tmp_path}/")
    said += r"\S+: File too large\n"
    assert proc.returncode == 1 and re.fullmatch(said, proc.stderr), proc.stderr
    assert snapshot(tmp_path) == before  # the staging folder went too


@pytest.mark.slow
def test_a_book_build_the_system_refuses_is_one_line_naming_the_file(tmp_path):
    """Jupyter Book failing to write (here: files over a size limit) is one line naming the
    step, the folder, the file and the system's reason, without terminal colours."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "_config.yml").write_text("title: t\n")
    (src / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    (src / "intro.md").write_text("# Intro\n")
    code = (
        "import sys; from pathlib import Path; from searchgen_nb.book.release import "
        "build_book; from searchgen_nb.errors import ReleaseError\ntry: build_book(Path("
        f"{str(src)!r}))\nexcept ReleaseError as exc: sys.exit(str(exc))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_file_size_limit(100_000),
    )
    said = proc.stderr
    assert proc.returncode == 1 and said.count("\n") == 1 and "\x1b" not in said, said
    assert said.startswith(f"book build failed (jupyter-book exit 1) in {src}: "), said
    assert re.search(r"/\S+: OSError\(27, 'File too large'\) \(and \d+ more\)$", said), said


def test_a_full_disk_during_a_release_removes_its_work_folder(work, tmp_path, monkeypatch):
    """The work folder (notebooks, book build: megabytes) would keep the disk full: on such a
    failure it goes, and the failure says so; the published paths stay as they were."""
    import searchgen_nb.book.release as release

    def no_space(*args, **kwargs):
        raise ReleaseError(
            f"notebook 01_extract.ipynb: cell 3 raised ReleaseError: data, stage "
            f"extract: {tmp_path}/site/build/release/data/prompt_scores.jsonl: "
            "No space left on device"
        )

    monkeypatch.setattr(release, "run_notebooks", no_space)
    code, msg = cli(
        "release",
        work / "in" / "release.yml",
        "--output-root",
        tmp_path / "site",
        "--project",
        project_root(),
    )
    assert code == 1 and msg.endswith(
        f"No space left on device; the work folder {tmp_path}/site/"
        "build/release was removed to free the space it took\n"
    ), msg
    assert not (tmp_path / "site" / "build" / "release").exists()
    assert not (tmp_path / "site" / "public").exists()
