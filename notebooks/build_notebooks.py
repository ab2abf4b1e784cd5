"""Write the three example notebooks from the cell texts below (outputs are not stored).

    python notebooks/build_notebooks.py

Keeping the cells in one Python file makes the notebooks reviewable as code; the test
suite executes each notebook from a clean kernel (tests/test_notebooks.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

#: Run from the repository root, wherever the notebook was opened.
CHDIR = """import os
import pathlib

root = pathlib.Path.cwd()
while not (root / "{marker}").is_dir():
    root = root.parent
os.chdir(root)"""

CALIBRATING = [
    (
        "md",
        """# 01 — Calibrating an item pool

Fit a 3PL model to a response matrix (40 simulated models x 300 questions shipped in
`examples/`), check the estimates against the parameters the data were simulated from,
and look at where the pool measures well (its test information curve).""",
    ),
    (
        "code",
        """import matplotlib.pyplot as plt
import numpy as np

from irt.em import EMCalibrator
from irt.models import test_information
from itempool.formats.params import read_params
from itempool.formats.responses import read_responses""",
    ),
    ("code", CHDIR.format(marker="examples")),
    (
        "code",
        """responses = read_responses("examples/responses.jsonl")
fit = EMCalibrator("3pl").fit(responses)
print(f"{responses.n_subjects} subjects x {responses.n_items} items")
print(f"converged {fit.converged_} after {fit.n_iter_} cycles, loglik {fit.loglik_:.1f}")""",
    ),
    (
        "code",
        """true = read_params("examples/true_params.csv")
est = fit.params_
order = [est.item_ids.index(i) for i in true.item_ids]
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, name in zip(axes, ("a", "b"), strict=True):
    t, e = getattr(true, name), getattr(est, name)[order]
    ax.scatter(t, e, s=8)
    lims = [min(t.min(), e.min()), max(t.max(), e.max())]
    ax.plot(lims, lims, color="grey", lw=1)
    ax.set(xlabel=f"true {name}", ylabel=f"estimated {name}",
           title=f"{name}: r = {np.corrcoef(t, e)[0, 1]:.3f}")
fig.tight_layout()""",
    ),
    (
        "code",
        """grid = np.linspace(-4, 4, 161)
info = test_information(grid, est)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(grid, info)
ax.set(xlabel="θ", ylabel="test information", title="Where this pool measures best")
print(f"most information at θ = {grid[info.argmax()]:.2f}; "
      f"SE there with every item: {1 / np.sqrt(info.max()):.3f}")""",
    ),
]

ASSESSING = [
    (
        "md",
        """# 02 — Assessing a model

Assess a model with the library's API on the calibrated English demo pool, with a
simulated model of known ability standing in for an LLM, and read the end of the test:
θ with its interval, the predicted accuracy on the whole pool, and the rank among the
pool's reference subjects. `cat assess` does the same from the command line (with a live
model: `cat.EndpointExaminee("qwen2.5:7b", base_url=...)`), and `result.model_dump()` is
its RESULT.json.""",
    ),
    (
        "code",
        """import matplotlib.pyplot as plt
import numpy as np

import cat""",
    ),
    ("code", CHDIR.format(marker="item_pools")),
    (
        "code",
        """pool = cat.load_pool("item_pools/demo-en")
model = cat.SimulatedExaminee(theta=0.8, seed=1)
result = cat.assess(pool, model, length=100)
acc = result.predicted_accuracy
print(f"θ = {result.theta:+.2f} ± {result.se:.2f} (true +0.80)")
print(f"predicted accuracy {acc.value:.3f} [{acc.low:.3f}, {acc.high:.3f}], "
      f"true {result.truth.accuracy:.3f}")
print(f"rank {result.rank.position} of {result.rank.of}")""",
    ),
    (
        "code",
        """theta = np.array([item.theta_after for item in result.items])
se = np.array([item.se_after for item in result.items])
n = np.arange(1, len(theta) + 1)
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.fill_between(n, theta - 1.645 * se, theta + 1.645 * se, alpha=0.25, label="90% interval")
ax.plot(n, theta, label="θ estimate")
ax.axhline(0.8, color="black", lw=1, ls="--", label="true θ")
ax.set(xlabel="items answered", ylabel="θ", ylim=(-3, 3))
ax.legend(loc="lower right")""",
    ),
    (
        "code",
        """per = result.scenarios
labels = list(per)
value = np.array([per[k].value for k in labels])
low = np.array([per[k].low for k in labels])
high = np.array([per[k].high for k in labels])
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.errorbar(labels, value, yerr=[value - low, high - value], fmt="o", capsize=4)
ax.set(ylabel="predicted accuracy", title="Per scenario, with 90% intervals", ylim=(0, 1))
ax.tick_params(axis="x", rotation=30)""",
    ),
]

POLICIES = [
    (
        "md",
        """# 03 — Comparing selection policies

How fast does each selection policy pin ability down? Vectorised simulations on a
2,000-item 3PL pool (true parameters), then — when the shared MMLU-Pro data are present
beside the checkout — a replay on real LLM answers to every third MMLU-Pro question, to
keep the notebook quick (`cat validate` does the same on the whole pool).""",
    ),
    (
        "code",
        """import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import kendalltau

from cat.engine.estimators import MLEstimator
from cat.engine.registry import make_policy
from cat.engine.selection import PoolInfo
from cat.engine.simulation import CATDesign, simulate_cat
from cat.engine.stopping import StoppingRule
from irt.simulate import random_params""",
    ),
    ("code", CHDIR.format(marker="item_pools")),
    (
        "code",
        """rng = np.random.default_rng(0)
params = random_params(1000, rng)
pool = PoolInfo.build(params)
theta = rng.normal(size=200)
lengths = [10, 20, 40, 80]
curves = {}
for name in ("mfi", "kl", "astrat", "random"):
    rows = []
    for length in lengths:
        design = CATDesign(make_policy(name, length), MLEstimator(), StoppingRule(length))
        res = simulate_cat(params, theta, design, np.random.default_rng(1), pool)
        rows.append((np.sqrt(np.mean((res.theta_hat - theta) ** 2)),
                     kendalltau(theta, res.theta_hat)[0]))
    curves[name] = np.array(rows)
    pairs = zip(lengths, rows, strict=True)
    print(name, " ".join(f"{L}: RMSE {r:.3f} τ {t:.3f}" for L, (r, t) in pairs))""",
    ),
    (
        "code",
        """fig, ax = plt.subplots(figsize=(5, 3.5))
for name, rows in curves.items():
    ax.plot(lengths, rows[:, 0], marker="o", label=name)
ax.set(xlabel="test length", ylabel="RMSE(θ)", title="simulation: precision")
ax.legend()""",
    ),
    (
        "code",
        """fig, ax = plt.subplots(figsize=(5, 3.5))
for name, rows in curves.items():
    ax.plot(lengths, rows[:, 1], marker="o", label=name)
ax.set(xlabel="test length", ylabel="Kendall τ", title="simulation: ranking")
ax.legend()""",
    ),
    (
        "code",
        """from cat.prediction.validation import validate
from itempool.formats.responses import read_responses

shared = root.parent / "shared" / "data" / "mmlu-pro" / "responses.csv.gz"
if shared.exists():
    data = read_responses(shared)
    data = data.subset(items=np.arange(0, data.n_items, 4))
    results = [p.metrics() for p in validate(data, "3pl", ["mfi", "random"], [30, 100],
                                              np.random.default_rng(0), holdout=0.3)]
    for r in sorted(results, key=lambda r: (r["length"], r["policy"], r["predictor"])):
        print(f"{r['policy']:<11}{r['predictor']:<9}{r['length']:>5}  τ {r['kendall_tau']:.3f}"
              f"  MAE {r['mae']:.4f}  coverage {r['coverage']:.2f}")
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name in ("mfi", "random-raw"):
        pts = [(r["length"], r["mae"]) for r in results if r["policy"] == name
               and r["predictor"] in ("plug-in", "raw")]
        xs, ys = zip(*sorted(pts), strict=True)
        ax.plot(xs, ys, marker="o", label=name)
    ax.set(xlabel="test length", ylabel="MAE of predicted accuracy", title="MMLU-Pro replay")
    ax.legend()
else:
    print("../shared/data/mmlu-pro is not here: the real-data replay is skipped")""",
    ),
]


def build(cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell(text) if kind == "md" else new_code_cell(text) for kind, text in cells
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def main() -> None:
    for name, cells in (
        ("01_calibrating_a_pool", CALIBRATING),
        ("02_assessing_a_model", ASSESSING),
        ("03_comparing_selection_policies", POLICIES),
    ):
        nbformat.write(build(cells), HERE / f"{name}.ipynb")
    # The same formatting as the rest of the code base (ruff checks notebooks too).
    subprocess.run(["ruff", "format", "--quiet", str(HERE)], check=False)


if __name__ == "__main__":
    main()
