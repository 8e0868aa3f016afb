"""Write docs/api_coverage.md: each public name of PyTorch's main namespaces, with its status
in hookgrad (implemented / differs, and how / missing) and hookgrad's own extra names; and
hookgrad/_tensor_missing.py, the ``torch.Tensor`` names hookgrad lacks (each becomes a
``_missing.Stub`` on ``hookgrad.Tensor``, which says so when read).

    python tools/api_coverage.py           # rewrite both
    python tools/api_coverage.py --check   # exit 1 if one is stale (tests/test_api_coverage.py)

The missing names are listed most used first, with how many libraries of tools/usage.py's
corpus use each (tools/usage_counts.json; rescan with ``python tools/usage.py``).

PyTorch's names come from the installed torch when it is the pinned version (TORCH_VERSION);
otherwise (no torch, another version) from the document itself, so the statuses are still
recomputed from hookgrad's namespaces and checked.
"""
import argparse
import importlib
import json
import os
import pkgutil
import re
import sys
import textwrap
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "api_coverage.md")
TENSOR_MISSING = os.path.join(ROOT, "hookgrad", "_tensor_missing.py")
USAGE = os.path.join(ROOT, "tools", "usage_counts.json")
TORCH_VERSION = "2.13.0"

# (PyTorch's namespace, hookgrad's)
NAMESPACES = [
    ("torch", "hookgrad"),
    ("torch.Tensor", "hookgrad.Tensor"),
    ("torch.nn", "hookgrad.nn"),
    ("torch.nn.functional", "hookgrad.nn.functional"),
    ("torch.autograd", "hookgrad.autograd"),
    ("torch.optim", "hookgrad.optim"),
    ("torch.optim.lr_scheduler", "hookgrad.optim.lr_scheduler"),
    ("torch.utils.data", "hookgrad.utils.data"),
    ("torch.distributions", "hookgrad.distributions"),
]

_RNG = "draws from one JAX PRNG key (`hookgrad.manual_seed`): the numbers differ from PyTorch's"
_EAGER = "eager only (data-dependent shape): raises inside `hookgrad.compile`"
_ONE_NODE = ("one node (named `SqueezeBackward4`, as PyTorch's last) where PyTorch records sort, "
             "gather and lerp nodes")
_NAN_INDEX = "where the result is a NaN, the index of another of the NaNs than PyTorch's"
_VIEW = "returns a copy: views do not share storage (docs/differences.md)"
_COMPLEX_VIEW = ("returns a copy: an in-place change of the result does not reach the complex "
                 "tensor (docs/differences.md; the `real`/`imag` setters do write)")
_CONJ = "conjugates at once: no lazy conjugate bit, so `is_conj()` is False (docs/differences.md)"
_CHALF = "exists; making a tensor of it raises: JAX has no complex32 (docs/differences.md)"
# Implemented names that behave differently, and how (docs/differences.md has
# the reasons). Keys are PyTorch's qualified names.
DIFFERS = {
    "torch.view_as_real": _COMPLEX_VIEW, "torch.view_as_complex": _COMPLEX_VIEW,
    "torch.real": _COMPLEX_VIEW, "torch.imag": _COMPLEX_VIEW,
    "torch.Tensor.real": _COMPLEX_VIEW, "torch.Tensor.imag": _COMPLEX_VIEW,
    "torch.conj": _CONJ, "torch.Tensor.conj": _CONJ, "torch.is_conj": _CONJ,
    "torch.Tensor.is_conj": _CONJ, "torch.resolve_conj": _CONJ,
    "torch.Tensor.resolve_conj": _CONJ,
    "torch.complex32": _CHALF, "torch.chalf": _CHALF, "torch.Tensor.chalf": _CHALF,
    "torch.from_numpy": "copies the array (no shared memory)",
    "torch.manual_seed": "seeds one JAX PRNG key; the numbers differ from PyTorch's",
    "torch.rand": _RNG, "torch.randn": _RNG, "torch.randint": _RNG, "torch.randperm": _RNG,
    "torch.rand_like": _RNG, "torch.randn_like": _RNG, "torch.randint_like": _RNG,
    "torch.nn.functional.dropout": _RNG, "torch.nn.Dropout": _RNG,
    "torch.autocast": "casts at each listed op's public function; bfloat16 products "
                      "accumulate as XLA does (docs/differences.md)",
    "torch.GradScaler": "inside `hookgrad.compile` a skipped step is a select "
                        "(docs/differences.md)",
    "torch.inference_mode": "the same as `no_grad` (no inference tensors)",
    "torch.distributed.init_process_group": "must run before anything starts JAX's "
                                            "backends (docs/differences.md)",
    "torch.channels_last": "accepted; XLA lays arrays out, so strides stay C order",
    "torch.channels_last_3d": "accepted; XLA lays arrays out, so strides stay C order",
    "torch.compile": "XLA compiles the step; `options` are XLA options; `mode='max-autotune'` "
                     "times XLA option sets; `mesh=`, `in_shardings=`, `param_shardings=` "
                     "shard the step",
    "torch.int64": "`int32` unless JAX's x64 mode is on",
    "torch.long": "`int32` unless JAX's x64 mode is on",
    "torch.float64": "needs JAX's x64 mode",
    "torch.double": "needs JAX's x64 mode",
    "torch.Tensor.contiguous": "returns the tensor itself (no strides)",
    "torch.Tensor.view": _VIEW, "torch.Tensor.reshape": _VIEW, "torch.Tensor.transpose": _VIEW,
    "torch.Tensor.permute": _VIEW, "torch.Tensor.expand": _VIEW, "torch.Tensor.select": _VIEW,
    "torch.Tensor.narrow": _VIEW, "torch.Tensor.squeeze": _VIEW, "torch.Tensor.unsqueeze": _VIEW,
    "torch.Tensor.t": _VIEW, "torch.Tensor.flatten": _VIEW, "torch.Tensor.diagonal": _VIEW,
    "torch.Tensor.__getitem__": "basic indexing returns a copy; boolean masks work eagerly only",
    "torch.nn.Embedding": "`sparse=True` gives dense gradients",
    "torch.nn.BatchNorm1d": "the running-stat update bumps their `_version`",
    "torch.nn.BatchNorm2d": "the running-stat update bumps their `_version`",
    "torch.nn.BatchNorm3d": "the running-stat update bumps their `_version`",
    "torch.nn.Module": "its `_parameters`/`_buffers`/`_modules` and hook dicts count their "
                       "changes (subclasses of dict/OrderedDict)",
    "torch.optim.Optimizer": "`state[p]` is a view of the optax state (assign to change it)",
    "torch.cuda": "a JAX GPU backend is `cuda`; without one, moving to it raises PyTorch's "
                  "CPU-build error",
    "torch.Generator": "a JAX PRNG key: different numbers for the same seed",
    "torch.load": "zip format only; tensors load as copies; 64-bit dtypes follow JAX's x64 mode",
    "torch.optim.SparseAdam": "takes dense gradients: the rows where one is not all zero "
                              "are the touched rows",
    "torch.optim.sparse_adam": "`SparseAdam` takes dense gradients (its rows not all zero "
                               "are the touched rows)",
    "torch.optim.swap_in_optimizer_params_and_state": "the step's new state is copied into "
                                                      "the given state dict's Tensors at "
                                                      "the block's end",
    "torch.optim.LBFGS": "`step(closure)` runs eagerly only (raises inside `hookgrad.compile`)",
    "torch.nn.RNN": "one `MkldnnRnnLayerBackward0` node per layer and direction",
    "torch.nn.LSTM": "one `MkldnnRnnLayerBackward0` node per layer and direction",
    "torch.nn.GRU": "one `MkldnnRnnLayerBackward0` node per layer and direction",
    "torch.distributions.Normal": _RNG, "torch.distributions.Categorical": _RNG,
    "torch.distributions.Bernoulli": _RNG, "torch.distributions.Uniform": _RNG,
    "torch.Tensor.stride": "a fresh C-contiguous tensor's strides",
    "torch.Tensor.is_contiguous": "always True (no strides)",
    "torch.svd_lowrank": _RNG, "torch.pca_lowrank": _RNG,
    "torch.mode": _NAN_INDEX, "torch.Tensor.mode": _NAN_INDEX,
    "torch.nanmedian": _NAN_INDEX, "torch.Tensor.nanmedian": _NAN_INDEX,
    "torch.topk": "always sorted; among ties, the first in stable order",
    "torch.Tensor.topk": "always sorted; among ties, the first in stable order",
    "torch.repeat_interleave": "tensor repeats: eager only unless `output_size` is given",
    "torch.allclose": "eager only (a Python bool)", "torch.equal": "eager only (a Python bool)",
    "torch.nn.EmbeddingBag": "offsets need values: a list/tuple inside `hookgrad.compile`",
    "torch.nn.functional.embedding_bag": "offsets need values: a list/tuple inside "
                                         "`hookgrad.compile`",
    "torch.nn.functional.interpolate": "no `mode='lanczos'`",
    "torch.nn.functional.gumbel_softmax": _RNG, "torch.nn.functional.rrelu": _RNG,
    "torch.nn.functional.rrelu_": _RNG, "torch.nn.functional.alpha_dropout": _RNG,
    "torch.nn.functional.feature_alpha_dropout": _RNG, "torch.nn.RReLU": _RNG,
    "torch.nn.AlphaDropout": _RNG, "torch.nn.FeatureAlphaDropout": _RNG,
    "torch.nn.functional.native_channel_shuffle": "differentiable (`ChannelShuffleBackward0`); "
                                                  "PyTorch's has no derivative",
    "torch.utils.data.DataLoader": "workers are threads; shuffle orders come from hookgrad's key",
    "torch.utils.data.RandomSampler": "orders drawn from hookgrad's key",
    "torch.utils.data.SubsetRandomSampler": "orders drawn from hookgrad's key",
    "torch.utils.data.WeightedRandomSampler": "draws from hookgrad's key",
    "torch.utils.data.random_split": "splits drawn from hookgrad's key",
    "torch.utils.data.IterDataPipe": "no built-in steps (`map`, `filter`, ...); several "
                                     "iterators may run at once",
    "torch.utils.data.MapDataPipe": "no built-in steps (`map`, `batch`, ...)",
    "torch.utils.data.DFIterDataPipe": "no DataFrame tracing",
    "torch.utils.data.datapipes": "the bases and decorators: no `iter`/`map` steps",
    "torch.utils.data.graph": "`traverse_dps`/`traverse` raise NotImplementedError",
    "torch.utils.data.graph_settings": "its functions raise NotImplementedError (they need "
                                       "`graph.traverse_dps`)",
    "torch.utils.data.argument_validation": "raises NotImplementedError (no DataPipe type "
                                            "system)",
    "torch.utils.data.runtime_validation": "raises NotImplementedError (no DataPipe type "
                                           "system)",
    "torch.utils.data.DistributedSampler": "shuffled orders drawn from a `hookgrad.Generator` "
                                           "seeded with `seed + epoch`",
    "torch.utils.data.default_collate": "Python floats/ints collate to 32-bit without x64",
    "torch.autograd.profiler": "records a JAX trace (`export_chrome_trace`); no per-op "
                               "event tables (`key_averages`), NVTX or ITT ranges",
    "torch.autograd.kineto_available": "always False: the profilers record JAX traces",
    "torch.autograd.NestedIOFunction": "calling one raises NotImplementedError (PyTorch's "
                                       "raises AttributeError: neither runs)",
    "torch.autograd.graph": "`save_on_cpu(pin_memory=True)` uses JAX's `pinned_host` memory",
    "torch.export": "the program is StableHLO (`jax.export`), not an ATen FX graph: "
                    "`run_decompositions()` returns it, `unflatten`/`draft_export` not "
                    "implemented; dynamic sizes start at 1; inputs keep their dtypes; "
                    "`save`/`load` use hookgrad's archive (needs `flatbuffers`)",
    "torch.jit": "`script`/`trace` return their argument (no TorchScript); `save`/`load` "
                 "not implemented",
    "torch.compiler": "`disable` and `allow_in_graph` return the function (traced into the "
                      "step); `is_compiling` is True under `hookgrad.compile` and JAX traces",
    "torch.fx": "`symbolic_trace` patches `torch`/`F` functions while tracing (no "
                "`__torch_function__`); `GraphModule` runs its graph with an `Interpreter`",
    "torch.nn.attention": "`sdpa_kernel` records the backends; JAX's attention computes "
                          "(flex attention not implemented)",
    "torch.nn.quantized": "`FloatFunctional` and `FXFloatFunctional` only (no quantized "
                          "Tensors)",
    "torch.uint64": "`uint32` unless JAX's x64 mode is on",
    # branch tmisc
    "torch.has_mkl": "False: jaxlib links no MKL", "torch.has_openmp": "False: XLA threads "
    "with its own pool, not OpenMP", "torch.init_num_threads": "nothing to set up (XLA keeps "
    "its own thread pools)", "torch.set_flush_denormal": "XLA's CPU programs always flush "
    "denormals: `True` holds, `False` returns False", "torch.is_inference": "False "
    "(`inference_mode` is `no_grad`)", "torch.OutOfMemoryError": "XLA's out-of-memory errors "
    "are `JaxRuntimeError`s, not this class",
    **{f"torch.{n}": "never made: sizes are plain ints (JAX's shapes are static); "
       "constructing one raises" for n in ("SymInt", "SymFloat", "SymBool")},
    "torch.Tensor.share_memory_": "returns the tensor unchanged (JAX arrays are not shared "
    "memory; processes receive copies)", "torch.Tensor.is_shared": "always False (JAX arrays "
    "are not shared memory)", "torch.Tensor.pin_memory": "raises \"does not implement\" "
    "where an accelerator exists (PyTorch's error without one)",
    "torch.Stream": "the CPU's: constructing one for `cuda` raises \"does not implement\"",
    "torch.ScriptModule": "no TorchScript: hookgrad never makes one (`torch.jit.script` "
    "returns the Module)", "torch.ScriptFunction": "no TorchScript: constructing one raises "
    "\"does not implement\"",
    **{f"torch.{n}Storage": "a dtype without tensors: constructing one raises \"does not "
       "implement\"" for n in ("QInt32", "QInt8", "QUInt2x4", "QUInt4x2", "QUInt8")},
    "torch.cond": "eagerly records the chosen branch's nodes (a tensor only the other branch "
    "uses gets no gradient); a traced predicate runs both branches and selects",
    "torch.while_loop": "eagerly records each iteration's nodes; with a traced condition it is "
    "`lax.while_loop`: inputs that require grad raise",
    "torch.PyTorchFileReader": "`get_storage_from_record` raises \"does not implement\" "
    "(read the bytes with `get_record`)", "torch.PyTorchFileWriter": "records from bytes or "
    "storages; `storage_alignment` other than 64 and memory addresses raise",
    "torch.asarray": "copies NumPy arrays and buffers (no shared memory)",
    "torch.from_dlpack": "JAX's arrays are values: later in-place writes on either side are "
    "not seen by the other",
    **{n: "the strides stay C order (XLA lays arrays out)" for n in (
        "torch.empty_strided", "torch.empty_permuted", "torch.Tensor.new_empty_strided")},
    **{f"torch.Tensor.{n}": "on a tensor that is not a view: C-order strides after, and its "
       "earlier views stop sharing its storage" for n in (
           "t_", "transpose_", "swapaxes_", "swapdims_", "as_strided_")},
    "torch.Event": "the CPU's: constructing one for `cuda` raises \"does not implement\"",
    **{f"torch.{n}": "a dtype without tensors: making one raises \"hookgrad does not "
       "implement\"" for n in (*(f"{s}int{b}" for s in ("", "u") for b in range(1, 8)),
                              "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
                              "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
                              "quint2x4")},
    **{f"torch.{n}": "records the count (XLA keeps its own thread pools)" for n in (
        "set_num_threads", "get_num_threads", "set_num_interop_threads",
        "get_num_interop_threads")},
    "torch.unique": _EAGER, "torch.Tensor.unique": _EAGER,
    "torch.unique_consecutive": _EAGER, "torch.Tensor.unique_consecutive": _EAGER,
    "torch.bincount": _EAGER, "torch.Tensor.bincount": _EAGER,
    "torch.quantile": _ONE_NODE, "torch.Tensor.quantile": _ONE_NODE,
    "torch.nanquantile": _ONE_NODE, "torch.Tensor.nanquantile": _ONE_NODE,
    **{f"torch.{n}": _RNG for n in ("normal", "bernoulli", "poisson", "multinomial",
                                    "binomial")},
    **{f"torch.{n}": _RNG for n in (
        "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
        "feature_alpha_dropout", "feature_alpha_dropout_", "native_dropout", "rrelu", "rrelu_")},
    "torch.embedding": "`sparse=True` gives dense gradients",
    "torch.embedding_bag": "offsets need values: eager only inside `hookgrad.compile`; "
                           "`sparse=True` gives dense gradients",
    **{f"torch.{n}": "one `MkldnnRnnLayerBackward0` node per layer and direction"
       for n in ("lstm", "gru", "rnn_tanh", "rnn_relu")},
    **{f"torch.nn.functional.fractional_max_pool{n}": _RNG for n in (
        "2d", "3d", "2d_with_indices", "3d_with_indices")},
    "torch.nn.FractionalMaxPool2d": _RNG, "torch.nn.FractionalMaxPool3d": _RNG,
    **{n: "`options` validated, unused: always the reference computation "
          "(docs/differences.md)" for n in ("torch.nn.functional.linear_cross_entropy",
                                   "torch.nn.LinearCrossEntropyLoss",
                                   "torch.nn.LinearCrossEntropyOptions")},
    **{n: "concatenated 1-D targets: eager only (pad them inside `hookgrad.compile`)"
       for n in ("torch.ctc_loss", "torch.nn.functional.ctc_loss", "torch.nn.CTCLoss")},
    "torch.nn.AdaptiveLogSoftmaxWithLoss": "inside `hookgrad.compile`: every cluster runs "
                                           "and targets are not range-checked",
    "torch.nn.SyncBatchNorm": "statistics of the whole (possibly sharded) batch array, no "
                              "process groups; the running-stat update bumps their `_version`",
    **{f"torch.Tensor.{n}": _RNG for n in (
        "normal_", "uniform_", "bernoulli", "bernoulli_", "exponential_", "log_normal_",
        "cauchy_", "geometric_", "random_", "multinomial")},
    **{f"torch.distributions.{n}": _RNG for n in (
        "Binomial", "ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto",
        "HalfCauchy", "InverseGamma", "Kumaraswamy", "LKJCholesky", "LogisticNormal",
        "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
        "NegativeBinomial", "OneHotCategorical", "OneHotCategoricalStraightThrough",
        "RelaxedBernoulli", "RelaxedOneHotCategorical", "VonMises", "Wishart")},
}


def _resolve(path):
    """The object at a dotted path (a module, or a class inside one)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(path)


def _public(names):
    return sorted(n for n in names if not n.startswith("_"))


def torch_names():
    """{namespace: [public names]} from the installed torch if it is the pinned version,
    else None."""
    try:
        import torch
    except ImportError:
        return None
    if torch.__version__.split("+")[0] != TORCH_VERSION:
        return None
    return {ns: _own_names(_resolve(ns)) for ns, _ in NAMESPACES}


def names_from_doc(text):
    """{namespace: [PyTorch's names]} as the document lists them."""
    out, ns = {}, None
    for line in text.splitlines():
        m = re.match(r"^## `(torch[\w.]*)`", line)
        if m:
            ns = m.group(1)
            out[ns] = []
            section = None
            continue
        m = re.match(r"^### (\w[\w ]*)", line)
        if m:
            section = m.group(1)
            continue
        if ns is None or section == "hookgrad only":
            continue
        if line.startswith("| `"):
            out[ns].append(line.split("`")[1])
        elif line.startswith("`"):
            out[ns].extend(re.findall(r"`([^`]+)`", line))
    return {k: sorted(v) for k, v in out.items()}


def _has(obj, name):
    if obj is None:
        return False
    try:
        getattr(obj, name)
    except AttributeError:
        # a submodule not imported yet is there all the same
        return name in _submodules(obj)
    except Exception:  # noqa: BLE001 - a property that fails on the class still exists
        return True
    return True


def _submodules(obj):
    path = getattr(obj, "__path__", None)
    return {m.name for m in pkgutil.iter_modules(path)} if path else set()


def _own_names(obj):
    """Public names of a namespace, the same in any process: its attributes that are not
    modules (imports such as ``jax`` or ``math`` are not part of it), and its submodules
    whether or not something imported them yet."""
    names = {n for n in dir(obj) if not isinstance(getattr(obj, n, None), types.ModuleType)}
    return _public(names | _submodules(obj))


def _wrap(names):
    return textwrap.fill(", ".join(f"`{n}`" for n in names), 100, break_long_words=False,
                         break_on_hyphens=False)


MODULES = os.path.join(ROOT, "tools", "torch_modules.txt")


def _imports(path):
    try:
        mod = importlib.import_module("hookgrad" + path[len("torch"):])
    except ImportError:
        return False
    # only this checkout's modules (an editable install elsewhere can resolve others)
    file = getattr(mod, "__file__", None)
    return file is None or os.path.abspath(file).startswith(os.path.join(ROOT, "hookgrad"))


def module_table():
    """The module section: per ``torch.X`` group, how many of PyTorch's module paths
    (tools/torch_modules.txt) import under ``hookgrad.as_torch``, then those that do."""
    with open(MODULES) as f:
        paths = [line.split()[0] for line in f if line.strip() and not line.startswith("#")]
    groups, have = {}, []
    for p in paths:
        ok = _imports(p)
        g = groups.setdefault(".".join(p.split(".")[:2]), [0, 0])
        g[0 if ok else 1] += 1
        if ok:
            have.append(p)
    rows = [f"| `{g}` | {n[0]} | {n[1]} | {n[0] + n[1]} |" for g, n in sorted(groups.items())]
    total = [sum(n[0] for n in groups.values()), sum(n[1] for n in groups.values())]
    return [
        "## Modules", "",
        "PyTorch's module paths (`tools/torch_modules.txt`, written by "
        "`tools/torch_modules.py`: every public one and the private ones libraries import). "
        "Under `hookgrad.as_torch` each one imports, or fails with `ModuleNotFoundError: ... "
        "hookgrad does not implement torch.X yet` (`tests/test_module_tree.py`).", "",
        "| modules | import | missing | PyTorch's |", "|---|---|---|---|", *rows,
        f"| all | {total[0]} | {total[1]} | {len(paths)} |", "",
        "Modules that import:", "", _wrap(have), "",
    ]


def usage_counts():
    """(corpus {library: version}, {qualified name: (libraries using it, uses)}) from
    tools/usage.py's scan."""
    with open(USAGE) as f:
        data = json.load(f)
    return data["corpus"], {k: tuple(v) for k, v in data["names"].items()}


def _missing_part(ns, missing, usage):
    """The missing names: those the corpus uses as a table, most used first, then the rest."""
    def use(n):
        return usage.get(f"{ns}.{n}", (0, 0))
    used = sorted((n for n in missing if use(n)[0]), key=lambda n: (-use(n)[0], -use(n)[1], n))
    unused = [n for n in missing if not use(n)[0]]
    part = ["### missing", ""]
    if used:
        part += ["| name | used by (libraries) | uses |", "|---|---|---|"]
        part += [f"| `{n}` | {use(n)[0]} | {use(n)[1]} |" for n in used] + [""]
        if unused:
            part += ["Not used by the corpus:", ""]
    return part + [_wrap(unused) or "(none)", ""] if unused or not used else part


def render(torch_side):
    corpus, usage = usage_counts()
    rows, sections = [], []
    for ns, hg_ns in NAMESPACES:
        names = torch_side.get(ns, [])
        try:
            obj = _resolve(hg_ns)
        except (ImportError, AttributeError):  # the whole namespace is missing
            obj = None
        have = [n for n in names if _has(obj, n)]
        differs = [n for n in have if f"{ns}.{n}" in DIFFERS]
        same = [n for n in have if n not in differs]
        missing = [n for n in names if n not in have]
        extra = [n for n in _own_names(obj) if n not in set(names)] if obj is not None else []
        rows.append(f"| `{ns}` | {len(same)} | {len(differs)} | {len(missing)} | {len(names)} "
                    f"| {len(extra)} |")
        part = [f"## `{ns}`", "", f"hookgrad: `{hg_ns}`.", ""]
        if differs:
            part += ["### differs", "", "| name | how |", "|---|---|"]
            part += [f"| `{n}` | {DIFFERS[f'{ns}.{n}']} |" for n in differs] + [""]
        part += ["### implemented", "", _wrap(same) or "(none)", ""]
        part += _missing_part(ns, missing, usage)
        part += ["### hookgrad only", "", _wrap(extra) or "(none)", ""]
        sections.append("\n".join(part))
    head = [
        "# hookgrad's coverage of PyTorch's API", "",
        f"Generated by `python tools/api_coverage.py` from hookgrad's namespaces and PyTorch "
        f"{TORCH_VERSION}'s public names; do not edit by hand (`tests/test_api_coverage.py` "
        "fails when it is stale).", "",
        "- **implemented**: the name exists in hookgrad with PyTorch's behaviour.",
        "- **differs**: it exists, and behaves as the table says ([differences.md]"
        "(differences.md) gives the reasons).",
        "- **missing**: using it raises `AttributeError: ... hookgrad does not implement "
        "torch.X yet`. Listed most used first: \"used by\" counts the libraries of "
        f"`tools/usage.py`'s corpus ({', '.join(f'{k} {v}' for k, v in corpus.items())}) whose source uses the name, "
        "\"uses\" its uses in them all (`Tensor` members are approximated by method name). "
        "Regenerate the counts with `python tools/usage.py --path DIR` (DIR: the corpus "
        "installed with `pip install --no-deps --target DIR`, see its docstring).",
        "- **hookgrad only**: public names PyTorch's namespace does not have (including "
        "submodules and re-exported helpers).", "",
        "| namespace | implemented | differs | missing | PyTorch's names | hookgrad only |",
        "|---|---|---|---|---|---|", *rows, "", *module_table(),
    ]
    return "\n".join(head) + "\n" + "\n".join(sections)


def _torch_side():
    torch_side = torch_names()
    if torch_side is None:
        if not os.path.exists(DOC):
            sys.exit(f"{DOC} is missing and torch=={TORCH_VERSION} is not installed")
        with open(DOC) as f:
            torch_side = names_from_doc(f.read())
    return torch_side


def build():
    return render(_torch_side())


def build_tensor_missing():
    """hookgrad/_tensor_missing.py's text: PyTorch's public Tensor names hookgrad lacks."""
    import hookgrad
    names = [n for n in _torch_side()["torch.Tensor"] if not _has(hookgrad.Tensor, n)]
    return (f'"""The public names of PyTorch {TORCH_VERSION}\'s ``torch.Tensor`` that '
            "hookgrad's Tensor lacks.\n\n"
            "Generated by ``python tools/api_coverage.py``; do not edit "
            "(``tests/test_api_coverage.py``\nfails when it is stale). ``hookgrad._tensor`` "
            "gives each a ``_missing.Stub``, which raises\n\"hookgrad does not implement "
            "torch.Tensor.X yet\" when read; other names get Python's plain\n"
            "``AttributeError``, as on PyTorch's Tensor.\n\"\"\"\n"
            "NAMES = (\n" + "".join(f"    {n!r},\n" for n in names) + ")\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if an output is stale")
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    outputs = ((DOC, build()), (TENSOR_MISSING, build_tensor_missing()))
    for path, text in outputs:
        if args.check:
            with open(path) as f:
                if f.read() != text:
                    print(f"{path} is stale: run python tools/api_coverage.py")
                    return 1
            print(f"{path} is up to date")
            continue
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
