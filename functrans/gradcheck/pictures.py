"""Pictures of what gradcheck measured: heat maps of the error relative to the tolerance
(full mode), bars of the directional errors (fast mode), and the numeric and analytic
Jacobians side by side.

The numbers behind the pictures (:func:`error_ratios`, :func:`axis_labels`) need only NumPy;
drawing needs matplotlib, an optional dependency, imported when a picture is drawn.
"""
from __future__ import annotations

import math

import numpy as np

from functrans.gradcheck.realify import coordinate_label

__all__ = ["error_ratios", "axis_labels", "heatmap_blocks", "draw_heatmap",
           "draw_jacobians"]

#: ratios below this are drawn in the calmest colour (white); a float64 check that passes
#: typically sits around 1e-6 of its tolerance.
CALM = 1e-6
#: at most this many tick labels per axis; the others are left out evenly.
MAX_TICKS = 16


def error_ratios(check) -> np.ndarray:
    """``|numeric - analytic| / (atol + rtol·|numeric|)`` for every entry of a full-mode
    Jacobian block: above 1 the entry exceeds the tolerance.

    Equal values (equal infinities, two NaNs) count as 0, a NaN on one side only as
    infinity.  The allowance for rounding noise that gradcheck adds to the tolerance of
    large entries is not included, so the picture is, if anything, slightly stricter.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> check = ft.gradcheck(fnp.sin, modes="rev")(np.array([0.5, 1.0])).checks[0]
    >>> ratios = error_ratios(check)
    >>> ratios.shape, bool(ratios.max() < 1e-3)
    ((2, 2), True)
    """
    if check.kind != "jacobian" or check.numeric is None:
        raise ValueError(f"error_ratios: needs a full-mode Jacobian check with its matrices, "
                         f"got a {check.kind!r} check")
    numeric = np.asarray(check.numeric, dtype=np.float64)
    analytic = np.asarray(check.analytic, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(analytic - numeric)
        tol = check.atol + check.rtol * np.abs(numeric)
    same = (numeric == analytic) | (np.isnan(numeric) & np.isnan(analytic))
    diff = np.where(same, 0.0, np.where(np.isnan(diff), np.inf, diff))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(diff == 0, 0.0, np.where(tol > 0, diff / tol, np.inf))


def axis_labels(check, layouts: dict) -> tuple[list[str], list[str]]:
    """Row labels (output coordinates) and column labels (input coordinates) of a
    Jacobian block: multi-indices, with ``.real`` / ``.imag`` for complex arrays, as in
    the report.  ``layouts`` maps ``(function, array name)`` to ``(shape, is_complex)``
    (``GradcheckResult.layouts``); arrays it does not know get flat indices.

    >>> layouts = {("f", "x"): ((2, 2), False), ("f", "out"): ((), True)}
    >>> class Block:
    ...     function, output, input = "f", "out", "x"
    ...     numeric = np.zeros((2, 4))
    ...
    >>> axis_labels(Block, layouts)
    (['out.real', 'out.imag'], ['x[0, 0]', 'x[0, 1]', 'x[1, 0]', 'x[1, 1]'])
    """
    rows, cols = np.shape(check.numeric)

    def labels(name: str, count: int) -> list[str]:
        layout = layouts.get((check.function, name))
        if layout is None:
            return [f"{name}[{j}]" for j in range(count)]
        shape, complex_ = layout
        return [name + coordinate_label(shape, complex_, j) for j in range(count)]

    return labels(check.output, rows), labels(check.input, cols)


def heatmap_blocks(result) -> list[tuple]:
    """``(check, ratios, row labels, column labels)`` for every full-mode Jacobian block of
    ``result`` (a GradcheckResult): the data the heat map draws."""
    return [(c, error_ratios(c), *axis_labels(c, result.layouts)) for c in result.checks
            if c.kind == "jacobian" and c.numeric is not None]


def _matplotlib(what: str):
    try:
        from matplotlib import colors
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(f"{what} needs matplotlib (an optional dependency): "
                          "pip install matplotlib") from None
    return Figure, FigureCanvasAgg, colors


def _calm_colormap(colors):
    """Light to dark blue up to a ratio of 1, white below :data:`CALM`, red above 1."""
    return colors.LinearSegmentedColormap.from_list(
        "calm", ["#f7fbff", "#c6dbef", "#6baed6", "#08519c"]).with_extremes(
        under="#ffffff", over="#d7191c", bad="#d7191c")


def _ticks(ax, rows: list[str], cols: list[str]) -> None:
    for labels, set_ticks, set_labels, rotation in (
            (cols, ax.set_xticks, ax.set_xticklabels, 90), (rows, ax.set_yticks,
                                                            ax.set_yticklabels, 0)):
        step = max(1, math.ceil(len(labels) / MAX_TICKS))
        positions = list(range(0, len(labels), step))
        set_ticks(positions)
        set_labels([labels[p] for p in positions], fontsize=6, rotation=rotation)


def _title(c) -> str:
    status = "passed" if c.passed else f"FAILED: {c.num_failed} of {c.num_compared}"
    return f"{c.mode} {c.function}: d {c.output} / d {c.input}\n({status})"


def _save(fig, canvas_type, path, format) -> None:
    canvas_type(fig)
    fig.savefig(path, format=format)


def draw_heatmap(result, path, format: str | None = None) -> None:
    """Draw ``result``'s checks to ``path``: each full-mode Jacobian block as a heat map
    of :func:`error_ratios` (a calm blue scale up to 1, red above), each fast-mode check as
    a bar of its error-to-tolerance ratio.  ``format`` defaults to the file's extension."""
    Figure, canvas_type, colors = _matplotlib("save_heatmap")
    blocks = heatmap_blocks(result)
    directional = [c for c in result.checks if c.kind == "directional"]
    if not blocks and not directional:
        raise ValueError("save_heatmap: this result holds no derivative comparisons to draw "
                         "(neither full-mode Jacobian blocks nor fast-mode checks)")
    panels = len(blocks) + (1 if directional else 0)
    cols = min(3, panels)
    rows = -(-panels // cols)
    fig = Figure(figsize=(4.4 * cols, 4.0 * rows), layout="constrained")
    cmap = _calm_colormap(colors)
    norm = colors.LogNorm(vmin=CALM, vmax=1.0)
    for k, (c, ratios, row_labels, col_labels) in enumerate(blocks):
        ax = fig.add_subplot(rows, cols, k + 1)
        # zeros are exact agreement: draw them in the "under" colour, not as masked cells
        shown = np.where(ratios == 0, CALM / 10, np.where(np.isfinite(ratios), ratios, 1e300))
        image = ax.imshow(shown, aspect="auto", interpolation="nearest", cmap=cmap, norm=norm)
        cbar = fig.colorbar(image, ax=ax, extend="both")
        cbar.set_label("|numeric - analytic| / tolerance", fontsize=7)
        cbar.ax.tick_params(labelsize=7)
        _ticks(ax, row_labels, col_labels)
        ax.set_title(_title(c), fontsize=8, color="black" if c.passed else "#d7191c")
    if directional:
        ax = fig.add_subplot(rows, cols, panels)
        ratios = [max(c.max_ratio, CALM / 10) if math.isfinite(c.max_ratio) else 1e300
                  for c in directional]
        names = [f"{c.mode} {c.function}" for c in directional]
        ax.barh(range(len(ratios)), ratios, color=["#6baed6" if c.passed else "#d7191c"
                                                   for c in directional])
        ax.axvline(1.0, color="black", linewidth=1, linestyle="--")
        ax.set_xscale("log")
        ax.set_xlim(CALM / 10, max(10.0, min(max(ratios) * 2, 1e12)))
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("|vᵀJu numeric - analytic| / tolerance (fails right of the line)",
                      fontsize=7)
        ax.set_title("fast mode: directional derivatives", fontsize=8)
    fig.suptitle(f"gradcheck of {result.function}: error relative to the tolerance "
                 f"(seed {result.seed})", fontsize=10)
    _save(fig, canvas_type, path, format)


def draw_jacobians(result, path, max_entries: int = 400, format: str | None = None) -> None:
    """Draw, for each full-mode Jacobian block with at most ``max_entries`` entries, the
    numeric Jacobian, the analytic one (same colour scale) and their error ratio side by
    side, one block per row."""
    Figure, canvas_type, colors = _matplotlib("save_jacobians")
    blocks = [b for b in heatmap_blocks(result) if b[0].numeric.size <= max_entries]
    if not blocks:
        raise ValueError(f"save_jacobians: no full-mode Jacobian block has at most "
                         f"max_entries={max_entries} entries; run the check in full mode "
                         f"(fast_mode=False) on a smaller input, or raise max_entries")
    fig = Figure(figsize=(12.0, 3.6 * len(blocks)), layout="constrained")
    norm_ratio = colors.LogNorm(vmin=CALM, vmax=1.0)
    cmap_ratio = _calm_colormap(colors)
    for k, (c, ratios, row_labels, col_labels) in enumerate(blocks):
        finite = np.concatenate([c.numeric[np.isfinite(c.numeric)],
                                 c.analytic[np.isfinite(c.analytic)]])
        bound = float(np.abs(finite).max(initial=0.0)) or 1.0
        for j, (matrix, name) in enumerate(((c.numeric, "numeric"),
                                            (c.analytic, f"analytic ({c.mode})"))):
            ax = fig.add_subplot(len(blocks), 3, 3 * k + j + 1)
            image = ax.imshow(matrix, aspect="auto", interpolation="nearest", cmap="RdBu_r",
                              vmin=-bound, vmax=bound)
            fig.colorbar(image, ax=ax).ax.tick_params(labelsize=7)
            _ticks(ax, row_labels, col_labels)
            ax.set_title(f"{name}: d {c.output} / d {c.input}", fontsize=8)
        ax = fig.add_subplot(len(blocks), 3, 3 * k + 3)
        shown = np.where(ratios == 0, CALM / 10, np.where(np.isfinite(ratios), ratios, 1e300))
        image = ax.imshow(shown, aspect="auto", interpolation="nearest", cmap=cmap_ratio,
                          norm=norm_ratio)
        fig.colorbar(image, ax=ax, extend="both").ax.tick_params(labelsize=7)
        _ticks(ax, row_labels, col_labels)
        ax.set_title(f"error / tolerance ({'passed' if c.passed else 'FAILED'})", fontsize=8,
                     color="black" if c.passed else "#d7191c")
    fig.suptitle(f"gradcheck of {result.function}: numeric and analytic Jacobians "
                 f"(seed {result.seed})", fontsize=10)
    _save(fig, canvas_type, path, format)
