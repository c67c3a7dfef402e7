import matplotlib.pyplot as plt

from fetchlab.notebook import NotebookRun, fmt


def test_interpretation_from_the_csvs(run_dir):
    nb = NotebookRun(run_dir)
    lines = nb.interpretation("")
    assert lines[0].startswith("- Pareto frontier (mean age against J/day): ")
    assert any(l.startswith("- `ios-minimum` against `periodic:1h`: ") for l in lines)
    assert fmt(1234.5) == "1235" and fmt(0.012345) == "0.0123" and fmt(None) == "–"


def test_hour_of_day_uses_each_users_local_time(run_dir):
    nb = NotebookRun(run_dir)
    nb.plot_hour_of_day("")
    ax = plt.gca()
    assert ax.get_xlabel().startswith("hour of day (each user's local time")
    plt.close("all")
