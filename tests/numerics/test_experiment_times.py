"""``scripts/experiment_times.py``: one draw of an experiment timed against its record."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_script_times_a_claims_sizes_against_its_record(capsys):
    spec = importlib.util.spec_from_file_location(
        "experiment_times", ROOT / "scripts" / "experiment_times.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["softmax.kappa", "--seconds", "0.01"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("softmax.kappa")
    # the quick profile's smallest, middle and largest size, each with its record
    assert line.count("record") == 3 and "T=64:" in line and "T=1024:" in line
