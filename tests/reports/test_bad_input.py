"""Bad input of the report commands: exit 2 and one line naming the parameter, never a
traceback (an --out that is a file or cannot be written, a results file with a wrong type
in its claims or checks)."""
from __future__ import annotations

import argparse
import json

import pytest

from gapverify.verification.claims.inputs import UsageError
from gapverify.cli import main as gapverify_main
from gapverify.cli.reports import COMMANDS, out_folder, register


def _main(argv):
    parser = argparse.ArgumentParser(prog="gapverify")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return COMMANDS[args.command](args)


def test_out_must_be_a_writable_folder(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for bad in (afile, afile / "sub"):
        with pytest.raises(UsageError, match="parameter '--out' must be a folder"):
            out_folder(bad)
    assert out_folder(tmp_path / "new" / "dir").is_dir()


@pytest.mark.parametrize("command", ["tables", "report", "paper-figure", "normalization-figure"])
def test_an_out_file_exits_2_with_one_line(command, tmp_path, capsys, tiny):
    json_path, _, _ = tiny
    afile = tmp_path / "afile"
    afile.write_text("x")
    argv = [command, "--out", str(afile)]
    if command in ("tables", "report"):
        argv += ["--from", str(json_path)]
    assert gapverify_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'--out'" in err[0] and "is a file" in err[0], err


@pytest.mark.parametrize("damage, message", [
    (lambda r: r["claims"][0].__setitem__("checks", "oops"), "claims[0].checks must be a list"),
    (lambda r: r["claims"].__setitem__(0, 5), "claims[0] must be an object"),
    (lambda r: r["claims"][0]["checks"].__setitem__(0, []), "claims[0].checks[0] must be an object"),
    (lambda r: r["claims"][0]["checks"][0]["rows"][0].__setitem__("mean", "x"), "rows must be"),
])
def test_a_wrong_type_in_the_results_exits_2(damage, message, tiny, tmp_path, capsys):
    json_path, _, _ = tiny
    run = json.loads(json_path.read_text())
    damage(run)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(run))
    assert _main(["report", "--from", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'--from'" in err[0] and message in err[0], err
