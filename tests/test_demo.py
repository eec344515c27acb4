"""The tour printed by ``python -m functrans``: truncated arrays say so, and the jaxpr's
inputs are named by their paths in the arguments."""
from __future__ import annotations

import doctest
import importlib

demo = importlib.import_module("functrans.__main__")


def test_the_demo_labels_what_it_prints(capsys):
    demo.main()
    out = capsys.readouterr().out
    assert " w1 (3, 4)  first 3 of 12: [" in out
    assert " b2 (1,)    [" in out  # shown whole: no label
    legend = out[out.index("== make_jaxpr(loss) =="):]
    for line in ["a = params['b1']", "b = params['b2']", "c = params['w1']",
                 "d = params['w2']", "e = x", "f = y"]:
        assert f"  {line}\n" in legend
    assert legend.index("f = y") < legend.index("{ lambda ; a:f64[4] b:f64[1] c:f64[3,4]")


def test_the_demo_helpers_examples():
    failed, tried = doctest.testmod(demo, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 2 and failed == 0
