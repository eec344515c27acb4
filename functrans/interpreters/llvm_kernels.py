"""Fused regions compiled by LLVM (llvmlite) into NumPy ufuncs.

The code generator's fusion pass (codegen, "Fusion") describes a region as a scalar
program: inputs ``x0, x1, ...`` of given dtypes, statements ``(name, dtype, expression)``
whose expressions are the small Python-expression language of ``Lowering.kernel``
templates, and the names of its outputs.  This module translates such a program into
LLVM IR (``llvmlite.ir``), a NumPy inner loop::

    void loop(char **args, npy_intp *dims, npy_intp *steps, void *data)

and makes it a real ``numpy.ufunc`` with ``PyUFunc_FromFuncAndData`` (taken from NumPy's
``_UFUNC_API`` capsule): NumPy then broadcasts, strides, converts scalars, allocates the
outputs and checks the floating-point flags after the loop, as for its own ufuncs, and a
call costs what a call of ``np.add`` does.

The loop has two bodies: one for contiguous operands (indexed by the element, which LLVM
vectorises) and one for any strides; inputs that are one element for the whole region
(0-d, or broadcast along every axis) are read once before the loop.

The expression language and its semantics (NumPy's, by dtype):
``np.<dtype>(constant)`` (``np.nan``, ``np.inf`` and ``-`` allowed inside) a typed
constant; ``np.<dtype>(expression)`` a conversion (integers wrap; floats to integers are
not translated: NumPy's result there is the platform's); ``+ - *`` (integers wrap), ``/``
on floats, unary ``-``; comparisons (ordered, ``!=`` unordered, as IEEE and NumPy); ``a if
c else b``; ``not``, ``and``, ``or``, ``&``, ``|`` on booleans; ``np.abs``, ``np.sqrt``,
``np.floor``, ``np.ceil`` as LLVM's exact intrinsics; ``np.isfinite``; the libm functions
(``np.sin`` -> ``sin`` or ``sinf`` by dtype, ``np.power`` -> ``pow``, ``np.arctan2`` ->
``atan2``, ...).  Anything else makes the translation fail (``kernel`` returns None), and
the region stays with the other fusion compiler or NumPy: never a wrong loop.

Object code is cached on disk in the directory the caller names, in a file named by the
hash of what determines the IR (the scalar program with its dtypes, and this module's
source, which writes the IR), llvmlite's version, the target triple and the host CPU's
name and features; a new process loads it into one process-wide MCJIT engine instead of
compiling, without writing the IR (for a region of hundreds of operations that alone
would take longer than loading).
Files are written atomically (a temporary file, then ``os.replace``) and carry a checksum
of the object code, so that a truncated or corrupt file is compiled again, never loaded.
Where the system has a linker, the object code is also a shared library that a process
loads without LLVM ("Shared libraries" below).
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import threading
import time
from typing import Callable

import numpy as np

__all__ = ["UfuncKernel", "ufunc_kernel", "gufunc_kernel", "scatter_add_kernel", "installed"]


def installed() -> bool:
    """Whether llvmlite can be imported (without importing it)."""
    import importlib.util
    return importlib.util.find_spec("llvmlite") is not None


class _Untranslatable(Exception):
    """Something of a scalar program this module has no exact translation for."""


#: the dtypes loops compute in, by name
_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64))
#: NumPy functions that are libm calls: the C name for float64 (float32 adds ``f``)
_LIBM = {"exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
         "log10": "log10", "log1p": "log1p", "cbrt": "cbrt", "sin": "sin", "cos": "cos",
         "tan": "tan", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh",
         "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh",
         "arctanh": "atanh", "power": "pow", "arctan2": "atan2"}
#: NumPy functions that LLVM computes exactly (correctly rounded or exact)
_INTRINSICS = {"abs": "llvm.fabs", "sqrt": "llvm.sqrt", "floor": "llvm.floor",
               "ceil": "llvm.ceil"}
_COMPARISONS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
                ast.NotEq: "!="}


def _dtype_of_name(name: str):
    """The dtype ``np.<name>`` converts to, or None."""
    if name in ("bool", "bool_"):
        return np.dtype(np.bool_)
    try:
        dtype = np.dtype(name)
    except TypeError:
        return None
    return dtype if dtype in _DTYPES and dtype.name == name else None


def _is_number(node) -> bool:
    """Whether ``node`` is a bare Python number (``0``, ``-1.5``)."""
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _constant_value(node):
    """The Python number ``node`` spells (literals, ``np.nan``, ``np.inf``, unary minus),
    or raise ``_Untranslatable``."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_constant_value(node.operand)
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "np" and node.attr in ("nan", "inf")):
        return float(node.attr)
    raise _Untranslatable(ast.dump(node))


class _Translator:
    """Emits the scalar program's expressions with an ``llvmlite.ir.IRBuilder``; values
    are ``(llvm value, dtype)``, booleans ``i1``."""

    def __init__(self, module, builder, env: dict, strict: bool = False):
        from llvmlite import ir
        self.ir = ir
        self.module = module
        self.b = builder
        self.env = env
        self.strict = strict

    # Floating-point operations.  LLVM assumes that no one reads the floating-point flags,
    # so it may speculate an operation a select guards (``sin(s) / s`` with ``s = x == 0 ?
    # 1 : x`` computed at ``x`` itself, 0 / 0), raising a flag NumPy's calls never raise;
    # in ``strict`` loops (those with selects) every operation that may raise a flag is
    # LLVM's constrained intrinsic, which keeps the flags of the program as written.

    def _constrained(self, name: str, result, operands: list, types: list,
                     rounding: bool = True, predicate: str | None = None):
        ir = self.ir
        md = ir.MetaDataType()
        suffix = ".".join(_type_suffix(t) for t in types)
        symbol = f"llvm.experimental.constrained.{name}.{suffix}"
        extra = ([ir.MetaDataString(self.module, predicate)] if predicate else []) + (
            [ir.MetaDataString(self.module, "round.tonearest")] if rounding else []) + [
            ir.MetaDataString(self.module, "fpexcept.strict")]
        fn = self.module.globals.get(symbol)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(
                result, [v.type for v in operands] + [md] * len(extra)), name=symbol)
        return self.b.call(fn, list(operands) + extra)  # strictfp: see _strict

    def arith(self, op: str, a, c):
        """``op`` ("fadd", "fsub", "fmul", "fdiv") of two floats."""
        if self.strict:
            return self._constrained(op, a.type, [a, c], [a.type])
        return getattr(self.b, op)(a, c)

    def fcmp(self, predicate: str, a, c):
        """A quiet comparison (``"ord"``, ``"uno"``) of two floats."""
        if self.strict:
            return self._constrained("fcmp", self.ir.IntType(1), [a, c], [a.type],
                                     rounding=False, predicate=predicate)
        return self.b.fcmp_unordered(predicate, a, c)

    def cast(self, op: str, value, t):
        """``op`` ("sitofp", "uitofp", "fpext", "fptrunc") of ``value`` to ``t``."""
        if self.strict:
            return self._constrained(op, t, [value], [t, value.type],
                                     rounding=op != "fpext")
        return getattr(self.b, op)(value, t)

    def type(self, dtype: np.dtype):
        ir = self.ir
        if dtype.kind == "b":
            return ir.IntType(1)
        if dtype.kind == "f":
            return ir.DoubleType() if dtype.itemsize == 8 else ir.FloatType()
        return ir.IntType(8 * dtype.itemsize)

    def constant(self, value, dtype: np.dtype):
        try:
            typed = np.array(value, dtype=dtype)  # NumPy's conversion of the Python number
        except (OverflowError, ValueError, TypeError) as error:
            raise _Untranslatable(f"{value!r} as {dtype}") from error
        if dtype.kind in "biu" and typed.item() != value:
            raise _Untranslatable(f"{value!r} as {dtype}")
        if dtype.kind == "f":
            return self.ir.Constant(self.type(dtype), float(typed.item()))
        return self.ir.Constant(self.type(dtype), int(typed.item()))

    def function(self, name: str, dtype: np.dtype, nargs: int):
        ir = self.ir
        symbol = name + ("f" if dtype.itemsize == 4 else "")
        fn = self.module.globals.get(symbol)
        if fn is None:
            t = self.type(dtype)
            fn = ir.Function(self.module, ir.FunctionType(t, [t] * nargs), name=symbol)
            # pure as far as LLVM cares (it models neither errno nor the flags here): so
            # it may schedule the calls, and join sin and cos of one value into sincos
            # (not in strict loops, where a call stays where it is written)
            fn.attributes.add("nounwind")
            if not self.strict:
                fn.attributes.add("readnone")
        return fn

    def emit(self, node):
        method = getattr(self, "emit_" + type(node).__name__, None)
        if method is None:
            raise _Untranslatable(ast.dump(node))
        return method(node)

    def emit_Name(self, node):
        if node.id not in self.env:
            raise _Untranslatable(node.id)
        return self.env[node.id]

    def emit_Call(self, node):
        func = node.func
        if (not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name)
                or func.value.id != "np" or node.keywords):
            raise _Untranslatable(ast.dump(node))
        name = func.attr
        target = _dtype_of_name(name)
        if target is not None:
            if len(node.args) != 1:
                raise _Untranslatable(name)
            try:
                return self.constant(_constant_value(node.args[0]), target), target
            except _Untranslatable:
                return self.convert(self.emit(node.args[0]), target)
        args = [self.emit(a) for a in node.args]
        dtype = args[0][1] if args else None
        if dtype is None or dtype.kind != "f" or any(d != dtype for _, d in args):
            raise _Untranslatable(name)
        values = [v for v, _ in args]
        b = self.b
        if name == "isfinite" and len(values) == 1:  # the exponent's bits: no flags
            t = self.ir.IntType(8 * dtype.itemsize)
            exponent = t(0x7FF0000000000000 if dtype.itemsize == 8 else 0x7F800000)
            masked = b.and_(b.bitcast(values[0], t), exponent)
            return b.icmp_unsigned("!=", masked, exponent), np.dtype(np.bool_)
        if name in _INTRINSICS and len(values) == 1:
            if self.strict and name != "abs":
                return self._constrained(name, values[0].type, values, [values[0].type],
                                         rounding=name == "sqrt"), dtype
            fn = self.module.declare_intrinsic(_INTRINSICS[name], [self.type(dtype)])
            return b.call(fn, values), dtype
        if name in _LIBM:
            nargs = 2 if name in ("power", "arctan2") else 1
            if len(values) != nargs:
                raise _Untranslatable(name)
            fn = self.function(_LIBM[name], dtype, nargs)
            return b.call(fn, values), dtype
        raise _Untranslatable(name)

    def convert(self, pair, target: np.dtype):
        value, source = pair
        b = self.b
        if source == target:
            return value, target
        t = self.type(target)
        if target.kind == "b":
            if source.kind == "f":
                zero = self.ir.Constant(value.type, 0.0)
                return self.compare_floats("!=", value, zero, source), target
            return b.icmp_unsigned("!=", value, self.ir.Constant(value.type, 0)), target
        if source.kind == "b":
            return (self.cast("uitofp", value, t) if target.kind == "f"
                    else b.zext(value, t)), target
        if source.kind in "iu":
            if target.kind == "f":
                return self.cast("sitofp" if source.kind == "i" else "uitofp", value, t), target
            if target.itemsize < source.itemsize:
                return b.trunc(value, t), target
            if target.itemsize > source.itemsize:
                return (b.sext(value, t) if source.kind == "i" else b.zext(value, t)), target
            return value, target  # the same bits
        if target.kind == "f":  # float to float
            if target.itemsize > source.itemsize:
                return self.cast("fpext", value, t), target
            return self.cast("fptrunc", value, t), target
        raise _Untranslatable(f"{source} to {target}")  # float to integer

    def pair(self, left, right):
        """Two operands; a bare Python number beside a value takes the value's dtype (as
        ``x != 0`` compares), where it converts exactly."""
        bare = [isinstance(n, (ast.Constant, ast.UnaryOp)) and _is_number(n)
                for n in (left, right)]
        if bare[0] and bare[1]:
            raise _Untranslatable("two bare numbers")
        if bare[0]:
            c, dc = self.emit(right)
            return (self.constant(_constant_value(left), dc), dc), (c, dc)
        if bare[1]:
            a, da = self.emit(left)
            return (a, da), (self.constant(_constant_value(right), da), da)
        return self.emit(left), self.emit(right)

    def emit_BinOp(self, node):
        (a, da), (c, dc) = self.pair(node.left, node.right)
        if da != dc:
            raise _Untranslatable("operands of different dtypes")
        b = self.b
        op = type(node.op)
        if op in (ast.BitAnd, ast.BitOr):
            if da.kind not in "biu":
                raise _Untranslatable("bitwise operation on floats")
            return (b.and_(a, c) if op is ast.BitAnd else b.or_(a, c)), da
        if da.kind == "b":
            raise _Untranslatable("arithmetic on booleans")
        if da.kind == "f":
            names = {ast.Add: "fadd", ast.Sub: "fsub", ast.Mult: "fmul", ast.Div: "fdiv"}
            ops = {k: (lambda a, c, name=name: self.arith(name, a, c))
                   for k, name in names.items()}
        else:  # integers wrap around, as NumPy's
            ops = {ast.Add: b.add, ast.Sub: b.sub, ast.Mult: b.mul}
        if op not in ops:
            raise _Untranslatable(type(node.op).__name__)
        return ops[op](a, c), da

    def emit_UnaryOp(self, node):
        value, dtype = self.emit(node.operand)
        b = self.b
        if isinstance(node.op, ast.Not):
            if dtype.kind != "b":
                raise _Untranslatable("not of a number")
            return b.not_(value), dtype
        if isinstance(node.op, ast.USub):
            if dtype.kind == "f":
                return b.fneg(value), dtype
            if dtype.kind in "iu":
                return b.neg(value), dtype
        raise _Untranslatable(ast.dump(node))

    def emit_Compare(self, node):
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARISONS:
            raise _Untranslatable(ast.dump(node))
        (a, da), (c, dc) = self.pair(node.left, node.comparators[0])
        if da != dc:
            raise _Untranslatable("comparison of different dtypes")
        op = _COMPARISONS[type(node.ops[0])]
        b = self.b
        if da.kind == "f":
            result = self.compare_floats(op, a, c, da)
        elif da.kind == "i":
            result = b.icmp_signed(op, a, c)
        else:
            result = b.icmp_unsigned(op, a, c)
        return result, np.dtype(np.bool_)

    def compare_floats(self, op: str, a, c, dtype: np.dtype):
        """``a op c`` on floats, as IEEE (NaN unequal to everything) without raising a
        flag: LLVM may compile a comparison into a signalling instruction (x86's cmpltpd,
        ``x == inf`` as ``x >= inf``), which raises "invalid" for a NaN operand where
        NumPy's comparisons raise nothing.  So the floats' bits are compared as integers
        (ordered as the floats, -0.0 made +0.0 first), under a quiet test that neither
        operand is NaN."""
        b = self.b
        ka, kc = self.key(a, dtype), self.key(c, dtype)
        if op == "!=":
            return b.or_(self.fcmp("uno", a, c), b.icmp_signed("!=", ka, kc))
        return b.and_(self.fcmp("ord", a, c), b.icmp_signed(op, ka, kc))

    def key(self, value, dtype: np.dtype):
        """An integer ordered as the non-NaN float ``value`` (zeros equal)."""
        b = self.b
        bits = 8 * dtype.itemsize
        t = self.ir.IntType(bits)
        x = b.bitcast(self.arith("fadd", value, self.ir.Constant(value.type, 0.0)), t)
        magnitude = b.lshr(b.ashr(x, t(bits - 1)), t(1))  # negatives: the magnitude bits
        return b.xor(x, magnitude)

    def emit_IfExp(self, node):
        test, dt = self.emit(node.test)
        (a, da), (c, dc) = self.emit(node.body), self.emit(node.orelse)
        if dt.kind != "b" or da != dc:
            raise _Untranslatable("select")
        return self.b.select(test, a, c), da

    def emit_BoolOp(self, node):
        values = [self.emit(v) for v in node.values]
        if any(d.kind != "b" for _, d in values):
            raise _Untranslatable("and/or of numbers")
        combine = self.b.and_ if isinstance(node.op, ast.And) else self.b.or_
        result = values[0][0]
        for v, _ in values[1:]:
            result = combine(result, v)
        return result, np.dtype(np.bool_)


# ------------------------------------------------------------------------------------------
# The inner loop
# ------------------------------------------------------------------------------------------

def _output_value(b, local: dict, name: str, dtype):
    """The value the scalar program computed for output ``name`` of ``dtype``, as stored
    in memory (booleans as bytes); raise ``_Untranslatable`` where it has none of that
    dtype."""
    from llvmlite import ir
    if name not in local or local[name][1] != np.dtype(dtype):
        raise _Untranslatable(f"output {name}")
    value = local[name][0]
    return b.zext(value, ir.IntType(8)) if np.dtype(dtype).kind == "b" else value


def _inner_loop(symbol: str):
    """A module with one function of NumPy's inner-loop signature, ``void symbol(char
    **args, npy_intp *dims, npy_intp *steps, void *data)``: ``(module, function)``."""
    from llvmlite import ir
    module = ir.Module(name=symbol)
    i8p, i64p = ir.IntType(8).as_pointer(), ir.IntType(64).as_pointer()
    fnty = ir.FunctionType(ir.VoidType(), [i8p.as_pointer(), i64p, i64p, i8p])
    return module, ir.Function(module, fnty, name=symbol)


def _loop_ir(symbol: str, inputs: list, statements: list, outputs: list) -> str:
    """The IR text of the NumPy inner loop ``symbol`` computing the scalar program, or
    raise ``_Untranslatable``.  ``inputs``: ``(dtype, scalar)``, ``scalar`` where the
    input is one element for the whole loop; ``statements``: ``(name, dtype, expression)``;
    ``outputs``: ``(name, dtype)``."""
    from llvmlite import ir
    parsed = [(name, np.dtype(dtype), _parse(expr)) for name, dtype, expr in statements]
    module, fn = _inner_loop(symbol)
    i8, i64 = ir.IntType(8), ir.IntType(64)
    strict = _selects(parsed)
    args, dims, steps, _ = fn.args
    entry = fn.append_basic_block("entry")
    setup = fn.append_basic_block("setup")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    n = b.load(dims)
    b.cbranch(b.icmp_signed("<=", n, i64(0)), done, setup)
    b.position_at_end(setup)
    operands = [(np.dtype(d), s) for d, s in inputs] + [(np.dtype(d), False) for _, d in outputs]
    pointers = [b.load(b.gep(args, [i64(k)])) for k in range(len(operands))]
    strides = [b.load(b.gep(steps, [i64(k)])) for k in range(len(operands))]
    probe = _Translator(module, b, {})

    def memory_type(dtype):
        return i8 if dtype.kind == "b" else probe.type(dtype)

    def load(b, address, dtype):
        value = b.load(b.bitcast(address, memory_type(dtype).as_pointer()))
        return b.icmp_unsigned("!=", value, i8(0)) if dtype.kind == "b" else value

    env = {}
    for k, (dtype, scalar) in enumerate(operands[:len(inputs)]):
        if scalar:
            env[f"x{k}"] = (load(b, pointers[k], dtype), dtype)
    contiguous = ir.Constant(ir.IntType(1), 1)
    for k, (dtype, scalar) in enumerate(operands):
        if not scalar:
            contiguous = b.and_(contiguous, b.icmp_signed("==", strides[k], i64(dtype.itemsize)))
    # A long program of libm calls is not vectorised (see _Engine.compile): its contiguous
    # loop computes ``lanes`` elements at once instead, statement by statement, so that
    # the calls of neighbouring elements overlap in the processor; the strided loop then
    # finishes the last elements.
    lanes = 4 if _libm_program(parsed) and len(parsed) >= _LANE_STATEMENTS else 1
    fast = fn.append_basic_block("contiguous")
    slow = fn.append_basic_block("strided")
    b.cbranch(contiguous, fast, slow)
    rest = None  # the element the strided loop starts at, where the contiguous one stops
    for block, packed in ((fast, True), (slow, False)):
        width = lanes if packed else 1
        b.position_at_end(block)
        if packed and lanes > 1:  # enter only with a whole group of lanes
            group = fn.append_basic_block("lanes")
            b.cbranch(b.icmp_signed(">=", n, i64(lanes)), group, slow)
            b.position_at_end(group)
            entry_block, block = block, group
        else:
            entry_block = setup
        i = b.phi(i64)
        i.add_incoming(i64(0), entry_block)
        if not packed and rest is not None:
            for value, source in rest:
                i.add_incoming(value, source)

        def address(k, dtype, lane):
            at = b.add(i, i64(lane)) if lane else i
            if packed:
                return b.gep(b.bitcast(pointers[k], memory_type(dtype).as_pointer()), [at])
            return b.gep(pointers[k], [b.mul(at, strides[k])])

        envs = []
        for lane in range(width):
            local = dict(env)
            for k, (dtype, scalar) in enumerate(operands[:len(inputs)]):
                if not scalar:
                    local[f"x{k}"] = (load(b, address(k, dtype, lane), dtype), dtype)
            envs.append(local)
        translators = [_Translator(module, b, local, strict) for local in envs]
        for name, dtype, tree in parsed:
            for local, translator in zip(envs, translators):
                value = translator.emit(tree)
                if value[1] != dtype:
                    raise _Untranslatable(f"{name}: {value[1]}, not {dtype}")
                local[name] = value
        for lane, local in enumerate(envs):
            for j, (name, dtype) in enumerate(outputs):
                value = _output_value(b, local, name, dtype)
                k = len(inputs) + j
                b.store(value, b.bitcast(address(k, np.dtype(dtype), lane),
                                          memory_type(np.dtype(dtype)).as_pointer()))
        following = b.add(i, i64(width))
        i.add_incoming(following, b.block)
        if width > 1:  # another whole group, else the rest one by one (or nothing)
            after = fn.append_basic_block("after_lanes")
            b.cbranch(b.icmp_signed("<=", b.add(following, i64(width)), n), block, after)
            b.position_at_end(after)
            rest = [(i64(0), entry_block), (following, after)]
            b.cbranch(b.icmp_signed("<", following, n), slow, done)
        else:
            b.cbranch(b.icmp_signed("<", following, n), block, done)
    b.position_at_end(done)
    b.ret_void()
    return _strict(str(module)) if strict else str(module)


def _pairwise_function(module, dtype: np.dtype):
    """``T pairwise_<dtype>(T *a, i64 n)``: NumPy's pairwise summation of ``a[:n]`` (its
    ``pairwise_sum``: below 8 elements one by one from 0; up to 128 eight accumulators,
    combined as a tree, then the rest one by one; above, the two halves (the first a
    multiple of 8 elements) summed apart and added), so that fused sums give NumPy's bits."""
    from llvmlite import ir
    name = f"pairwise_{dtype.name}"
    if name in module.globals:
        return module.globals[name]
    t = ir.DoubleType() if dtype.itemsize == 8 else ir.FloatType()
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(t, [t.as_pointer(), i64]), name=name)
    fn.linkage = "internal"
    a, n = fn.args
    slots = _Slots(fn)
    entry = fn.append_basic_block("entry")
    b = slots.b = ir.IRBuilder(entry)
    zero = t(0.0)
    small, block, split = (fn.append_basic_block(x) for x in ("small", "block", "split"))
    choose = fn.append_basic_block("choose")
    b.cbranch(b.icmp_signed("<", n, i64(8)), small, choose)
    b.position_at_end(choose)
    b.cbranch(b.icmp_signed("<=", n, i64(128)), block, split)
    # fewer than 8: one by one from 0
    b.position_at_end(small)
    res = slots.new(t, zero)
    _counted_loop(b, slots, i64(0), n, lambda i: b.store(b.fadd(b.load(res), b.load(b.gep(a, [i]))), res))
    b.ret(b.load(res))
    # up to 128: eight accumulators
    b.position_at_end(block)
    r = [slots.new(t, b.load(b.gep(a, [i64(j)]))) for j in range(8)]
    whole = b.sub(n, b.srem(n, i64(8)))
    i = slots.new(i64, i64(8))
    head, body, tail = (fn.append_basic_block(x) for x in ("eights", "eights_body", "rest"))
    b.branch(head)
    b.position_at_end(head)
    b.cbranch(b.icmp_signed("<", b.load(i), whole), body, tail)
    b.position_at_end(body)
    at = b.load(i)
    for j in range(8):
        b.store(b.fadd(b.load(r[j]), b.load(b.gep(a, [b.add(at, i64(j))]))), r[j])
    b.store(b.add(at, i64(8)), i)
    b.branch(head)
    b.position_at_end(tail)
    v = [b.load(x) for x in r]
    total = slots.new(t, b.fadd(b.fadd(b.fadd(v[0], v[1]), b.fadd(v[2], v[3])),
                                b.fadd(b.fadd(v[4], v[5]), b.fadd(v[6], v[7]))))
    _counted_loop(b, slots, b.load(i), n,
                  lambda k: b.store(b.fadd(b.load(total), b.load(b.gep(a, [k]))), total))
    b.ret(b.load(total))
    # above: the halves
    b.position_at_end(split)
    half = b.sdiv(n, i64(2))
    half = b.sub(half, b.srem(half, i64(8)))
    left = b.call(fn, [a, half])
    right = b.call(fn, [b.gep(a, [half]), b.sub(n, half)])
    b.ret(b.fadd(left, right))
    slots.close(entry)
    return fn


class _Slots:
    """Stack slots (LLVM promotes them to registers), made in a function's first block,
    ``slots``, which ``close`` ends with a branch to the next."""

    def __init__(self, fn):
        from llvmlite import ir
        self.block = fn.append_basic_block("slots")  # before any other block
        self.entry = ir.IRBuilder(self.block)
        self.b = None  # the builder writing the function, which stores initial values

    def new(self, t, initial=None):
        slot = self.entry.alloca(t)
        if initial is not None:
            self.b.store(initial, slot)
        return slot

    def close(self, following):
        self.entry.branch(following)


def _counted_loop(b, slots, start, stop, body):
    """``for i in range(start, stop): body(i)`` at the builder's position; the builder
    ends after the loop."""
    from llvmlite import ir
    fn = b.function
    i64 = ir.IntType(64)
    counter = slots.new(i64, start)
    head, inside, after = (fn.append_basic_block(x) for x in ("for", "for_body", "for_end"))
    b.branch(head)
    b.position_at_end(head)
    i = b.load(counter)
    b.cbranch(b.icmp_signed("<", i, stop), inside, after)
    b.position_at_end(inside)
    body(i)
    b.store(b.add(b.load(counter), i64(1)), counter)
    b.branch(head)
    b.position_at_end(after)


def _reduction_ir(symbol: str, inputs: list, statements: list, outputs: list,
                  reductions: list, ndim: int) -> tuple:
    """The IR text of the generalised-ufunc loop ``symbol`` computing the scalar program
    over ``ndim`` core axes (the region's reduced axes), and the gufunc's signature; or
    raise ``_Untranslatable``.  ``inputs``: ``(dtype, core)``, ``core[d]`` for each core
    axis ``d``: None (the input has no axis there), ``"span"`` or ``"broadcast"`` (an axis
    of one element); ``outputs``: ``(name, dtype)`` over all core axes; ``reductions``:
    ``(kind, name, dtype)``, ``kind`` "sum", "max" or "min" over all core axes."""
    from llvmlite import ir
    parsed = [(name, np.dtype(dtype), _parse(expr)) for name, dtype, expr in statements]
    signature, operand_core = _core_dimensions(inputs, len(outputs), len(reductions), ndim)
    names: list = []  # unique core dimension names, in order of first appearance
    for dims in operand_core:
        for _, nm in dims:
            if nm not in names:
                names.append(nm)
    module, fn = _inner_loop(symbol)
    i8, i64 = ir.IntType(8), ir.IntType(64)
    i8p = i8.as_pointer()
    strict = _selects(parsed)
    args, dims_arg, steps, _ = fn.args
    slots = _Slots(fn)
    entry = fn.append_basic_block("entry")
    b = slots.b = ir.IRBuilder(entry)
    probe = _Translator(module, b, {})
    nargs = len(operand_core)
    outer = b.load(dims_arg)
    sizes = {nm: b.load(b.gep(dims_arg, [i64(1 + j)])) for j, nm in enumerate(names)}
    pointers = [b.load(b.gep(args, [i64(k)])) for k in range(nargs)]
    outer_steps = [b.load(b.gep(steps, [i64(k)])) for k in range(nargs)]
    core_steps = []
    position = nargs
    for dims in operand_core:
        core_steps.append([b.load(b.gep(steps, [i64(position + j)])) for j in range(len(dims))])
        position += len(dims)
    extent = [sizes[f"n{d}"] for d in range(ndim)]
    m = i64(1)
    for e in extent:
        m = b.mul(m, e)
    dtypes = [np.dtype(d) for d, _ in inputs] + [np.dtype(d) for _, d in outputs] + [
        np.dtype(d) for _, _, d in reductions]

    def memory_type(dtype):
        return i8 if dtype.kind == "b" else probe.type(dtype)

    buffers = {}
    pairwise = [j for j, (kind, _, dtype) in enumerate(reductions)
                if kind == "sum" and np.dtype(dtype).kind == "f"]
    # fewer than 8 values: NumPy's pairwise sum adds them one by one from 0, which the
    # accumulator does without the buffer
    small = b.icmp_signed("<", m, i64(8))
    if pairwise:
        malloc = ir.Function(module, ir.FunctionType(i8p, [i64]), name="malloc")
        free = ir.Function(module, ir.FunctionType(ir.VoidType(), [i8p]), name="free")
        for j in pairwise:
            dtype = np.dtype(reductions[j][2])
            raw = b.call(malloc, [b.mul(b.add(m, i64(1)), i64(dtype.itemsize))])
            buffers[j] = b.bitcast(raw, memory_type(dtype).as_pointer())

    def outer_body(o):
        base = [b.gep(pointers[k], [b.mul(o, outer_steps[k])]) for k in range(nargs)]
        accumulators = []
        for kind, _, dtype in reductions:
            dtype = np.dtype(dtype)
            t = probe.type(dtype)
            if kind == "sum":
                start = t(0.0) if dtype.kind == "f" else t(0)
            elif dtype.kind == "f":
                start = t(float("-inf") if kind == "max" else float("inf"))
            else:
                info = np.iinfo(dtype)
                start = t(int(info.min if kind == "max" else info.max))
            accumulators.append(slots.new(t, start))
        p = slots.new(i64, i64(0))
        index = [None] * ndim

        def address(k):
            at = base[k]
            for (d, _), step in zip(operand_core[k], core_steps[k]):
                if d is not None:
                    at = b.gep(at, [b.mul(index[d], step)])
            return b.bitcast(at, memory_type(dtypes[k]).as_pointer())

        def innermost():
            local = {}
            for k, (dtype, _) in enumerate(inputs):
                value = b.load(address(k))
                local[f"x{k}"] = ((b.icmp_unsigned("!=", value, i8(0)), dtype)
                                  if np.dtype(dtype).kind == "b" else (value, np.dtype(dtype)))
            translator = _Translator(module, b, local, strict)
            for name, dtype, tree in parsed:
                value = translator.emit(tree)
                if value[1] != dtype:
                    raise _Untranslatable(f"{name}: {value[1]}, not {dtype}")
                local[name] = value
            for j, (name, dtype) in enumerate(outputs):
                b.store(_output_value(b, local, name, dtype), address(len(inputs) + j))
            for j, (kind, name, dtype) in enumerate(reductions):
                dtype = np.dtype(dtype)
                if name not in local or local[name][1] != dtype or dtype.kind not in "iuf":
                    raise _Untranslatable(f"reduction of {name}")
                value = local[name][0]
                slot = accumulators[j]
                if j in buffers:
                    with b.if_else(small) as (few, many):
                        with few:
                            b.store(translator.arith("fadd", b.load(slot), value), slot)
                        with many:
                            b.store(value, b.gep(buffers[j], [b.load(p)]))
                elif kind == "sum":
                    b.store(b.add(b.load(slot), value), slot)
                else:  # NumPy's maximum and minimum: the first NaN wins
                    acc = b.load(slot)
                    op = ">" if kind == "max" else "<"
                    if dtype.kind == "f":
                        better = b.and_(translator.fcmp("ord", acc, value), b.icmp_signed(
                            op, translator.key(acc, dtype), translator.key(value, dtype)))
                        keep = b.or_(better, translator.fcmp("uno", acc, acc))
                    elif dtype.kind == "i":
                        keep = b.icmp_signed(op, acc, value)
                    else:
                        keep = b.icmp_unsigned(op, acc, value)
                    b.store(b.select(keep, acc, value), slot)
            b.store(b.add(b.load(p), i64(1)), p)

        def nest(d):
            if d == ndim:
                innermost()
                return

            def level(i):
                index[d] = i
                nest(d + 1)
            _counted_loop(b, slots, i64(0), extent[d], level)

        nest(0)
        for j, (kind, name, dtype) in enumerate(reductions):
            dtype = np.dtype(dtype)
            result = b.load(accumulators[j])
            if j in buffers:  # (a branch: the buffer is not written when small)
                with b.if_then(b.not_(small)):
                    total = b.call(_pairwise_function(module, dtype), [buffers[j], m])
                    zero = probe.type(dtype)(0.0)
                    b.store(_Translator(module, b, {}, strict).arith("fadd", zero, total),
                            accumulators[j])
                result = b.load(accumulators[j])
            b.store(result, address(len(inputs) + len(outputs) + j))

    _counted_loop(b, slots, i64(0), outer, outer_body)
    for j in buffers:
        b.call(free, [b.bitcast(buffers[j], i8p)])
    b.ret_void()
    slots.close(entry)
    return (_strict(str(module)) if strict else str(module)), signature


def _scatter_add_ir(symbol: str, value: np.dtype, index: np.dtype) -> str:
    """The IR text of the generalised-ufunc loop ``symbol``, signature
    ``(k),(n,k),(n,c),()->(r,c)``: operands ``dims`` (int64: the sizes of the ``k``
    indexed axes), ``idx`` (``index``), ``upd`` (``value``), ``flags`` (int64: 1 clamp
    the indices, else drop those out of bounds; 2 accumulate float sums in float64, as
    NumPy's ``bincount`` does, where many updates arrive; 4 the target is zeros) and the
    target ``out`` (``value``, rows of ``c``), given filled and added to in place: the
    scatter-add loop codegen describes ("Scatter-add as one loop")."""
    from llvmlite import ir
    module, fn = _inner_loop(symbol)
    i1, i8, i64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
    f64 = ir.DoubleType()
    i8p = i8.as_pointer()
    args, dims_arg, steps, _ = fn.args
    slots = _Slots(fn)
    entry = fn.append_basic_block("entry")
    b = slots.b = ir.IRBuilder(entry)
    probe = _Translator(module, b, {})
    vt, it = probe.type(value), probe.type(index)
    malloc = ir.Function(module, ir.FunctionType(i8p, [i64]), name="malloc")
    calloc = ir.Function(module, ir.FunctionType(i8p, [i64, i64]), name="calloc")
    free = ir.Function(module, ir.FunctionType(ir.VoidType(), [i8p]), name="free")
    # core dimensions in order of appearance: k, n, c, r
    outer = b.load(dims_arg)
    k_, n_, c_, r_ = (b.load(b.gep(dims_arg, [i64(j)])) for j in range(1, 5))
    pointers = [b.load(b.gep(args, [i64(j)])) for j in range(5)]
    outer_steps = [b.load(b.gep(steps, [i64(j)])) for j in range(5)]
    # core strides: dims (k); idx (n, k); upd (n, c); out (r, c)
    core = [b.load(b.gep(steps, [i64(5 + j)])) for j in range(7)]
    # strides in elements (the operands are aligned): typed indexing, which LLVM's
    # vectoriser specialises for unit strides
    sizes = [8, index.itemsize, index.itemsize, value.itemsize, value.itemsize,
             value.itemsize, value.itemsize]
    s_dims, s_idx_n, s_idx_k, s_upd_n, s_upd_c, s_out_r, s_out_c = (
        b.sdiv(step, i64(size)) for step, size in zip(core, sizes))

    def at(base, t, *offsets):
        element = None
        for index_, step in offsets:
            term = b.mul(index_, step)
            element = term if element is None else b.add(element, term)
        return b.gep(b.bitcast(base, t.as_pointer()), [element])

    def loop(stop, body, start=i64(0)):
        _counted_loop(b, slots, start, stop, body)

    def outer_body(o):
        dims_p, idx_p, upd_p, flags_p, out_p = (
            b.gep(pointers[j], [b.mul(o, outer_steps[j])]) for j in range(5))
        flags = b.load(b.bitcast(flags_p, i64.as_pointer()))
        clamp = b.icmp_unsigned("!=", b.and_(flags, i64(1)), i64(0))
        accumulate = b.icmp_unsigned("!=", b.and_(flags, i64(2)), i64(0))
        zero = b.icmp_unsigned("!=", b.and_(flags, i64(4)), i64(0))
        kept = slots.new(i64, i64(0))
        row = slots.new(i64)

        def locate(u, single=False):
            """The row of out update u goes to (-1: dropped), into ``row``; ``single``:
            for one indexed axis."""
            b.store(i64(0), row)

            def axis(j):
                with b.if_then(b.icmp_signed(">=", b.load(row), i64(0))):
                    raw = b.load(at(idx_p, it, (u, s_idx_n), (j, s_idx_k)))
                    i = (b.sext(raw, i64) if index.kind == "i" and index.itemsize < 8 else
                         b.zext(raw, i64) if index.itemsize < 8 else raw)
                    d = b.load(at(dims_p, i64, (j, s_dims)))
                    with b.if_else(clamp) as (then, otherwise):
                        with then:
                            top = b.sub(d, i64(1))
                            top = b.select(b.icmp_signed(">", top, i64(0)), top, i64(0))
                            low = b.select(b.icmp_signed(">", i, i64(0)), i, i64(0))
                            clamped = b.select(b.icmp_signed("<", low, top), low, top)
                            b.store(b.add(b.mul(b.load(row), d), clamped), row)
                        with otherwise:
                            outside = b.or_(b.icmp_signed("<", i, i64(0)),
                                            b.icmp_signed(">=", i, d))
                            b.store(b.select(outside, i64(-1),
                                             b.add(b.mul(b.load(row), d), i)), row)
            if single:
                axis(i64(0))
            else:
                loop(k_, axis)

        def add_update(target, u):  # out[target, :] += upd[u, :]
            def column(c):
                cell = at(out_p, vt, (target, s_out_r), (c, s_out_c))
                update = b.load(at(upd_p, vt, (u, s_upd_n), (c, s_upd_c)))
                add = b.fadd if value.kind == "f" else b.add
                b.store(add(b.load(cell), update), cell)
            loop(c_, column)

        def direct():  # one pass, each update added where it goes
            def scatter(u):
                locate(u)
                target = b.load(row)
                with b.if_then(b.icmp_signed(">=", target, i64(0))):
                    add_update(target, u)
            loop(n_, scatter)

        def direct_rows(columns: int):
            """``direct`` for one indexed axis and rows of ``columns`` elements: the row
            being added to stays in registers while consecutive updates go to it (the
            same additions in the same order, without a store and load between them)."""
            add = b.fadd if value.kind == "f" else b.add
            current = slots.new(i64, i64(-1))
            sums = [slots.new(vt) for _ in range(columns)]

            def cell(target, c):
                return at(out_p, vt, (target, s_out_r), (i64(c), s_out_c))

            def write_back():
                target = b.load(current)
                with b.if_then(b.icmp_signed(">=", target, i64(0))):
                    for c, total in enumerate(sums):
                        b.store(b.load(total), cell(target, c))

            def scatter(u):
                locate(u, single=True)
                target = b.load(row)
                with b.if_then(b.icmp_signed(">=", target, i64(0))):
                    with b.if_then(b.icmp_signed("!=", target, b.load(current))):
                        write_back()
                        b.store(target, current)
                        for c, total in enumerate(sums):
                            b.store(b.load(cell(target, c)), total)
                    for c, total in enumerate(sums):
                        update = b.load(at(upd_p, vt, (u, s_upd_n), (i64(c), s_upd_c)))
                        b.store(add(b.load(total), update), total)
            loop(n_, scatter)
            write_back()

        def one_pass(columns: int = 1):  # direct, rows of up to four elements by name
            if columns > 4:
                direct()
                return
            known = b.and_(b.icmp_signed("==", k_, i64(1)),
                           b.icmp_signed("==", c_, i64(columns)))
            with b.if_else(known) as (then, otherwise):
                with then:
                    direct_rows(columns)
                with otherwise:
                    one_pass(columns + 1)

        def through_rows():  # the rows first: their number decides how floats are summed
            rows = b.bitcast(b.call(malloc, [b.mul(b.add(n_, i64(1)), i64(8))]),
                             i64.as_pointer())

            def find_row(u):
                locate(u)
                found = b.load(row)
                b.store(found, b.gep(rows, [u]))
                with b.if_then(b.icmp_signed(">=", found, i64(0))):
                    b.store(b.add(b.load(kept), i64(1)), kept)
            loop(n_, find_row)
            summed(rows)
            b.call(free, [b.bitcast(rows, i8p)])

        def summed(rows):
            size = b.mul(r_, c_)
            many = b.icmp_signed(">=", b.mul(b.mul(i64(8), b.load(kept)), c_), size)
            def sums_in_float64():  # NumPy's bincount: float64 sums per position, then added
                slot = b.bitcast(b.call(malloc, [b.mul(b.add(r_, i64(1)), i64(8))]),
                                 i64.as_pointer())
                loop(r_, lambda q: b.store(i64(-1), b.gep(slot, [q])))
                used = slots.new(i64, i64(0))

                def number(u):
                    target = b.load(b.gep(rows, [u]))
                    with b.if_then(b.icmp_signed(">=", target, i64(0))):
                        place = b.gep(slot, [target])
                        with b.if_then(b.icmp_signed("<", b.load(place), i64(0))):
                            b.store(b.load(used), place)
                            b.store(b.add(b.load(used), i64(1)), used)
                loop(n_, number)
                acc = b.bitcast(b.call(calloc, [b.add(b.mul(b.load(used), c_), i64(1)),
                                                i64(8)]), f64.as_pointer())

                def gather(u):
                    target = b.load(b.gep(rows, [u]))
                    with b.if_then(b.icmp_signed(">=", target, i64(0))):
                        base = b.mul(b.load(b.gep(slot, [target])), c_)

                        def column(c):
                            cell = b.gep(acc, [b.add(base, c)])
                            update = b.load(at(upd_p, vt, (u, s_upd_n), (c, s_upd_c)))
                            if value.itemsize < 8:
                                update = b.fpext(update, f64)
                            b.store(b.fadd(b.load(cell), update), cell)
                        loop(c_, column)
                loop(n_, gather)

                def total(s_, c):  # the float64 sum in the target's dtype
                    v = b.load(b.gep(acc, [b.add(b.mul(s_, c_), c)]))
                    return b.fptrunc(v, vt) if value.itemsize < 8 else v

                def add_row(target, s_):
                    def column(c):
                        cell = at(out_p, vt, (target, s_out_r), (c, s_out_c))
                        b.store(b.fadd(b.load(cell), total(s_, c)), cell)
                    loop(c_, column)

                with b.if_else(zero) as (zeros, filled):
                    with zeros:  # only the rows added to (0.0 + 0.0 leaves the others)
                        def first_time(u):
                            target = b.load(b.gep(rows, [u]))
                            with b.if_then(b.icmp_signed(">=", target, i64(0))):
                                place = b.gep(slot, [target])
                                s_ = b.load(place)
                                with b.if_then(b.icmp_signed(">=", s_, i64(0))):
                                    b.store(i64(-1), place)
                                    add_row(target, s_)
                        loop(n_, first_time)
                    with filled:  # every row: 0 added where nothing was (-0.0 becomes 0.0)
                        def every(q):
                            s_ = b.load(b.gep(slot, [q]))
                            with b.if_else(b.icmp_signed(">=", s_, i64(0))) as (yes, no):
                                with yes:
                                    add_row(q, s_)
                                with no:
                                    def column(c):
                                        cell = at(out_p, vt, (q, s_out_r), (c, s_out_c))
                                        b.store(b.fadd(b.load(cell), vt(0.0)), cell)
                                    loop(c_, column)
                        loop(r_, every)
                b.call(free, [b.bitcast(acc, i8p)])
                b.call(free, [b.bitcast(slot, i8p)])

            def in_order():  # in the target's dtype
                def scatter(u):
                    target = b.load(b.gep(rows, [u]))
                    with b.if_then(b.icmp_signed(">=", target, i64(0))):
                        add_update(target, u)
                loop(n_, scatter)

            with b.if_else(b.and_(accumulate, many)) as (then, otherwise):
                with then:
                    sums_in_float64()
                with otherwise:
                    in_order()

        # Zeros receiving float64 updates: NumPy's float64 sum per position, added to
        # +0.0, has the bits of the updates added in order to the zeros themselves.
        # Integers wrap in either order.  Only narrower floats (summed in float64) and
        # filled targets (the sum added to them at the end) need the rows first.
        if value.kind != "f":
            one_pass()
        elif value.itemsize == 8:
            with b.if_else(zero) as (then, otherwise):
                with then:
                    one_pass()
                with otherwise:
                    through_rows()
        else:
            through_rows()

    loop(outer, outer_body)
    b.ret_void()
    slots.close(entry)
    del i1
    return str(module)


#: the scatter-add loops made in this process, by (value dtype, index dtype)
_scatter_kernels: dict = {}


def scatter_add_kernel(value, index, directory: str):
    """The ``UfuncKernel`` of the scatter-add loop (``_scatter_add_ir``) for targets of
    dtype ``value`` and indices of dtype ``index``, or None for dtypes it does not take."""
    value, index = np.dtype(value), np.dtype(index)
    key = (value, index)
    kernel = _scatter_kernels.get(key)
    if kernel is not None:
        return kernel
    if value.kind not in "iuf" or value not in _DTYPES or index.kind not in "iu":
        return None
    start = time.perf_counter()
    program = f"scatter-add of {value.name} at {index.name} indices"
    dtypes = [np.dtype(np.int64), index, value, np.dtype(np.int64), value]
    kernel = _ready("sk_", program, lambda symbol: _scatter_add_ir(symbol, value, index),
                    program, dtypes, 4, "(k),(n,k),(n,c),()->(r,c)", directory, start)
    _scatter_kernels[key] = kernel
    return kernel


def _core_dimensions(inputs: list, nout: int, nred: int, ndim: int) -> tuple:
    """The gufunc signature of a region over ``ndim`` core axes (axis ``d`` named
    ``n{d}``; an input's axis of one element broadcast there ``b{k}_{d}``), and for each
    operand its core axes ``[(axis d or None, name)]``; raise ``_Untranslatable`` where
    no input spans an axis (NumPy could not tell its size)."""
    operand_core: list = []
    parts = []
    for k, (_, core) in enumerate(inputs):
        dims = [(d, f"n{d}") if kind == "span" else (None, f"b{k}_{d}")
                for d, kind in enumerate(core) if kind is not None]
        operand_core.append(dims)
        parts.append("(" + ",".join(nm for _, nm in dims) + ")")
    spanned = {d for dims in operand_core for d, _ in dims if d is not None}
    if spanned != set(range(ndim)):
        raise _Untranslatable("a reduced axis no input spans")
    full = [(d, f"n{d}") for d in range(ndim)]
    operand_core += [full] * nout + [[]] * nred
    signature = (",".join(parts) + "->" + ",".join(
        ["(" + ",".join(nm for _, nm in full) + ")"] * nout + ["()"] * nred))
    return signature, operand_core


def _selects(parsed: list) -> bool:
    """Whether a parsed program's loop is strict: two selects (``a if c else b``) test one
    condition.  LLVM may then compute a value the second select picks from as if the first
    had chosen by the condition (``sin(s) / s`` with ``s = x == 0 ? 1 : x`` computed at
    ``x`` itself in ``x == 0 ? series : sin(s) / s``), raising flags NumPy's calls do not.
    A select alone (``maximum``, ``where``) leaves nothing to substitute, and its loop stays
    vectorisable."""
    tests = [ast.dump(node.test) for _, _, tree in parsed for node in ast.walk(tree)
             if isinstance(node, ast.IfExp)]
    return len(tests) != len(set(tests))


def _strict(text: str) -> str:
    """The IR ``text`` with its functions and calls marked ``strictfp`` (which llvmlite's
    builder does not know): LLVM then keeps the floating-point flags of the program."""
    lines = []
    for line in text.splitlines():
        if (line.startswith("define ") and "pairwise" not in line) or " call " in line:
            line += " strictfp"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _type_suffix(t) -> str:
    """LLVM's name of an IR type in an overloaded intrinsic's name (``f64``, ``i32``)."""
    text = str(t)
    return {"double": "f64", "float": "f32"}.get(text, text)


def _libm_program(parsed: list) -> bool:
    """Whether a parsed program calls a libm function."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in _LIBM for _, _, tree in parsed for node in ast.walk(tree))


#: a program of this many statements or more calling libm functions computes several
#: elements at once in its contiguous loop (see ``_loop_ir``)
_LANE_STATEMENTS = 64


def _parse(expr: str):
    try:
        return ast.parse(expr, mode="eval").body
    except SyntaxError as error:
        raise _Untranslatable(expr) from error


# ------------------------------------------------------------------------------------------
# The engine, the disk cache, the ufuncs
# ------------------------------------------------------------------------------------------

_lock = threading.RLock()
#: a loop calling libm functions is vectorised when its IR has fewer lines than this
_VECTORISED_LIBM_LINES = 400

#: the functions a module declares
_DECLARATION = re.compile(r'^declare [^@]*@"?([\w.]+)', re.M)


def _calls_libm(text: str) -> bool:
    """Whether the IR ``text`` calls a libm function (not an intrinsic or the allocator)."""
    return any(not name.startswith("llvm.") and name not in ("malloc", "calloc", "free")
               for name in _DECLARATION.findall(text))
_MAGIC = b"functrans-llvm-object-1\n"


class _Engine:
    """The process-wide LLVM state: the host's target machine and one MCJIT engine that
    every kernel's object code is loaded into (kept for the life of the process)."""

    def __init__(self):
        import llvmlite
        import llvmlite.binding as llvm
        self.llvm = llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.triple = llvm.get_process_triple()
        cpu = llvm.get_host_cpu_name()
        features = llvm.get_host_cpu_features().flatten()
        target = llvm.Target.from_triple(self.triple)
        # With the system's linker: position-independent code of the small code model,
        # which the linker makes a shared library that this process and later ones load
        # with the system's loader (``_link``, ``_load_shared``).  Without one, LLVM's
        # engine loads the object code itself, and it maps each section apart: in a process
        # whose address space has grown (a test suite, a notebook that loaded torch and
        # dask) a loop's code and its constants can land more than 2 GB apart, beyond the
        # small code model's 32-bit offsets (an assertion in LLVM's RuntimeDyldELF aborts
        # the process); the large code model's 64-bit addresses reach anywhere.
        linked = _linker() is not None
        model = "default" if linked else "large"
        self.machine = target.create_target_machine(
            cpu=cpu, features=features, opt=2, reloc="pic" if linked else "static",
            codemodel=model)
        self.identity = (f"{llvmlite.__version__}\n{self.triple}\n{cpu}\n{features}\n"
                         + ("pic\n" if linked else "static large\n"))
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.machine)
        self.objects: list = []  # what the engine holds, kept alive

    def compile(self, text: str, level: int = 2) -> bytes:
        llvm = self.llvm
        module = llvm.parse_assembly(text)
        module.triple = self.triple
        module.data_layout = str(self.machine.target_data)
        module.verify()
        # The loop vectoriser replicates scalar libm calls in a wide body: for a short
        # one that pays (the calls of neighbouring elements overlap in the processor), for
        # a long one it costs seconds of code generation.
        vectorize = not _calls_libm(text) or text.count("\n") < _VECTORISED_LIBM_LINES
        if hasattr(llvm, "create_pass_builder"):  # llvmlite 0.44 on: LLVM's new passes
            options = llvm.create_pipeline_tuning_options(speed_level=level)
            options.loop_vectorization = vectorize
            options.slp_vectorization = True
            builder = llvm.create_pass_builder(self.machine, options)
            builder.getModulePassManager().run(module, builder)
        else:  # the legacy pass manager (llvmlite 0.43, numba 0.60's)
            manager_builder = llvm.create_pass_manager_builder()
            manager_builder.opt_level = level
            manager_builder.loop_vectorize = vectorize
            manager_builder.slp_vectorize = True
            manager = llvm.create_module_pass_manager()
            self.machine.add_analysis_passes(manager)
            manager_builder.populate(manager)
            manager.run(module)
        return self.machine.emit_object(module)

    def load(self, code: bytes, symbol: str) -> int:
        obj = self.llvm.ObjectFileRef.from_data(code)
        self.engine.add_object_file(obj)
        self.objects.append(obj)
        self.engine.finalize_object()
        address = self.engine.get_function_address(symbol)
        if not address:
            raise RuntimeError(f"llvm_kernels: {symbol} not in its object code")
        return address


_engine_instance: list = []


def _engine() -> _Engine:
    with _lock:
        if not _engine_instance:
            _engine_instance.append(_Engine())
        return _engine_instance[0]


def _ufunc_api():
    """NumPy's ufunc C-API table (a ``void **``)."""
    import ctypes
    from numpy._core import _multiarray_umath as umath  # NumPy >= 2.0 (the floor)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return ctypes.cast(get(umath._UFUNC_API, None), ctypes.POINTER(ctypes.c_void_p))


#: PyUFunc_FromFuncAndData(funcs, data, types, ntypes, nin, nout, identity, name, doc, unused)
_FROM_FUNC_AND_DATA = 1


#: PyUFunc_FromFuncAndDataAndSignature(the same..., signature)
_FROM_FUNC_AND_DATA_AND_SIGNATURE = 31


def _make_ufunc(address: int, dtypes: list, nin: int, nout: int, name: bytes, doc: bytes,
                core: str | None = None):
    """A ``numpy.ufunc`` with one loop (the function at ``address``) for ``dtypes`` (a
    generalised ufunc of signature ``core`` where given), and the ctypes objects NumPy
    keeps pointers into (to keep alive with it)."""
    import ctypes
    table = _ufunc_api()
    c = ctypes
    arguments = [c.c_void_p, c.c_void_p, c.c_void_p, c.c_int, c.c_int, c.c_int, c.c_int,
                 c.c_void_p, c.c_void_p, c.c_int]
    signature_buffer = None
    if core is not None:
        signature_buffer = ctypes.create_string_buffer(core.encode())
        create = ctypes.PYFUNCTYPE(c.py_object, *arguments, c.c_void_p)(
            table[_FROM_FUNC_AND_DATA_AND_SIGNATURE])
    else:
        create = ctypes.PYFUNCTYPE(c.py_object, *arguments)(table[_FROM_FUNC_AND_DATA])
    funcs = (ctypes.c_void_p * 1)(address)
    data = (ctypes.c_void_p * 1)(None)
    types = (ctypes.c_char * len(dtypes))(*[bytes([np.dtype(d).num]) for d in dtypes])
    name_buffer = ctypes.create_string_buffer(name)
    doc_buffer = ctypes.create_string_buffer(doc)
    fields = [ctypes.addressof(funcs), ctypes.addressof(data), ctypes.addressof(types),
              1, nin, nout, -1, ctypes.addressof(name_buffer), ctypes.addressof(doc_buffer), 0]
    if signature_buffer is not None:
        fields.append(ctypes.addressof(signature_buffer))
    ufunc = create(*fields)
    return ufunc, (funcs, data, types, name_buffer, doc_buffer, signature_buffer)


class UfuncKernel:
    """A fused region compiled by LLVM: ``ufunc`` (nin inputs, nout outputs; a tuple of
    results where nout > 1), ``program`` (the scalar program it computes, as text), ``ir``
    (the LLVM IR it was compiled from), ``path`` (its object code's file), ``loaded``
    (True where the object code came from the disk cache), ``seconds`` (making it ready)."""

    __slots__ = ("ufunc", "program", "path", "loaded", "seconds", "_keep", "_ir", "_build",
                 "_symbol")
    ufunc: np.ufunc
    program: str
    path: str
    loaded: bool
    seconds: float
    _keep: tuple
    _ir: str | None
    _build: Callable[[str], str]
    _symbol: str

    @property
    def ir(self) -> str:
        if self._ir is None:  # loaded from the disk cache: written again on demand
            self._ir = self._build(self._symbol)
        return self._ir

    def __repr__(self):
        return f"UfuncKernel({self.ufunc.__name__}, {self.path})"


_kernels: dict = {}  # the digest keying a kernel (see _ready) -> its UfuncKernel
#: kernels made ready in this process: loaded from the disk cache, or compiled
counts = {"loaded": 0, "compiled": 0}


def _program_text(inputs, statements, outputs) -> str:
    lines = [f"x{k}: {np.dtype(d).name}{note}" for k, (d, note) in enumerate(inputs)]
    lines += [f"{name} = {expr}" for name, _, expr in statements]
    lines += [f"out{j} = {name}" for j, (name, _) in enumerate(outputs)]
    return "\n".join(lines)


def _read_bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _read_object(path: str):
    """The object code in ``path`` when the file is whole (its checksum), else None."""
    blob = _read_bytes(path)
    if blob is None:
        return None
    head = len(_MAGIC) + 32
    if not blob.startswith(_MAGIC) or len(blob) <= head:
        return None
    code = blob[head:]
    if hashlib.sha256(code).digest() != blob[len(_MAGIC):head]:
        return None
    return code


def _write_object(path: str, code: bytes) -> None:
    _write_atomically(path, _MAGIC + hashlib.sha256(code).digest() + code)


def _write_atomically(path: str, blob: bytes) -> None:
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temporary, "wb") as f:
            f.write(blob)
        os.replace(temporary, path)
    except OSError:  # a read-only cache: the kernel still works in this process
        try:
            os.remove(temporary)
        except OSError:
            pass


def ufunc_kernel(inputs: list, statements: list, outputs: list, directory: str):
    """The ``UfuncKernel`` computing the scalar program (see ``_loop_ir``) for every
    element, its object code loaded from or cached in ``directory``; None where some
    expression has no exact translation."""
    start = time.perf_counter()
    inputs = [(np.dtype(d), bool(s)) for d, s in inputs]
    outputs = [(name, np.dtype(d)) for name, d in outputs]
    if any(d not in _DTYPES for d, _ in inputs) or any(d not in _DTYPES for _, d in outputs):
        return None
    program = _program_text([(d, " (one element)" if s else "") for d, s in inputs],
                            statements, outputs)
    key = "ufunc\n" + program + repr([np.dtype(d).name for _, d, _ in statements])
    dtypes = [d for d, _ in inputs] + [d for _, d in outputs]
    return _ready("fk_", key, lambda symbol: _loop_ir(symbol, inputs, statements, outputs),
                  program, dtypes, len(inputs), None, directory, start)


def gufunc_kernel(inputs: list, statements: list, outputs: list, reductions: list,
                  ndim: int, directory: str):
    """The ``UfuncKernel`` (a generalised ufunc over the ``ndim`` trailing axes a region
    reduces) computing the scalar program (see ``_reduction_ir``): its full outputs and
    its reductions; None where some expression has no exact translation."""
    start = time.perf_counter()
    inputs = [(np.dtype(d), tuple(core)) for d, core in inputs]
    outputs = [(name, np.dtype(d)) for name, d in outputs]
    reductions = [(kind, name, np.dtype(d)) for kind, name, d in reductions]
    dtypes = ([d for d, _ in inputs] + [d for _, d in outputs]
              + [d for _, _, d in reductions])
    if any(d not in _DTYPES for d in dtypes) or ndim < 1:
        return None
    try:
        signature, _ = _core_dimensions(inputs, len(outputs), len(reductions), ndim)
    except _Untranslatable:
        return None
    program = _program_text(
        [(d, " at (" + ", ".join("1" if c == "broadcast" else f"n{a}" for a, c in
                                 enumerate(core) if c is not None) + ")")
         for d, core in inputs], statements, outputs)
    axes = ", ".join(f"n{a}" for a in range(ndim))
    program += "".join(f"\nred{j} = {kind}({name}) over ({axes})"
                       for j, (kind, name, _) in enumerate(reductions))
    key = ("gufunc\n" + program + repr([np.dtype(d).name for _, d, _ in statements])
           + repr([d.name for _, _, d in reductions]))

    def build(symbol):
        return _reduction_ir(symbol, inputs, statements, outputs, reductions, ndim)[0]
    return _ready("gk_", key, build, program, dtypes, len(inputs), signature, directory,
                  start)


_source_digest: list = []


def _translator_digest() -> str:
    """The hash of this module's source: a cached kernel was made by today's translation."""
    if not _source_digest:
        with open(__file__, "rb") as f:
            _source_digest.append(hashlib.sha256(f.read()).hexdigest())
    return _source_digest[0]


# ------------------------------------------------------------------------------------------
# Shared libraries: warm processes without LLVM
# ------------------------------------------------------------------------------------------
#
# Loading llvmlite costs a process 30-50 ms (LLVM's shared library and its start-up), more
# than tracing and compiling a program whose kernels are all cached.  So where the system
# has a linker (``ld``, on Linux), each kernel's object code is also linked into a shared
# library beside it, ``lk_<digest>.so`` with its checksum appended (which the dynamic
# loader ignores), and a process loads that with ``ctypes`` instead.  The digest needs the
# engine's identity (llvmlite's version, the host's CPU and features, as LLVM names them):
# a file ``host_<key>`` keeps it under a key read without LLVM (the processor's model and
# flags, the machine, llvmlite's files), written by the first process that loads LLVM.
# Anything missing, corrupt or refused by the loader falls back to the engine.

_SHARED_MAGIC = b"functrans-llvm-shared-1\n"
_host: list = []  # this process's host key, once read


def _host_key() -> str:
    """What names the host without LLVM: the platform, the processor's model and flags
    (Linux's /proc/cpuinfo), llvmlite's files (its version) and whether the system's linker
    is used; "" where unknown."""
    if not _host:
        import importlib.util
        import platform
        import sys
        # with or without the linker: the engine's code model differs (``_Engine``)
        parts = [sys.platform, platform.machine(), "linked" if _linker() else "unlinked"]
        try:
            with open("/proc/cpuinfo") as f:
                seen = set()
                for line in f:
                    field = line.split(":", 1)[0].strip()
                    if field in ("model name", "flags", "vendor_id") and field not in seen:
                        seen.add(field)
                        parts.append(line.strip())
                        if len(seen) == 3:  # the first processor's: enough
                            break
            spec = importlib.util.find_spec("llvmlite")
            folder = os.path.dirname(spec.origin) if spec and spec.origin else None
            if folder is None:
                raise OSError("llvmlite")
            for root in (folder, os.path.join(folder, "binding")):
                for entry in sorted(os.scandir(root), key=lambda e: e.name):
                    if entry.is_file() and entry.name.endswith((".py", ".so", ".dylib")):
                        stat = entry.stat()
                        parts.append(f"{entry.name} {stat.st_size} {stat.st_mtime_ns}")
            _host.append(hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
                         if len(seen) == 3 else "")
        except OSError:
            _host.append("")
    return _host[0]


def _known_identity(directory: str) -> str | None:
    """The engine's identity another process recorded for this host, or None."""
    key = _host_key()
    if not key:
        return None
    try:
        with open(os.path.join(directory, f"host_{key}"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    return text if text.endswith("\n") else None  # whole: written atomically, ends so


def _record_identity(directory: str, identity: str) -> None:
    key = _host_key()
    if key and _known_identity(directory) != identity:
        _write_atomically(os.path.join(directory, f"host_{key}"), identity.encode())


def _linker() -> str | None:
    """The system's linker making shared libraries of object code, or None."""
    import shutil
    import sys
    if not sys.platform.startswith("linux") or os.environ.get("FUNCTRANS_NO_LINKER"):
        return None
    return shutil.which("ld")


def _link(path: str, code: bytes) -> None:
    """Link object code into the shared library ``path`` (with its checksum appended);
    nothing where there is no linker or it fails."""
    import subprocess
    linker = _linker()
    if linker is None:
        return
    stem = f"{path}.{os.getpid()}.{threading.get_ident()}"
    try:
        with open(stem + ".o", "wb") as f:
            f.write(code)
        done = subprocess.run([linker, "-shared", "-o", stem + ".tmp", stem + ".o"],
                              capture_output=True, timeout=60)
        if done.returncode == 0:
            with open(stem + ".tmp", "rb") as f:
                library = f.read()
            _write_atomically(path, library + _SHARED_MAGIC + hashlib.sha256(library).digest())
    except (OSError, subprocess.SubprocessError):
        pass
    finally:
        for leftover in (stem + ".o", stem + ".tmp"):
            try:
                os.remove(leftover)
            except OSError:
                pass


def _load_shared(path: str, symbol: str):
    """The address of ``symbol`` in the shared library ``path`` and the library (to keep
    loaded), or None where the file is missing, not whole, or refused."""
    import ctypes
    blob = _read_bytes(path)
    if blob is None:
        return None
    tail = len(_SHARED_MAGIC) + 32
    library = blob[:-tail]
    if (len(blob) <= tail or blob[-tail:-32] != _SHARED_MAGIC
            or hashlib.sha256(library).digest() != blob[-32:]):
        return None
    try:
        handle = ctypes.CDLL(path)
        return ctypes.cast(getattr(handle, symbol), ctypes.c_void_p).value, handle
    except (OSError, AttributeError):
        return None


def _ready(prefix, key, build, program, dtypes, nin, signature, directory, start):
    """The kernel for ``key`` (what determines its IR: the scalar program, with dtypes),
    from this process's kernels, the disk cache (its shared library, loaded without LLVM,
    else its object code), or compiled (``build(symbol)`` writes its IR); None where
    ``build`` finds no exact translation.  The cache is keyed by ``key``, this module's
    source, llvmlite's version and the host (triple, CPU and its features), so that a warm
    process never writes the IR of a kernel it loads."""
    identity = _known_identity(directory) if not _engine_instance else None
    if identity is None:
        identity = _engine().identity
        _record_identity(directory, identity)
    digest = hashlib.sha256((identity + _translator_digest() + key).encode()
                            ).hexdigest()[:32]
    symbol = prefix + digest[:24]
    with _lock:  # one compilation and one load per kernel and process
        kernel = _kernels.get(digest)
        if kernel is not None:
            return kernel
        path = os.path.join(directory, f"lk_{digest}.o")
        text = None
        shared = _load_shared(path[:-2] + ".so", symbol)
        if shared is not None:
            address, library = shared
            loaded = True
        else:
            engine = _engine()
            if engine.identity != identity:  # a stale record: the digest LLVM's names give
                return _ready(prefix, key, build, program, dtypes, nin, signature,
                              directory, start)
            code = _read_object(path)
            loaded = code is not None
            if code is None:
                try:
                    text = build(symbol)
                except _Untranslatable:
                    return None
                # -O3 for the generalised ufuncs: it takes the loop-invariant tests out
                # of their inner loops (short rows: 40% faster), for a third more compile
                # time
                code = engine.compile(text, 2 if prefix == "fk_" else 3)
                _write_object(path, code)
            _link(path[:-2] + ".so", code)
            # the system's loader where the linker made a library (as a warm process does),
            # else the engine
            shared = _load_shared(path[:-2] + ".so", symbol)
            address, library = shared if shared is not None else (engine.load(code, symbol),
                                                                  None)
        ufunc, keep = _make_ufunc(address, dtypes, nin, len(dtypes) - nin,
                                  b"fused_" + symbol[3:11].encode(),
                                  b"A fused region compiled by functrans.jit.", signature)
        kernel = UfuncKernel()
        kernel.ufunc, kernel._keep = ufunc, keep + (library,)
        kernel.program, kernel.path = program, path
        kernel._ir, kernel._build, kernel._symbol = text, build, symbol
        kernel.loaded = loaded
        kernel.seconds = time.perf_counter() - start
        counts["loaded" if loaded else "compiled"] += 1
        _kernels[digest] = kernel
        return kernel
