import re
from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from matplotlib.lines import Line2D

import fetchlab
from fetchlab.cli import main
from fetchlab.figures import duration_label, pareto_front
from fetchlab.style import colour_difference


def pdf_size_in(path):
    """Width and height of the first page, inches (MediaBox in points)."""
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", path.read_bytes())
    return float(box.group(1)) / 72, float(box.group(2)) / 72


def legend_labels(fig):
    return [t.get_text() for t in fig.legends[0].get_texts()]


@pytest.mark.parametrize("width,inches", [("single", 3.5), ("double", 7.2)])
def test_frontier_pdf_has_the_column_width(run_dir, tmp_path, width, inches):
    path = fetchlab.save(fetchlab.frontier(run_dir, width=width), tmp_path / "f.pdf")
    data = path.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    w, h = pdf_size_in(path)
    assert w == pytest.approx(inches) and 1.5 < h < inches
    assert b"CreationDate" not in data


def test_svg_is_valid_and_sized(run_dir, tmp_path):
    path = fetchlab.save(fetchlab.age_cdf(run_dir), tmp_path / "cdf.svg")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg") and root.get("width") == "252pt"


def test_text_is_readable_at_print_size(run_dir):
    fig = fetchlab.frontier(run_dir)
    ax = fig.axes[0]
    assert ax.xaxis.label.get_fontsize() == 8 and ax.yaxis.label.get_fontsize() == 8
    assert all(t.get_fontsize() >= 7 for t in ax.get_xticklabels() + fig.legends[0].get_texts())


def test_subset_of_policies_in_the_given_order(run_dir):
    fig = fetchlab.frontier(run_dir, policies=["oracle", "never", "ios-minimum"])
    assert legend_labels(fig) == ["oracle", "never", "ios-minimum", "Pareto frontier"]
    fig = fetchlab.frontier(run_dir, policies=["periodic:1h", "periodic:4h"], frontier_line=False)
    assert legend_labels(fig) == ["periodic (2)"]
    with pytest.raises(ValueError, match="no policy 'periodic:2h'"):
        fetchlab.frontier(run_dir, policies=["never", "periodic:2h"])


def test_each_family_has_its_own_colour_and_marker(run_dir):
    handles = fetchlab.frontier(run_dir, frontier_line=False).legends[0].legend_handles
    pairs = [(h.get_color(), h.get_marker()) for h in handles]
    assert len(set(c for c, _ in pairs)) == len(pairs) and len(set(m for _, m in pairs)) == len(pairs)
    assert fetchlab.policy_style("periodic:4h", ["periodic:1h", "periodic:4h"])["linestyle"] != "-"


def test_frontier_staircase_is_pareto_csvs(run_dir):
    run = fetchlab.load_run(run_dir)
    p = run.policies
    front = set(p["policy"].iloc[pareto_front(p["energy_j_per_day"], p["mean_age_s"])])
    pa = run.pareto
    want = pa[(pa.staleness_metric == "mean_age_s") & (pa.cost_metric == "energy_j_per_day") & pa.on_frontier]
    assert front == set(want["policy"]) and front


def test_calibration_draws_one_line_per_predictor_and_subset(run_dir):
    cal = fetchlab.load_run(run_dir).calibration
    fig = fetchlab.calibration(run_dir)
    lines = [l for l in fig.axes[0].get_lines() if l.get_label().count(", ") == 1]
    groups = cal.groupby(["predictor", "subset"], sort=False)
    assert len(lines) == groups.ngroups == 10
    for line in lines:
        p, s = line.get_label().split(", ")
        s = {"all windows": "all", "outside recording gaps": "outside_gaps"}[s]
        g = cal[(cal.predictor == p) & (cal.subset == s)].sort_values("decile").dropna(subset=["mean_predicted"])
        assert np.array_equal(line.get_xdata(), g["mean_predicted"].to_numpy())
        assert np.array_equal(line.get_ydata(), g["observed"].to_numpy())
    styles = {l.get_label().split(", ")[1]: str(l.get_linestyle()) for l in lines}
    assert styles["all windows"] != styles["outside recording gaps"]
    only = fetchlab.calibration(cal, predictors=["habit"])
    assert len([l for l in only.axes[0].get_lines() if l.get_label().startswith("habit, ")]) == 2


def test_fresh_cdf_and_timeline(run_dir, tmp_path):
    fig = fetchlab.fresh_vs_energy(run_dir, policies=["never", "periodic:1h"])
    p = fetchlab.load_run(run_dir).policies.set_index("policy")
    low = 100 * p.loc[["never", "periodic:1h"], "fresh_ratio_lo"].min()
    bottom, top = fig.axes[0].get_ylim()
    assert top == 100 and bottom <= low and (bottom == 0 or low - bottom < 15)
    cdf = fetchlab.age_cdf(run_dir, policies=["never", "oracle"])
    never = cdf.axes[0].get_lines()[0]
    opens = fetchlab.load_run(run_dir).opens
    ages = np.sort(opens.loc[opens.policy == "never", "age_s"].to_numpy())
    k = len(never.get_xdata()) - 1
    assert never.get_ydata()[k] == pytest.approx(100 * np.searchsorted(ages, never.get_xdata()[k], "right") / len(ages))
    tl = fetchlab.timeline(run_dir, user="u00001")
    assert "local time" in tl.axes[0].get_xlabel()
    assert [t.get_text() for t in tl.axes[0].get_yticklabels()][-1] == "opens"
    assert fetchlab.save(tl, tmp_path / "tl.pdf").stat().st_size > 1000


def test_cli_draws_the_frontier(run_dir, tmp_path, capsys):
    assert main([str(run_dir), "--out", str(tmp_path / "figs")]) == 0
    out = tmp_path / "figs" / "frontier.pdf"
    assert capsys.readouterr().out.strip() == str(out)
    assert pdf_size_in(out)[0] == pytest.approx(3.5)
    assert main([str(run_dir), "--out", str(tmp_path / "all"), "--figure", "all", "--format", "svg"]) == 0
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == [
        "age-cdf.svg", "calibration.svg", "fresh.svg", "frontier.svg", "timeline.svg"]
    assert main([str(tmp_path / "none"), "--out", str(tmp_path / "x")]) == 1
    assert "not a directory" in capsys.readouterr().err


DEFAULT_BENCHMARK = Path(__file__).resolve().parents[2] / "notebooks-export" / "default-data"


@pytest.mark.parametrize("dataset", ["ubiqlog", "synthetic"])
def test_default_frontier_of_the_benchmark_is_readable(dataset):
    if not DEFAULT_BENCHMARK.exists():
        pytest.skip("not in a FetchLab checkout")
    fig = fetchlab.frontier(DEFAULT_BENCHMARK, dataset)
    handles = fig.legends[0].legend_handles
    series = [h for h in handles if h.get_label() != "Pareto frontier"]
    assert 3 <= len(series) <= 8
    colours = [h.get_color() for h in series if not h.get_label().startswith(("never", "oracle"))]
    assert min(colour_difference(a, b) for i, a in enumerate(colours) for b in colours[i + 1:]) >= 20
    ax = fig.axes[0]
    assert "J per app-day" in ax.get_xlabel()
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert any(t.endswith(" min") for t in ticks) and any(t.endswith(" h") for t in ticks), ticks
    # the legend, below the axes, takes at most a quarter of a single-column figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig).draw()
    box = fig.legends[0].get_window_extent()
    assert box.height / fig.bbox.height <= 0.25
    assert box.y1 <= ax.get_window_extent().y0
    # and is not clipped at the figure's sides (long family names take fewer columns)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width, (box.x0, box.x1, fig.bbox.width)


def test_duration_labels():
    assert [duration_label(s) for s in [0, 1, 10, 60, 600, 3600, 36000, 86400, 864000]] == [
        "0", "1 s", "10 s", "1 min", "10 min", "1 h", "10 h", "1 day", "10 days"]


def test_figure_all_names_what_it_cannot_draw(run_copy, tmp_path, capsys):
    (run_copy / "opens.csv").unlink()
    for f in ("fit/calibration.csv", "calibration.csv"):
        if (run_copy / f).exists():
            (run_copy / f).unlink()
    assert main([str(run_copy), "--out", str(tmp_path / "all"), "--figure", "all"]) == 0
    err = capsys.readouterr().err
    for f in ("age-cdf", "timeline", "calibration"):
        assert f"{f} not drawn: " in err, err
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["fresh.pdf", "frontier.pdf"]
