"""The fitted models ship as data files, loaded and validated in one place
(csl_ai.search.fitted): they round-trip, a refit replaces only its player counts, and a
broken file gets a one-line error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from csl_ai.search import SearchConfig
from csl_ai.search.fitted import FILES, FittedModelError, FittedModels


def test_the_default_config_reads_the_shipped_files() -> None:
    shipped = FittedModels.shipped()
    assert SearchConfig().fitted == shipped
    assert len(shipped.split_weights) == 4 and len(shipped.value_weights[2]) == 3
    assert shipped.win_calibration is not None
    assert all(shipped.made_by[model].startswith(("python benchmarks/fit_", "csl train --model value")) for model in FILES)


def test_saved_models_load_back_equal(tmp_path: Path) -> None:
    shipped = FittedModels.shipped()
    shipped.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES.values())
    assert FittedModels.load(tmp_path) == shipped
    bare = shipped.replace(win_calibration=None)
    bare.save(tmp_path)
    assert FittedModels.load(tmp_path).win_calibration is None


def test_a_refit_replaces_only_its_player_counts() -> None:
    shipped = FittedModels.shipped()
    rows = [[9.0, 9.0, 9.0, 9.0]] * 4
    refit = shipped.refit("split", "a test", [3], split_weights=rows)
    assert refit.split_weights[1] == (9.0, 9.0, 9.0, 9.0)
    assert refit.split_weights[0] == shipped.split_weights[0] and refit.split_weights[2:] == shipped.split_weights[2:]
    assert refit.made_by["split"] == "a test" and refit.made_by["value"] == shipped.made_by["value"]
    identity = ((0.0, 1.0, 0.0, 0.0, 0.0, 0.0),) * 4
    calibrated = shipped.refit("win_calibration", "b", [2, 5], win_calibration=identity)
    assert calibrated.win_calibration.coefficients[0] == identity[0]
    assert calibrated.win_calibration.coefficients[1] == shipped.win_calibration.coefficients[1]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("split_model.json", "{", "not JSON"),
        ("split_model.json", '{"format": "csl-card-policy", "version": 1}', "not a csl-fitted-model"),
        ("value_model.json", None, "holds model 'split'"),
        ("split_model.json", "drop-5", "one entry per player count"),
        ("split_model.json", "nan", "finite numbers"),
        ("value_model.json", "features", "features differ"),
    ],
)
def test_a_broken_file_gets_a_one_line_error(tmp_path: Path, name: str, text: str | None, message: str) -> None:
    FittedModels.shipped().save(tmp_path)
    path = tmp_path / name
    data = json.loads(path.read_text())
    if text is None:
        path.write_text((tmp_path / "split_model.json").read_text())
    elif text == "drop-5":
        del data["weights_by_players"]["5"]
        path.write_text(json.dumps(data))
    elif text == "nan":
        data["weights_by_players"]["2"][0] = "x"
        path.write_text(json.dumps(data))
    elif text == "features":
        data["features"] = data["features"][:-1]
        path.write_text(json.dumps(data))
    else:
        path.write_text(text)
    with pytest.raises(FittedModelError, match=message) as caught:
        FittedModels.load(tmp_path)
    assert "\n" not in str(caught.value)


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FittedModelError, match="cannot read"):
        FittedModels.load(tmp_path / "nowhere")
