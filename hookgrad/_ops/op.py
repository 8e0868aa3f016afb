"""One row of the op table: an op's JAX forward, its node and what it saves.

``Op.forward_fn`` is the jit-cached forward per static arguments; ``dispatch.apply`` runs
it through the stages (``stages/``); the node it records is ``op_node.OpNode``.
"""
import functools
import weakref

from .. import _dtype
from . import lazy as _lazy, tiered
from .op_node import ALL, expose_saved, node_class


class Op:
    """One op-table entry.

    Args:
        fwd: ``fwd(*args, **statics)``, pure JAX; args are arrays or Python scalars.
        node: the torch name of the node it records (``MulBackward0``).
        save: ``ALL``; ``()``: nothing (linear ops: backward needs only shapes); ``OUT``;
            or ``{i: (j, ...)}``: the gradient of argument i needs arguments j, ...
            (PyTorch's conditional saving, visible to pack hooks).
        bwd: for ``save=OUT``: ``bwd(out, grad, **statics) -> grad_input``; ``out`` is
            the tuple of the outputs PyTorch saves (``result``, ``result1``, ... in
            ``names``) for an op that saves more than its first (linalg_eig's).
        scalar_edges: a Python-number operand still gets a ``(None, 0)`` edge (torch wraps
            numbers of binary arithmetic into tensors): True for the first two arguments,
            or the positions where a non-Tensor (a number, None for an absent optional
            Tensor, as conv's bias) gets one.
        jit: False for ops that cannot be jitted (data-dependent shapes, transfers).
        nondiff: positions of Tensor arguments that are not differentiable inputs (indices,
            masks, conditions): torch gives them no ``next_functions`` edge.
        names: what PyTorch saves, by its names and in its pack order:
            ``"self other -> other self"`` (the arguments' schema names, then the saved
            values; see ``saved_names``). Read when ``grad_fn._saved_<name>`` is asked for
            and when saved-tensor hooks pack; None: PyTorch's unary convention.
        promotes: narrow JAX's 64-bit promotions of integers to the default dtype
            (``_dtype.pytorch_result_dtype``); False for vjps.
        extras: ``extras(*args, **statics) -> (array, ...)``: values PyTorch's kernel
            returns beside the result and saves (layer_norm's mean and rstd, nll_loss's
            total_weight), ``result1``, ``result2``, ... in ``names``. The backward
            does not need them (JAX's vjp recomputes what it needs): they are computed
            only for saved-tensor hooks to pack and for ``grad_fn._saved_result1``.
        positions: for an op whose statics hold positions (a select's index, a slice's
            start), ``positions(shape, **statics) -> (fwd, fixed statics, positions)`` or
            None (``shape``: the first argument's): the forward runs as ``fwd(*args,
            *positions, **fixed)``, one program for every position (a loop writing row
            ``i`` compiles once), where a static would compile one per value. The node
            keeps all statics (``_saved_index``); ``fwd`` does no dtype promotion.
    """

    __slots__ = ("name", "fwd", "node", "save", "bwd", "scalar_edges", "jit", "nondiff",
                 "names", "extras", "pack_order", "positions", "_spec", "_fwd_cache", "_vjp_cache",
                 "_node_cls", "_avals", "_constant_cache", "grad_of",
                 "__weakref__")

    def __init__(self, name, fwd, node, save=ALL, bwd=None, scalar_edges=False, jit=True,
                 nondiff=(), names=None, promotes=True, extras=None, pack_order=None, positions=None):
        self.name, self.node, self.save = name, node, save
        self.positions = positions
        self.extras = extras
        # a variadic op's pack order, ``pack_order(number of arguments) -> positions``
        # (``_foreach_mul``'s packs every ``other`` before every ``self``); else ``names``
        self.pack_order = pack_order
        # a vjp's results have its primals' dtypes already (promotes=False): narrowing them
        # would turn a float64 input's gradient into float32 behind a cast to float32
        self.fwd = _dtype.pytorch_result_dtype(fwd) if promotes else fwd
        self.bwd, self.jit = bwd, jit
        self.scalar_edges = frozenset((0, 1) if scalar_edges is True else scalar_edges or ())
        self.nondiff = frozenset(nondiff)
        self.names, self._spec = names, None
        self._fwd_cache = {}
        self._vjp_cache = {}
        self._constant_cache = {}  # create_graph: which vjp results need no graph
        self._avals = {}  # argument types -> output type, once run (_ops/lazy.py)
        self._node_cls = None if node is None else node_class(node)
        # a node's derivative (``op_node.vjp_op``): the forward op and the vjp's cache key
        # (statics, layout of what was saved, wanted positions), which FLOP counting reads
        self.grad_of = None
        _LIVE.add(self)
        expose_saved(self)  # its nodes' ``_saved_*`` attributes

    def __repr__(self):
        return f"Op({self.name})"

    def forward_fn(self, key):
        fn = self._fwd_cache.get(key)
        if fn is None:
            if self.positions is not None and self.jit:
                fn = _AtPositions(self, key)
            else:
                # NOTE: a new partial even without statics: jax.jit caches traces per
                # function object, and _forget_programs must get a fresh trace
                f = functools.partial(self.fwd, **dict(key))
                fn = tiered.jit(f) if self.jit else f
            self._fwd_cache[key] = fn
        return fn

    def shared_program(self, fwd, fixed, donate=False):
        """The program of ``fwd`` with the statics ``fixed`` that every position shares
        (``positions``); ``donate``: its first argument's buffer goes to the result."""
        key = (fwd, donate, *fixed.items())
        program = self._fwd_cache.get(key)
        if program is None:
            program = self._fwd_cache[key] = tiered.jit(
                functools.partial(fwd, **fixed), **({"donate_argnums": 0} if donate else {}))
        return program


class _AtPositions:
    """The forward of an op with ``positions`` for one key: per shape of its first
    argument, the program every position shares and this call's positions, appended as
    Python ints (traced: any value runs the same program). A forward segment
    (``_ops/lazy.py``) composes ``fwd`` with ``fixed`` and passes the positions likewise."""
    __slots__ = ("op", "key", "_placed", "__weakref__")  # jax.eval_shape refers weakly

    def __init__(self, op, key):
        self.op, self.key, self._placed = op, key, {}

    def place(self, shape):
        """``(fwd, fixed statics, positions)`` for a first argument of ``shape``, or None:
        the op's own program with every static."""
        found = self._placed.get(shape, False)
        if found is False:
            found = self._placed[shape] = self.op.positions(shape, **dict(self.key))
        return found

    def __call__(self, *args):
        found = self.place(args[0].shape)
        if found is None:
            return self._static()(*args)
        fwd, fixed, where = found
        return self.op.shared_program(fwd, fixed)(*args, *where)

    def donated(self, *args):
        """The call with its first argument's buffer given to the result (``apply``
        checks nothing else holds it)."""
        found = self.place(args[0].shape)
        if found is None:
            return self._static()(*args)
        fwd, fixed, where = found
        return self.op.shared_program(fwd, fixed, donate=True)(*args, *where)

    def _static(self):
        return self.op.shared_program(self.op.fwd, dict(self.key))


_LIVE = weakref.WeakSet()  # every Op, for forgetting traced programs


def _forget_programs():
    """After ``set_default_dtype``: an op's traced program narrows integer promotions to
    the default dtype it saw, so every op traces again."""
    for op in list(_LIVE):
        op._fwd_cache.clear()
        op._vjp_cache.clear()
        op._avals.clear()
    _lazy.forget()


_dtype.ON_DEFAULT_CHANGE.append(_forget_programs)
