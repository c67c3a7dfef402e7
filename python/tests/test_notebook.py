import matplotlib.pyplot as plt

from fetchlab.notebook import NotebookRun, fmt


def test_interpretation_from_the_csvs(run_dir):
    nb = NotebookRun(run_dir)
    lines = nb.interpretation("")
    assert lines[0].startswith("- Pareto frontier (mean age against J/day): ")
    assert any(l.startswith("- `ios-minimum` against `periodic:1h`: ") for l in lines)
    assert fmt(1234.5) == "1235" and fmt(0.012345) == "0.0123" and fmt(None) == "–"


def test_few_users_get_compares_small_sample_warning(run_copy):
    # The sample run has 3 users: the statements end with the warning.
    last = NotebookRun(run_copy).interpretation("")[-1]
    assert last.startswith("- Only 3 users in this dataset (fewer than 10): its bootstrap CIs"), last
    # With 10 users per row (the threshold), no warning.
    p = run_copy / "policies.csv"
    text = p.read_text(encoding="utf-8").splitlines()
    rows = [text[0]] + [",".join(f if i != 3 else "10" for i, f in enumerate(l.split(","))) for l in text[1:]]
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert not any(l.startswith("- Only ") for l in NotebookRun(run_copy).interpretation(""))


def test_hour_of_day_uses_each_users_local_time(run_dir):
    nb = NotebookRun(run_dir)
    nb.plot_hour_of_day("")
    ax = plt.gca()
    assert ax.get_xlabel().startswith("hour of day (each user's local time")
    plt.close("all")
