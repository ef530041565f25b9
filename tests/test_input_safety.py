"""Every file the project reads is read safely (data contract, § Input files): only a regular
file (after following links), within its bound; anything else — a named pipe, a device, a
folder, a loop of links, a damaged previous release — ends in a named error within seconds,
and the inputs are left as they were.

Commands that could hang or fill memory on a regression (a named pipe, ``/dev/zero``) run in a
process of their own with a timeout, so that the regression fails instead of hanging.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from factory import make_release, model, prompt, result, run_cli, terminal_sigint

from searchgen_nb.artifacts import dumps
from searchgen_nb.files import UnreadableFile, read_bytes, read_lines

TIMEOUT = 20  # seconds; every command here ends in one or two
REASONS = {
    "fifo": "a named pipe (FIFO), not a regular file",
    "folder": "a folder, not a regular file",
    "dev_zero": "a character device, not a regular file",
    "loop": "Too many levels of symbolic links",
}
HANGS = ("fifo", "dev_zero")  # what a reader without the checks waits on or reads for ever
MAKE = {
    "fifo": os.mkfifo,
    "folder": Path.mkdir,
    "dev_zero": lambda p: p.symlink_to("/dev/zero"),
    "loop": lambda p: p.symlink_to(p.name),
}


def plant(path: Path, kind: str) -> None:
    """Put a ``kind`` (of :data:`REASONS`) where ``path`` was."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
    MAKE[kind](path)


def snapshot(root: Path) -> dict:
    """Every entry below ``root``: a regular file's bytes, a link's target, else its kind."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(folder, name)
            mode = os.lstat(p).st_mode
            key = str(p.relative_to(root))
            if stat.S_ISREG(mode):
                out[key] = p.read_bytes()
            else:
                out[key] = os.readlink(p) if stat.S_ISLNK(mode) else stat.S_IFMT(mode)
    return out


def run(*args, own_process: bool = False) -> tuple[int, str]:
    """``searchgen-nb ARGS``: exit code and stderr. In this process through the entry point
    (its last line of defence included), or in a process of its own killed after
    :data:`TIMEOUT` seconds."""
    argv = [str(a) for a in args]
    env = {k: v for k, v in os.environ.items() if k != "SEARCHGEN_DEBUG"}
    if own_process:
        proc = subprocess.run(
            [sys.executable, "-m", "searchgen_nb", *argv],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
        )
        return proc.returncode, proc.stderr
    ran = run_cli(*argv)
    return ran.returncode, ran.stderr


def _release(root: Path, **config) -> Path:
    prompts = [prompt("p1"), prompt("p2"), prompt("p3", subset="NoSearch")]
    scores = {"a": {"checklist:0": 1, "rubric:image_quality": 2}, "b": {"checklist:0": 2}}
    results = {(m, p["sample_id"]): result(scores[m]) for m in "ab" for p in prompts}
    models = {"a": model("A"), "b": model("B")}
    return make_release(root, prompts, models, results, uncertainty={"n_bootstrap": 20}, **config)


def _result(root: Path, sample_id: str, model_id: str) -> Path:
    return next((root / "results" / "rows" / sample_id / "none" / model_id).glob("*.json"))


def _records(out: Path) -> dict:
    lines = (out / "prompt_scores.jsonl").read_text().splitlines()
    return {r["sample_id"]: r for r in map(json.loads, lines)}


def _no_staging(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if ".staging-" in p.name]


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """A small published release (3 prompts × 2 models) to damage; never changed itself."""
    root = tmp_path_factory.mktemp("published")
    code, err = run("data", _release(root / "src"), "--out", root / "data")
    assert code == 0, err
    return root / "data"


# ---- result files, the dataset, the config, the paper table ------------------------------


def test_a_result_file_that_is_not_a_regular_file_is_an_invalid_pair(tmp_path):
    src = tmp_path / "src"
    cfg = _release(src)
    kinds = {
        ("p1", "a"): "fifo",
        ("p2", "a"): "dev_zero",
        ("p1", "b"): "folder",
        ("p2", "b"): "loop",
    }
    for (sid, m), kind in kinds.items():
        plant(_result(src, sid, m), kind)
    before = snapshot(src)
    code, err = run("data", cfg, "--out", tmp_path / "out", own_process=True)
    assert code == 0, err
    recs = _records(tmp_path / "out")
    for (sid, m), kind in kinds.items():
        assert recs[sid]["models"][m]["status"] == "invalid_evaluation"
        assert recs[sid]["models"][m]["error"] == f"cannot read file: {REASONS[kind]}"
    assert recs["p3"]["models"]["a"]["status"] == recs["p3"]["models"]["b"]["status"] == "scored"
    assert snapshot(src) == before


def test_a_result_file_over_its_bound_is_an_invalid_pair(tmp_path, monkeypatch):
    import searchgen_nb.extract as extract

    monkeypatch.setattr(extract, "RESULT_MAX", 200)
    cfg = _release(tmp_path)
    text = json.dumps(result({"checklist:0": 1}, parsed={"note": "x" * 200}))
    _result(tmp_path, "p1", "a").write_text(text)
    assert run("data", cfg, "--out", tmp_path / "out") == (0, "")
    error = _records(tmp_path / "out")["p1"]["models"]["a"]["error"]
    assert error == f"cannot read file: {len(text)} bytes, larger than the bound of 200 bytes"


@pytest.mark.parametrize("kind", sorted(REASONS))
@pytest.mark.parametrize("target", ["config", "dataset", "paper_table"])
def test_a_setup_file_not_a_regular_file_stops_the_command_naming_it(tmp_path, target, kind):
    src = tmp_path / "src"
    cfg = _release(src, paper_table="paper.json")
    (src / "paper.json").write_text('{"a": 40.0}')
    paths = {"config": cfg, "dataset": src / "prompts.jsonl", "paper_table": src / "paper.json"}
    plant(paths[target], kind)
    before = snapshot(src)
    code, err = run("data", cfg, "--out", tmp_path / "out", own_process=kind in HANGS)
    if (target, kind) == ("config", "folder"):  # the command line itself refuses it
        assert code == 2 and f"Invalid value for 'CONFIG': File '{cfg}' is a directory" in err, err
    else:
        where = {
            "config": "FAILED: config ",
            "dataset": "FAILED: metadata ",
            "paper_table": "paper_table paper.json: ",
        }[target]
        assert code == 1 and where in err and f"cannot read: {REASONS[kind]}" in err, err
    assert "internal error" not in err
    assert snapshot(src) == before and not (tmp_path / "out").exists() and _no_staging(tmp_path)


def test_the_dataset_over_its_bound_is_named(tmp_path, monkeypatch):
    import searchgen_nb.prompts as prompts

    monkeypatch.setattr(prompts, "DATASET_MAX", 100)
    code, err = run("data", _release(tmp_path), "--out", tmp_path / "out")
    assert code == 1 and "prompts.jsonl: cannot read: " in err, err
    assert "bytes, larger than the bound of 100 bytes" in err


def test_the_bounded_readers(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"ab\n" + b"c" * 20 + b"\nd\n")
    assert read_bytes(path, 26) == path.read_bytes()
    with pytest.raises(UnreadableFile, match=r"^26 bytes, larger than the bound of 25 bytes$"):
        read_bytes(path, 25)
    with pytest.raises(UnreadableFile, match=r"^line 2 is longer than the bound of 20 bytes$"):
        list(read_lines(path, line_limit=20))
    assert list(read_lines(path, line_limit=21)) == [b"ab\n", b"c" * 20 + b"\n", b"d\n"]


# ---- the configured extractor ----------------------------------------------------------


def test_an_extractor_exiting_makes_its_pairs_invalid(tmp_path):
    code, err = run("data", _release(tmp_path, extractor="sys:exit"), "--out", tmp_path / "out")
    assert code == 0, err
    entry = _records(tmp_path / "out")["p1"]["models"]["a"]
    assert entry["status"] == "invalid_evaluation"
    assert entry["error"].startswith("extractor raised SystemExit: {'success': True")
    assert len(entry["error"]) <= 300


# ---- sample_ids that cannot name a file; -0.0 --------------------------------------------

LONG = r"line 2 \(sample_id 'xxx.*…\): sample_id is 300 bytes long in UTF-8, at most 128 \(it"
ROW = r"line 2 \(sample_id 'p2'\): release_row 'rows/rrr.* is too long for a path below results"


@pytest.mark.parametrize(
    "sample_id, release_row, message",
    [
        ("x" * 300, None, LONG),
        ("é" * 65, None, r"sample_id is 130 bytes long in UTF-8, at most 128"),
        ("p2", "rows/" + "r" * 129, ROW),
    ],
)
def test_a_sample_id_too_long_for_a_file_name_is_refused(tmp_path, sample_id, release_row, message):
    line = {"sample_id": sample_id, **({"release_row": release_row} if release_row else {})}
    lines = [json.dumps(prompt("p1")), json.dumps(line)]
    cfg = make_release(
        tmp_path,
        [prompt("p1")],
        {"a": model("A")},
        {("a", "p1"): result({"checklist:0": 1})},
        prompt_lines=lines,
    )
    code, err = run("data", cfg, "--out", tmp_path / "out")
    assert code == 1 and "FAILED: metadata prompts.jsonl" in err and re.search(message, err), err
    assert len(err) < 500


def test_the_longest_sample_id_is_read(tmp_path):
    sid = "s" * 128
    results = {("a", sid): result({"checklist:0": 1})}
    cfg = make_release(tmp_path, [prompt(sid)], {"a": model("A")}, results)
    assert run("data", cfg, "--out", tmp_path / "out") == (0, "")
    assert _records(tmp_path / "out")[sid]["models"]["a"]["status"] == "scored"


def test_negative_zero_is_published_as_zero(tmp_path):
    cfg = _release(tmp_path)
    scores = '{"checklist:0": -0.0, "rubric:image_quality": -0.0}'
    _result(tmp_path, "p1", "a").write_text('{"success": true, "scores": ' + scores + "}")
    assert run("data", cfg, "--out", tmp_path / "out") == (0, "")
    entry = _records(tmp_path / "out")["p1"]["models"]["a"]
    assert entry["components_raw_0to3"]["checklist"] == 0.0 and entry["overall_9_raw"] == 0.0
    for f in (tmp_path / "out").glob("*.json*"):
        assert not re.search(r"-0\.0[,\n\]}]", f.read_text()), f.name
    doc = {"a": -0.0, "b": [-0.05, (-0.0,)], "c": "-0.0"}
    assert dumps(doc) == dumps({"a": 0.0, "b": [-0.05, [0.0]], "c": "-0.0"})


# ---- a previous release, and the folders given to `validate` and `diff` -------------------


def _edit(folder: Path, name: str, change) -> None:
    doc = json.loads((folder / name).read_text())
    change(doc)
    (folder / name).write_text(json.dumps(doc))


def _retype_and_rehash(folder: Path) -> None:
    board = "leaderboard_overall.json"
    _edit(folder, board, lambda rows: rows[0].update(overall_9="57.5", rank="1"))
    digest = hashlib.sha256((folder / board).read_bytes()).hexdigest()
    _edit(folder, "manifest.json", lambda m: m["artifact_sha256"].update({board: digest}))


def _planting(name: str, kind: str):
    return lambda folder: plant(folder / name, kind), f"{name}: cannot read: {REASONS[kind]}"


def _manifest(change, message: str):
    return lambda folder: _edit(folder, "manifest.json", change), f"manifest.json{message}"


#: damage → (what it does to a release folder, what the refusal says after the folder's name)
DAMAGES = {
    "fifo_board": _planting("leaderboard_by_domain.json", "fifo"),
    "fifo_records": _planting("prompt_scores.jsonl", "fifo"),
    "dev_zero": _planting("uncertainty.json", "dev_zero"),
    "folder_board": _planting("leaderboard_by_stratum.json", "folder"),
    "loop_board": _planting("leaderboard_overall.json", "loop"),
    "hashes_removed": _manifest(
        lambda m: m.pop("artifact_sha256"), " (top level): 'artifact_sha256' is a required property"
    ),
    "retyped_and_rehashed": (
        _retype_and_rehash,
        "leaderboard_overall.json /0/overall_9: '57.5' is not of type 'number', 'null'",
    ),
    "deep_manifest": (
        lambda d: (d / "manifest.json").write_text("[" * 100_000 + "]" * 100_000),
        "manifest.json: is not strict JSON (nested too deeply)",
    ),
    "schema_version": _manifest(
        lambda m: m.update(schema_version="2.0.0"),
        ': /schema_version is "2.0.0": this version of searchgen-nb reads '
        "releases of schema_version 1.1.0",
    ),
    "undescribed_model": _manifest(
        lambda m: m["models"].pop("b"),
        ": /model_order names model b, which /models does not describe",
    ),
    "bootstrap_settings": _manifest(
        lambda m: m["config"].update(uncertainty={"seed": "x"}),
        ": /config/uncertainty holds no bootstrap settings",
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_previous_release_is_refused_naming_file_and_place(tmp_path, published, damage):
    change, message = DAMAGES[damage]
    prev = tmp_path / "prev"
    shutil.copytree(published, prev)
    change(prev)
    cfg = _release(tmp_path / "src", previous_release="../prev")
    before = snapshot(tmp_path)
    hangs = damage in ("fifo_board", "fifo_records", "dev_zero")
    code, err = run("data", cfg, "--out", tmp_path / "out", own_process=hangs)
    assert code == 1 and f"previous_release ../prev: {prev}/{message}" in err, err
    code, err = run("diff", prev, published, own_process=hangs)
    assert code == 1 and f"FAILED: OLD_DIR: {prev}/{message}" in err, err
    assert "internal error" not in err and len(err) < 2000
    assert snapshot(tmp_path) == before and _no_staging(tmp_path)


def test_a_previous_release_folder_that_is_a_loop_of_links_is_named(tmp_path):
    plant(tmp_path / "prev", "loop")
    cfg = _release(tmp_path / "src", previous_release="../prev")
    code, err = run("data", cfg, "--out", tmp_path / "out")
    assert code == 1 and f"previous_release ../prev: {tmp_path}/prev is not a folder" in err, err


@pytest.mark.parametrize("key, value", [("benchmark", "X"), ("data_origin", "synthetic-demo")])
def test_a_release_of_another_benchmark_or_origin_is_refused(tmp_path, published, key, value):
    prev = tmp_path / "prev"
    shutil.copytree(published, prev)
    _edit(prev, "manifest.json", lambda m: m.update({key: value}))
    cfg = _release(tmp_path / "src", previous_release="../prev")
    code, err = run("data", cfg, "--out", tmp_path / "out")
    assert code == 1 and f'manifest.json: /{key} is "{value}", this release\'s is ' in err, err
    assert f"releases of another {key} are not compared" in err
    code, err = run("diff", prev, published)
    assert code == 1 and f'{prev} is a release of {key} "{value}", {published} of ' in err, err


#: damage → what ``validate`` says of it (check strict_json)
UNREADABLE = {
    "fifo_board": "leaderboard_by_domain.json: " + REASONS["fifo"],
    "fifo_records": "prompt_scores.jsonl: cannot read: " + REASONS["fifo"],
    "dev_zero": "uncertainty.json: " + REASONS["dev_zero"],
    "folder_board": "leaderboard_by_stratum.json: " + REASONS["folder"],
    "loop_board": "leaderboard_overall.json: " + REASONS["loop"],
    "deep_manifest": "manifest.json: nested too deeply",
}


@pytest.mark.parametrize("damage", sorted(UNREADABLE))
def test_validate_names_an_unreadable_file_of_the_folder(tmp_path, published, damage):
    folder = tmp_path / "data"
    shutil.copytree(published, folder)
    DAMAGES[damage][0](folder)
    before = snapshot(tmp_path)
    hangs = damage in ("fifo_board", "fifo_records", "dev_zero")
    code, err = run("validate", folder, own_process=hangs)
    assert code == 1 and "check strict_json failed" in err and UNREADABLE[damage] in err, err
    assert "internal error" not in err
    assert snapshot(tmp_path) == before


def test_a_valid_release_still_compares_and_validates(published):
    assert run("validate", published)[0] == 0
    assert run("diff", published, published) == (0, "")


#: damage of manifest.json → what ``validate`` says of it (a named check, never an internal error)
DAMAGED_MANIFESTS = {
    "hashes": (
        lambda m: m.update(artifact_sha256=5),
        "manifest.json /artifact_sha256: 5 is not of type 'object'",
    ),
    "decimals": (
        lambda m: m["scoring"].update(public_rounding_decimals=10**6),
        "manifest.json /scoring/public_rounding_decimals: 1000000 is greater than the maximum of 6",
    ),
    "n_prompts": (
        lambda m: m["dataset"].update(n_prompts=10**300),
        "manifest dataset.n_prompts = 1" + "0" * 38 + "…, records give 3",
    ),
}


def test_validate_names_a_folder_that_is_not_a_release(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    code, err = run("validate", tmp_path)
    assert code == 1, err
    assert f"{tmp_path} is not a release folder: it holds no manifest.json" in err, err
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("damage", sorted(DAMAGED_MANIFESTS))
def test_validate_names_a_damaged_manifest(tmp_path, published, damage):
    change, message = DAMAGED_MANIFESTS[damage]
    folder = tmp_path / "data"
    shutil.copytree(published, folder)
    _edit(folder, "manifest.json", change)
    code, err = run("validate", folder)
    assert code == 1 and message in err, err
    assert "internal error" not in err and len(err) < 3000


@pytest.mark.parametrize("bound, value, check, message", [
    ("MAX_VALUES", 10**6, "uncertainty", "the bootstrap would keep 1,400,000 replicate values "
     "(n_bootstrap 100,000 × 7 groups × 2 models); bound 1,000,000: set "
     "uncertainty.n_bootstrap ≤ 71,428"),
    ("MAX_PAIRS", 5, "aggregates", "the release would read and check 6 prompt × model pairs "
     "(3 prompts × 2 models); bound 5: configure fewer models (or prompts)"),
])  # fmt: skip
def test_validate_bounds_the_work_the_manifest_asks_for(
    tmp_path, published, monkeypatch, bound, value, check, message
):
    folder = tmp_path / "data"
    shutil.copytree(published, folder)
    _edit(folder, "manifest.json", lambda m: m["config"]["uncertainty"].update(n_bootstrap=10**5))
    monkeypatch.setattr(f"searchgen_nb.gate.work.{bound}", value)
    start = time.perf_counter()
    code, err = run("validate", folder)
    assert time.perf_counter() - start < 30  # a refusal, not the work (minutes) or a hang
    assert code == 1 and f"check {check} failed" in err, err
    assert "manifest.json: the release asks for more work than this version bounds" in err
    assert message in err, err


@pytest.mark.parametrize("sig, code, said", [
    (signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted"),
])  # fmt: skip
@pytest.mark.parametrize("command, target", [
    ("validate", "searchgen_nb.gate.checks.validate_folder"),
    ("diff", "searchgen_nb.changes.compare"),
    ("demo", "searchgen_nb.demo.write_demo"),
])  # fmt: skip
def test_a_signal_ends_a_command_with_one_line(
    tmp_path, published, monkeypatch, sig, code, said, command, target
):
    monkeypatch.setattr(target, lambda *a, **k: os.kill(os.getpid(), sig) or time.sleep(5))
    args = {"validate": [published], "diff": [published, published], "demo": ["--out", tmp_path]}
    start = time.perf_counter()
    with terminal_sigint():
        got, err = run(command, *args[command])
    left = "the demo folder may be incomplete" if command == "demo" else "nothing was written"
    assert (got, err) == (code, f"searchgen-nb {command}: FAILED: {said}; {left}\n")
    assert time.perf_counter() - start < 30  # a refusal, not the work (minutes) or a hang


def test_ctrl_c_ends_a_command_whatever_handler_the_process_had(published, monkeypatch):
    """A library can leave its own SIGINT handler (asyncio's, swallowing the signal) in the
    process that calls the entry point: the command still stops, and the handler is put back."""
    swallow = lambda signum, frame: None  # noqa: E731
    previous = signal.signal(signal.SIGINT, swallow)
    try:
        monkeypatch.setattr(
            "searchgen_nb.gate.checks.validate_folder",
            lambda *a, **k: os.kill(os.getpid(), signal.SIGINT) or time.sleep(5),
        )
        got, err = run("validate", published)
        assert signal.getsignal(signal.SIGINT) is swallow
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (got, err) == (130, "searchgen-nb validate: FAILED: interrupted; nothing was written\n")


class _SignalOnImport:
    """Stands for ``searchgen_nb.cli`` while it loads: a signal arrives, then it takes a while."""

    def __init__(self, sig) -> None:
        self.sig = sig

    def __getattr__(self, name):
        os.kill(os.getpid(), self.sig)
        time.sleep(5)


@pytest.mark.parametrize("sig, code, said", [
    (signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted"),
])  # fmt: skip
def test_a_signal_while_the_command_loads_is_one_line(monkeypatch, capsys, sig, code, said):
    """The process's entry point handles Ctrl-C and SIGTERM before it imports the command: one
    arriving then is one line and exit 130 / 143 (it was a 33–57-line traceback); after the
    command, further signals are ignored so that none changes what it said."""
    from searchgen_nb.launch import main

    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    monkeypatch.setitem(sys.modules, "searchgen_nb.cli", _SignalOnImport(sig))
    monkeypatch.setattr(sys, "argv", ["searchgen-nb", "validate", "somewhere"])
    start = time.perf_counter()
    try:
        with terminal_sigint():
            with pytest.raises(SystemExit) as exc:
                main()
            after = {s: signal.getsignal(s) for s in saved}
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
    assert exc.value.code == code and time.perf_counter() - start < 4
    said = f"searchgen-nb validate: FAILED: {said}; nothing was written\n"
    assert capsys.readouterr().err == said
    assert set(after.values()) == {signal.SIG_IGN}


@pytest.mark.slow
@pytest.mark.parametrize("sig, code, said", [
    (signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted"),
])  # fmt: skip
def test_a_signal_while_a_notebook_runs_is_one_line(tmp_path, sig, code, said):
    """Ctrl-C (sent to the process group, as a terminal does: the kernel gets it too) or SIGTERM
    while a notebook runs: the one line, and no report of the dead kernel's task after it."""
    cfg, site = _release(tmp_path / "src"), tmp_path / "site"
    proc = subprocess.Popen(
        [sys.executable, "-m", "searchgen_nb", "release", str(cfg), "--output-root", str(site)],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    done = site / "build" / "release" / "src" / "book" / "notebooks" / "03_validate.ipynb"
    deadline = time.monotonic() + TIMEOUT * 4
    while not done.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # notebook 04 runs
    (os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig))
    err = proc.communicate(timeout=TIMEOUT * 4)[1]
    assert proc.returncode == code, err
    assert err.splitlines()[-1] == f"searchgen-nb release: FAILED: {said}; nothing was published"
    assert "Traceback" not in err and "Task exception" not in err, err
    assert not (site / "public").exists()


@pytest.mark.parametrize("marker", ["manifest.json", ".searchgen-nb", ".searchgen-nb-demo"])
def test_a_fifo_where_an_owned_folder_keeps_its_marker_is_never_waited_on(tmp_path, marker):
    """Deciding whether a parent of ``--out`` is this tool's folder reads its marker file only
    when that is a regular file: a FIFO there is not a marker (it hung ``data`` before)."""
    cfg = _release(tmp_path / "src")
    parent = tmp_path / "parent"
    parent.mkdir()
    os.mkfifo(parent / marker)
    code, err = run("data", cfg, "--out", parent / "out", own_process=True)
    assert code == 0, err
    assert sorted(os.listdir(parent)) == sorted([marker, "out"])


#: A command's process (no earlier test's event loop, e.g. the browser's, is running in it).
PENDING_RESET = """
import asyncio, sys
from jupyter_core.utils import ensure_event_loop
from searchgen_nb.book.notebooks import release_kernel
with release_kernel(sys.argv[1]) as (_, kc):
    loop = ensure_event_loop()  # the loop the kernel's calls run on
    pending = loop.create_task(kc.execute_interactive("1", output_hook=lambda msg: None))
loop.run_until_complete(asyncio.sleep(0))  # the loop runs again, as the shutdown runs it
print(pending.cancelled())
"""


@pytest.mark.slow
def test_a_reset_left_pending_by_an_interruption_is_never_resumed(tmp_path):
    """Ctrl-C between two notebooks leaves the kernel's reset pending on the command's event
    loop; leaving the kernel cancels it, so that the kernel's shutdown, on the same loop, does
    not resume it on stopped channels (a traceback printed after the command's one line)."""
    proc = subprocess.run(
        [sys.executable, "-c", PENDING_RESET, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 3,
    )
    assert proc.stdout == "True\n", proc.stderr
