"""Run files read at report speed (issue 21, item 4): ``ocrmetrics merge``, ``compare``, ``report`` and the plugin's
``--ocr-baseline`` check the structure of what they read (``check_run_structure``) instead of the full JSON schema,
which they check on request (``--validate``, ``--ocr-validate-baseline``). NaN, infinity, a wrong type where a reader
looks, duplicate documents, mismatched settings, negative and missing counts are refused either way."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.runfile import read as runfile
from pytest_ocrmetrics.runfile.read import (
    RunFileError,
    check_run_structure,
    load_run,
    validate_run,
)
from pytest_ocrmetrics.runfile.sharding import shard_index
from tests.helpers.plugin import make_dataset


def _run(n: int = 4) -> dict[str, Any]:
    docs = [make_doc(f"doc{i}.png", {"cer": 0.1 * i, "wer": 0.2}, confusions=[("S", "5", 1)],
                     outcome="passed" if i else "failed") for i in range(n)]
    docs[1]["tags"] = ["receipt"]
    docs[1]["details"] = {"facts": []}
    docs[2]["checks"] = [{"metric": "cer"}]
    run = make_run(docs)
    run.update(shard={"index": 1, "count": 1}, bootstrap={"seed": 3, "resamples": 100}, interrupted=False,
               skipped_entries=[{"dataset": "receipts", "source": "gt.json", "reason": "no text"}],
               collection_errors=[{"dataset": "other", "message": "bad"}], datasets={"receipts": {"root": "/d"}},
               unchecked_thresholds={"field_f1": 2}, replaced_characters=1)
    return run


def _set(*path: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(run: dict[str, Any]) -> None:
        target = run
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _delete(*path: Any) -> Callable[[dict[str, Any]], None]:
    def change(run: dict[str, Any]) -> None:
        target = run
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


# every entry a reader of a run file looks at, broken: refused by both checks, at the same place
BROKEN = {
    "documents/1/id": _set("documents", 1, "id", value=7),
    "documents/0 (no engine)": _delete("documents", 0, "engine"),
    "documents/2/dataset": _set("documents", 2, "dataset", value=None),
    "documents/1/outcome": _set("documents", 1, "outcome", value="great"),
    "documents/1/metrics/cer": _set("documents", 1, "metrics", "cer", value="0.1"),
    "documents/1/metrics (boolean)": _set("documents", 1, "metrics", "cer", value=True),
    "documents/1/metrics": _set("documents", 1, "metrics", value=[0.1]),
    "documents/1/counts/cer": _set("documents", 1, "counts", "cer", value=5),
    "documents/1/counts/cer/errors": _set("documents", 1, "counts", "cer", "errors", value="1"),
    "documents/1/elapsed_s": _set("documents", 1, "elapsed_s", value=-1),
    "documents/1/tags/0": _set("documents", 1, "tags", value=[1]),
    "documents/1/confusions": _set("documents", 1, "confusions", value="S5"),
    "documents/1/details": _set("documents", 1, "details", value=[]),
    "documents/2/checks/0": _set("documents", 2, "checks", value=[1]),
    "documents/1/message": _set("documents", 1, "message", value=3),
    "documents/1/cached": _set("documents", 1, "cached", value="no"),
    "documents": _set("documents", value={"doc0.png": {}}),
    "documents/3": _set("documents", 3, value=[]),
    "schema": _set("schema", value="pytest-ocrmetrics/2"),
    "(no created)": _delete("created"),
    "environment/engines": _set("environment", "engines", value=["tesseract"]),
    "environment/engines/tesseract": _set("environment", "engines", "tesseract", value="5.3"),
    "normalization/unit": _set("normalization", "unit", value="word"),
    "normalization (no name)": _delete("normalization", "name"),
    "summary/0/metrics/cer (no micro)": _delete("summary", 0, "metrics", "cer", "micro"),
    "summary/0/metrics/cer/mean": _set("summary", 0, "metrics", "cer", "mean", value="low"),
    "summary/0/documents": _set("summary", 0, "documents", value=2.5),
    "shard/index": _set("shard", "index", value="1"),
    "shard/count": _set("shard", "count", value=0),
    "bootstrap/seed": _set("bootstrap", "seed", value=1.5),
    "bootstrap (no resamples)": _delete("bootstrap", "resamples"),
    "interrupted": _set("interrupted", value=1),
    "skipped_entries/0": _set("skipped_entries", value=[1]),
    "collection_errors/0/message": _set("collection_errors", 0, "message", value=None),
    "datasets/receipts": _set("datasets", "receipts", value={"folder": "/d"}),
    "unchecked_thresholds/field_f1": _set("unchecked_thresholds", "field_f1", value=0),
    "replaced_characters": _set("replaced_characters", value=-2),
}


def _location(message: str) -> str:
    return message.split(": at ", 1)[1].split(": ", 1)[0]


def test_a_sound_run_passes_both_checks() -> None:
    run = _run()
    assert validate_run(copy.deepcopy(run), schema=True) == run
    assert check_run_structure(copy.deepcopy(run)) == run
    assert validate_run(copy.deepcopy(run), schema=False) == run


@pytest.mark.parametrize("name", list(BROKEN))
def test_what_a_reader_looks_at_is_refused_by_both_checks_at_the_same_place(name: str) -> None:
    run = _run()
    BROKEN[name](run)
    with pytest.raises(RunFileError) as full:
        validate_run(copy.deepcopy(run), "x.json", schema=True)
    with pytest.raises(RunFileError) as quick:
        check_run_structure(run, "x.json")
    assert str(quick.value).startswith("x.json is not a pytest-ocrmetrics run file: at ")
    assert str(quick.value).endswith("; write one with pytest --ocr-json=PATH") and "\n" not in str(quick.value)
    assert _location(str(quick.value)) == _location(str(full.value))


def test_the_first_bad_document_is_named_as_the_schema_names_it() -> None:
    run = _run(3)
    run["documents"] += [{}] * 1000
    with pytest.raises(RunFileError, match=r"at documents/3: 'id' is a required property; write one"):
        check_run_structure(run, "big.json")


def test_the_confusion_items_are_left_to_the_full_schema() -> None:
    """The one difference: the items of a document's confusion list (most of a big run file's elements) are no
    reader's input to merge or compare; --validate checks them."""
    run = _run()
    run["documents"][1]["confusions"] = [["S", "5", "one"]]
    check_run_structure(run)
    with pytest.raises(RunFileError, match=r"at documents/1/confusions/0/2: 'one' is not of type 'integer'"):
        validate_run(run, schema=True)


@pytest.mark.parametrize(("token", "shown"), [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"),
                                         ("1e999", "Infinity"), ("1E+0400", "Infinity"), ("9" * 400 + ".5", "Infinity")])
@pytest.mark.parametrize("where", ["documents/2/metrics/cer", "documents/2/counts/cer/errors",
                                   "summary/0/metrics/cer/p95"])
def test_nan_and_infinity_are_refused_without_the_schema(tmp_path: Path, token: str, shown: str, where: str) -> None:
    run = _run()
    sentinel = 0.123456789
    _set(*[int(p) if p.isdigit() else p for p in where.split("/")], value=sentinel)(run)
    text = json.dumps(run)
    assert text.count(repr(sentinel)) == 1
    path = tmp_path / "run.json"
    path.write_text(text.replace(repr(sentinel), token), encoding="utf-8")
    messages = []
    for schema in (False, True):
        with pytest.raises(RunFileError) as info:
            load_run(path, schema=schema)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"run file {str(path)!r} holds {shown} at {where}")


def test_a_sound_file_is_not_walked_for_nan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_run()), encoding="utf-8")
    monkeypatch.setattr(runfile, "_first_non_finite", _forbidden)
    monkeypatch.setattr(runfile, "_check_schema", _forbidden)
    assert load_run(path, schema=False)["documents"]


def _forbidden(*args: Any) -> Any:
    raise AssertionError("called")


def test_a_run_file_is_decoded_with_the_collector_paused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Decoding a run file makes millions of containers and no cycles (a baseline of 20,000 documents took 1.5x as
    long with the collector's passes); the collector is on again afterwards, after a file that is not JSON too."""
    import gc

    seen: list[bool] = []
    loads = json.loads

    def watched(text: str, **options: Any) -> Any:
        seen.append(gc.isenabled())
        return loads(text, **options)

    monkeypatch.setattr(json, "loads", watched)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_run()), encoding="utf-8")
    assert load_run(path, schema=False)["documents"]
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(RunFileError, match="is not valid JSON"):
        load_run(path)
    assert seen == [False, False] and gc.isenabled()


# -- the command line ---------------------------------------------------------------------------------------------


@pytest.fixture
def shard_files(tmp_path: Path) -> list[str]:
    docs = [make_doc(f"doc_{i:03}.png", {"cer": 0.01 * i}, size=50 + i, confusions=[("S", "5", 1)])
            for i in range(10)]
    paths = []
    for k in (1, 2):
        run = make_run([d for d in docs if shard_index(d["dataset"], d["id"], 2) == k], engines=["tesseract"])
        run["shard"] = {"index": k, "count": 2}
        path = tmp_path / f"shard-{k}.json"
        path.write_text(json.dumps(run), encoding="utf-8")
        paths.append(str(path))
    return paths


def _bad_confusion(path: str) -> None:
    run = json.loads(Path(path).read_text(encoding="utf-8"))
    run["documents"][0]["confusions"] = [["S", "5", "one"]]
    Path(path).write_text(json.dumps(run), encoding="utf-8")


def test_merge_checks_the_full_schema_only_with_validate(shard_files: list[str], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out = str(tmp_path / "run.json")
    _bad_confusion(shard_files[1])
    with monkeypatch.context() as patched:
        patched.setattr(runfile, "_check_schema", _forbidden)  # the default never runs the schema
        assert main(["merge", *shard_files, "-o", out]) == 0
    assert main(["merge", *shard_files, "-o", out, "--validate"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ocrmetrics merge: error: run file {shard_files[1]!r} is not a pytest-ocrmetrics run "
                          "file: at documents/0/confusions/0/2: ") and err.count("\n") == 1


def test_merge_still_refuses_a_wrong_type_nan_and_duplicates_without_validate(
        shard_files: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.json"
    assert main(["merge", shard_files[0], shard_files[0], "-o", str(out)]) == 2
    assert "are both shard 1/2" in capsys.readouterr().err
    second = json.loads(Path(shard_files[1]).read_text(encoding="utf-8"))
    second["documents"][0]["id"] = 12
    Path(shard_files[1]).write_text(json.dumps(second), encoding="utf-8")
    assert main(["merge", *shard_files, "-o", str(out)]) == 2
    assert "at documents/0/id: 12 is not of type 'string'" in capsys.readouterr().err
    second["documents"][0]["id"] = "x.png"
    second["documents"][0]["metrics"]["cer"] = float("nan")
    Path(shard_files[1]).write_text(json.dumps(second), encoding="utf-8")
    assert main(["merge", *shard_files, "-o", str(out)]) == 2
    assert "holds NaN at documents/0/metrics/cer" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("command", ["compare", "report"])
def test_compare_and_report_take_validate(shard_files: list[str], tmp_path: Path, command: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _bad_confusion(shard_files[1])
    args = [shard_files[0], shard_files[1]] if command == "compare" else [shard_files[1]]
    extra = ["--markdown", str(tmp_path / "r.md")]
    assert main([command, *args, *extra]) in (0, 1)  # compared / written: the structure is sound
    capsys.readouterr()
    assert main([command, *args, *extra, "--validate"]) == 2
    assert "at documents/0/confusions/0/2: 'one' is not of type 'integer'" in capsys.readouterr().err


# -- the plugin's baseline ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ini", [False, True], ids=["option", "ini"])
def test_the_plugin_checks_the_baselines_schema_on_request(pytester: pytest.Pytester, ini: bool) -> None:
    make_dataset(pytester.path)
    pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-json=base.json")
    base = json.loads((pytester.path / "base.json").read_text(encoding="utf-8"))
    base["documents"][0]["confusions"] = [["S", "5", "one"]]
    (pytester.path / "base.json").write_text(json.dumps(base), encoding="utf-8")
    args = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-baseline=base.json"]
    result = pytester.runpytest(*args)
    assert result.ret in (0, 1) and "UsageError" not in result.stdout.str()  # read: the structure is sound
    if ini:
        pytester.makeini("[pytest]\nocr_validate_baseline = true\n")
        result = pytester.runpytest(*args)
    else:
        result = pytester.runpytest(*args, "--ocr-validate-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([("*--ocr-baseline: baseline run file *base.json' is not a pytest-ocrmetrics run "
                                  "file: at documents/0/confusions/0/2: 'one' is not of type 'integer'*")])
    bad = copy.deepcopy(base)
    bad["documents"][0]["confusions"] = []
    bad["documents"][0]["metrics"]["cer"] = "0.1"  # a wrong type where the comparison reads: refused by default
    (pytester.path / "base.json").write_text(json.dumps(bad), encoding="utf-8")
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*at documents/0/metrics/cer: \"0.1\" is not of type 'number'*"])
