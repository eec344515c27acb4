"""Pictures and progress: gradcheck's heat maps (their numbers without matplotlib, the
drawings with it), its progress bar, and jaxprs as Graphviz DOT graphs."""
from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import functrans as ft
import functrans.graphviz as graphviz
import functrans.numpy as fnp
from functrans.gradcheck import transform
from functrans.gradcheck.pictures import axis_labels, error_ratios, heatmap_blocks
from functrans.gradcheck.results import Check, GradcheckResult

W = np.array([[1.0, -0.5], [0.25, 2.0], [-1.0, 0.5]])
BUG = np.ones((2, 3))
BUG[1, 2] = 1.02  # the JVP rule below scales the tangent of x[1, 2] by 1.02


@ft.custom_jvp
def layer(x):
    return fnp.tanh(x) @ W


@layer.defjvp
def layer_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return layer(x), ((1 - fnp.tanh(x) ** 2) * t * BUG) @ W


X = np.linspace(-0.6, 0.9, 6).reshape(2, 3)


def buggy_result(**options):
    return ft.gradcheck(layer, raise_exception=False, **options)(X)


# ------------------------------------------------------------------------------------------
# The numbers behind the heat map (no matplotlib needed)
# ------------------------------------------------------------------------------------------


def test_error_ratios_is_the_error_over_atol_plus_rtol_numeric():
    numeric = np.array([[1.0, -2.0, np.inf, np.nan], [0.0, 3.0, 1.0, np.nan]])
    analytic = np.array([[1.0, -2.5, np.inf, np.nan], [1e-3, 3.0 + 1e-4, np.nan, 0.0]])
    check = Check("jacobian", "fwd", "f", 1, False, "out", "x", numeric=numeric,
                  analytic=analytic, atol=1e-3, rtol=1e-2)
    ratios = error_ratios(check)
    expected = np.array([[0.0, 0.5 / (1e-3 + 2e-2), 0.0, 0.0],
                         [1e-3 / 1e-3, 1e-4 / (1e-3 + 3e-2), np.inf, np.inf]])
    np.testing.assert_allclose(ratios, expected, rtol=1e-9)


def test_error_ratios_flag_exactly_the_wrong_entries():
    result = buggy_result(modes="fwd")
    (check,) = [c for c in result.checks if c.kind == "jacobian"]
    ratios = error_ratios(check)
    assert ratios.shape == (4, 6)
    # x[1, 2] is column 5; it feeds the outputs out[1, 0] and out[1, 1] (rows 2 and 3)
    assert set(zip(*np.nonzero(ratios > 1))) == {(2, 5), (3, 5)}
    assert (ratios > 1).sum() == check.num_failed
    assert ratios.max() == pytest.approx(check.max_ratio, rel=1e-3)
    assert np.all(np.delete(ratios, 5, axis=1) < 1e-3)  # the rest is calm


def test_error_ratios_needs_a_full_mode_block():
    check = ft.gradcheck(fnp.sin, fast_mode=True)(np.array([0.5])).checks[0]
    with pytest.raises(ValueError, match="full-mode Jacobian"):
        error_ratios(check)


def test_axis_labels_are_multi_indices_with_real_and_imaginary_parts():
    def f(x, z):
        return fnp.sum(fnp.sin(x), axis=0) * fnp.sum(fnp.abs(z))

    result = ft.gradcheck(f, modes="rev", order=2)(X, np.array([1 + 2j, 0.5 - 1j]))
    assert result.layouts[("f", "x")] == ((2, 3), False)
    assert result.layouts[("f", "z")] == ((2,), True)
    blocks = {(c.function, c.output, c.input): (rows, cols)
              for c, _, rows, cols in heatmap_blocks(result)}
    rows, cols = blocks[("f", "out", "x")]
    assert rows == ["out[0]", "out[1]", "out[2]"]
    assert cols == ["x[0, 0]", "x[0, 1]", "x[0, 2]", "x[1, 0]", "x[1, 1]", "x[1, 2]"]
    _, cols = blocks[("f", "out", "z")]
    assert cols == ["z[0].real", "z[1].real", "z[0].imag", "z[1].imag"]
    # order 2: the derivative's extra input is labelled too
    rows, cols = blocks[("vjp(f)", "cotangent of z", "cotangent of out")]
    assert cols == ["cotangent of out[0]", "cotangent of out[1]", "cotangent of out[2]"]
    assert rows[-1] == "cotangent of z[1].imag"


def test_axis_labels_fall_back_to_flat_indices():
    check = Check("jacobian", "fwd", "g", 1, True, "y", "w", numeric=np.zeros((1, 2)),
                  analytic=np.zeros((1, 2)), atol=1.0, rtol=1.0)
    assert axis_labels(check, {}) == (["y[0]"], ["w[0]", "w[1]"])


def test_pictures_say_how_to_get_matplotlib(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = ft.gradcheck(fnp.sin)(np.array([0.5]))
    with pytest.raises(ImportError, match="pip install matplotlib"):
        result.save_heatmap(tmp_path / "h.png")
    with pytest.raises(ImportError, match="pip install matplotlib"):
        result.save_jacobians(tmp_path / "j.png")


# ------------------------------------------------------------------------------------------
# The drawings (matplotlib)
# ------------------------------------------------------------------------------------------


def red_pixels(path) -> int:
    image = pytest.importorskip("matplotlib.image").imread(path)
    r, g, b = image[..., 0], image[..., 1], image[..., 2]
    return int(np.sum((r > 0.75) & (g < 0.25) & (b < 0.25)))


def test_a_failing_block_shows_red_and_a_passing_one_none(tmp_path):
    pytest.importorskip("matplotlib")
    buggy_result().save_heatmap(tmp_path / "fail.png")
    ft.gradcheck(lambda x: fnp.tanh(x) @ W)(X).save_heatmap(tmp_path / "pass.png")
    assert (tmp_path / "fail.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # only the colour bars' "over 1" arrows are red when every entry passes
    calm, failing = red_pixels(tmp_path / "pass.png"), red_pixels(tmp_path / "fail.png")
    assert calm < 400 and failing > calm + 5000, (calm, failing)


def test_fast_mode_draws_the_directional_errors(tmp_path):
    pytest.importorskip("matplotlib")
    buggy_result(fast_mode=True).save_heatmap(tmp_path / "fast.svg")
    text = (tmp_path / "fast.svg").read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    ft.gradcheck(fnp.sin, fast_mode=True)(X).save_heatmap(tmp_path / "calm.png")
    buggy_result(fast_mode=True).save_heatmap(tmp_path / "failing.png")
    assert red_pixels(tmp_path / "calm.png") == 0 < red_pixels(tmp_path / "failing.png")


def test_jacobians_side_by_side(tmp_path):
    pytest.importorskip("matplotlib")
    result = buggy_result()
    result.save_jacobians(tmp_path / "j.png")
    assert red_pixels(tmp_path / "j.png") > 0
    with pytest.raises(ValueError, match="max_entries=10"):
        result.save_jacobians(tmp_path / "none.png", max_entries=10)


def test_a_result_with_nothing_to_draw_says_so(tmp_path):
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="no derivative comparisons"):
        GradcheckResult("f", 0, {}).save_heatmap(tmp_path / "h.png")


# ------------------------------------------------------------------------------------------
# Progress
# ------------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_off_in_ci_and_off_a_terminal(monkeypatch):
    assert transform.progress_enabled(True, environ={"CI": "true"})
    assert not transform.progress_enabled(False, environ={}, stream=Terminal())
    assert not transform.progress_enabled(None, environ={"CI": "1"}, stream=Terminal())
    assert not transform.progress_enabled(None, environ={}, stream=io.StringIO())
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert not transform.progress_enabled(None, environ={}, stream=Terminal())


def test_progress_option_is_checked():
    with pytest.raises(ValueError, match="progress must be None, True or False"):
        ft.gradcheck(fnp.sin, progress="yes")


def test_forced_progress_without_tqdm_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match="pip install tqdm"):
        ft.gradcheck(fnp.sin, progress=True)(np.array([0.5]))
    # fast mode has no bar, so it needs no tqdm
    assert ft.gradcheck(fnp.sin, progress=True, fast_mode=True)(np.array([0.5]))


def test_progress_bar_counts_every_unit_of_work(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(transform, "PROGRESS_DELAY", 0.0)
    seen, phases = [], []
    close, phase = transform.Progress.close, transform.Progress.phase

    def recording_close(self):
        if self.bar is not None:
            seen.append((self.bar.n, self.bar.total))
        close(self)

    def recording_phase(self, what):
        phases.append(what)
        phase(self, what)

    monkeypatch.setattr(transform.Progress, "close", recording_close)
    monkeypatch.setattr(transform.Progress, "phase", recording_phase)
    assert ft.gradcheck(fnp.tanh, order=2, progress=True)(np.array([0.1, 0.2]))
    # f: 2 numeric columns + 2 fwd columns + 2 rev rows + 1 for the other checks;
    # jvp(f) and vjp(f) (4 inputs, 2 outputs each): 4 + 4 + 2 + 1
    assert seen == [(29, 29)] == [(transform.planned_work(2, 2, ("fwd", "rev"), 1),) * 2]
    assert phases[:5] == ["numerical Jacobian of tanh", "fwd Jacobian of tanh",
                          "comparing the fwd Jacobian of tanh", "rev Jacobian of tanh",
                          "comparing the rev Jacobian of tanh"]
    assert "other checks of tanh" in phases and "numerical Jacobian of vjp(tanh)" in phases
    assert "gradcheck of tanh" in capsys.readouterr().err
    ft.gradcheck(fnp.tanh, progress=False)(np.array([0.1]))
    assert capsys.readouterr().err == ""


class TimedTerminal(Terminal):
    """A terminal that records when each piece of text was written."""

    def __init__(self):
        super().__init__()
        self.writes: list = []

    def write(self, text):
        if text.strip():
            self.writes.append((time.perf_counter(), text))
        return super().write(text)


def test_progress_shows_from_the_first_second_and_redraws_during_a_long_call(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.delenv("CI", raising=False)
    terminal = TimedTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(sys, "stdout", Terminal())  # the default needs both to be terminals
    calls, slow = [0], {}

    def f(x):
        calls[0] += 1
        if calls[0] == 2:  # the first chunk of the numerical Jacobian: 1.6 seconds
            slow["start"] = time.perf_counter()
            time.sleep(1.6)
            slow["stop"] = time.perf_counter()
        return fnp.sin(x)

    start = time.perf_counter()
    assert ft.gradcheck(f)(np.linspace(0.0, 1.0, 8))
    times = [t for t, _ in terminal.writes]
    assert times and times[0] - start < 1.0
    during = [t for t in times if slow["start"] <= t <= slow["stop"]]
    assert len(during) >= 2  # redrawn while one call runs, with its elapsed time
    assert max(np.diff([slow["start"]] + during + [slow["stop"]])) < 1.0
    text = "".join(w for _, w in terminal.writes)
    assert "numerical Jacobian of f" in text and "gradcheck of f" in text


def test_progress_is_off_when_not_a_terminal(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.delenv("CI", raising=False)
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(transform, "PROGRESS_DELAY", 0.0)
    assert ft.gradcheck(fnp.sin)(np.linspace(0.0, 1.0, 8))
    assert stream.getvalue() == ""
    assert ft.gradcheck(fnp.sin, progress=True)(np.linspace(0.0, 1.0, 8))
    assert "gradcheck of sin" in stream.getvalue()


def test_paced_chunks_cover_every_column_and_grow():
    from functrans.gradcheck.jacobians import chunk_ranges
    counted = []
    ranges = list(chunk_ranges(1000, 300, counted.append))
    assert ranges[0] == (0, 16) and ranges[-1][1] == 1000
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert max(b - a for a, b in ranges) <= 300 and sum(counted) == 1000
    assert list(chunk_ranges(10, 4)) == [(0, 4), (4, 8), (8, 10)]


# ------------------------------------------------------------------------------------------
# Jaxprs as DOT graphs
# ------------------------------------------------------------------------------------------

NODE = re.compile(r'^\s*(\w+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
EDGE = re.compile(r'^\s*(\w+) -> (\w+) \[(?:label="((?:[^"\\]|\\.)*)")?(.*)\];$')


def parse_dot(text: str):
    """Nodes {id: (label, attributes)}, edges [(src, dst, label, attributes)], and the
    cluster labels, from the DOT text; fails on any line it does not understand."""
    lines = text.splitlines()
    assert lines[0] == "digraph jaxpr {" and lines[-1] == "}"
    nodes, edges, clusters, depth = {}, [], [], 1
    for line in lines[1:-1]:
        stripped = line.strip()
        if m := NODE.match(line):
            assert m.group(1) not in nodes, "node declared twice"
            nodes[m.group(1)] = (m.group(2), m.group(3))
        elif m := EDGE.match(line):
            edges.append((m.group(1), m.group(2), m.group(3), m.group(4)))
        elif stripped.startswith("subgraph cluster_"):
            depth += 1
        elif stripped == "}":
            depth -= 1
        elif stripped.startswith("label="):
            clusters.append(stripped[len('label="'):-2])
        else:
            assert stripped.startswith(("rankdir", "node [", "style=")), line
    assert depth == 1, "unbalanced braces"
    for src, dst, _, _ in edges:
        assert src in nodes and dst in nodes, "edge to an undeclared node"
    return nodes, edges, clusters


def test_dot_has_a_box_per_equation_and_a_typed_edge_per_use():
    closed = ft.make_jaxpr(ft.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2)))(np.ones(3))
    nodes, edges, clusters = parse_dot(closed.to_dot())
    eqns = {k: v for k, v in nodes.items() if k.startswith("e")}
    assert [label.split("\\n")[0] for label, _ in eqns.values()] == [
        e.primitive.name for e in closed.eqns]
    assert all("shape=box" in attrs for _, attrs in eqns.values())
    uses = sum(len(e.invars) for e in closed.eqns) + len(closed.jaxpr.outvars)
    assert len(edges) == uses and not clusters
    # variables are named and typed as in the text form
    binders = set(re.findall(r"\b\w+:\w+\[[\d, ]*\]", str(closed)))
    named = [label for _, _, label, _ in edges if ":" in label]
    assert set(named) == binders and len(named) == uses - 3  # three literals: 1, 2, 1.0
    assert nodes["v0"][0] == "in a: f64[3]"
    outs = [label for label, _ in nodes.values() if label.startswith("out")]
    assert outs == ["out 0"]


def test_dot_shows_params_constants_and_literals():
    c = np.arange(3.0)
    closed = ft.make_jaxpr(lambda x: fnp.sum(x * c + 1.0, axis=0))(np.ones(3))
    nodes, edges, _ = parse_dot(closed.to_dot())
    labels = [label for label, _ in nodes.values()]
    assert "const a: f64[3]" in labels and "in b: f64[3]" in labels
    assert "reduce_sum\\naxes=(0,)" in labels
    literal = [k for k, (label, attrs) in nodes.items() if "plaintext" in attrs]
    assert [nodes[k][0] for k in literal] == ["1.0"]
    assert [(dst, label) for src, dst, label, _ in edges if src == literal[0]] == [
        (next(k for k, (lab, _) in nodes.items() if lab == "add"), "f64[]")]
    assert closed.jaxpr.to_dot() == closed.to_dot()  # the open jaxpr draws the same


def test_nested_jaxprs_are_clusters():
    def f(x):
        return ft.lax.cond(fnp.sum(x) > 0, lambda y: fnp.sin(y) * 2.0, lambda y: y, x)

    nodes, edges, clusters = parse_dot(ft.make_jaxpr(f)(np.ones(3)).to_dot())
    assert clusters == ["cond: branches[0]", "cond: branches[1]"]
    assert sum("lhead=cluster_" in attrs for *_, attrs in edges) == 2
    assert [label for label, _ in nodes.values()].count("in a: f64[3]") == 3
    jitted = ft.make_jaxpr(ft.jit(lambda x: fnp.sum(x ** 2)))(np.ones(3))
    nodes, _, clusters = parse_dot(jitted.to_dot())
    assert clusters == ["jit: jaxpr"]
    assert "integer_pow\\ny=2" in [label for label, _ in nodes.values()]


def test_to_dot_rejects_other_things():
    with pytest.raises(TypeError, match="to_dot: expected a Jaxpr"):
        graphviz.to_dot(lambda x: x)


def test_render_errors(monkeypatch, tmp_path):
    closed = ft.make_jaxpr(fnp.sin)(np.ones(2))
    with pytest.raises(ValueError, match="format must be one of"):
        closed.render(tmp_path / "graph.jpeg")
    monkeypatch.setattr(graphviz.shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="install Graphviz"):
        closed.render(tmp_path / "graph.svg")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_dot_accepts_the_graph_and_render_draws_it(tmp_path):
    closed = ft.make_jaxpr(ft.grad(lambda x: ft.lax.cond(
        fnp.sum(x) > 0, lambda y: fnp.sum(fnp.sin(y)), lambda y: fnp.sum(y), x)))(np.ones(3))
    done = subprocess.run(["dot", "-Tcanon"], input=closed.to_dot(), capture_output=True,
                          text=True)
    assert done.returncode == 0 and not done.stderr, done.stderr
    svg = closed.render(tmp_path / "g.svg")
    assert open(svg).read().count("<g id=\"node") == len(parse_dot(closed.to_dot())[0])
    png = closed.render(tmp_path / "g.out", format="png")
    assert open(png, "rb").read()[:4] == b"\x89PNG"
