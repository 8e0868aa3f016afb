"""Constructors that keep their arguments through ``_arguments.keep`` keep what PyTorch's
keep: each attribute, its value, the constructor's signature, the repr, a pickle round trip
and a wrong call's TypeError, against PyTorch."""
import inspect
import pickle

import pytest

import hookgrad

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")


def _sgd(L):
    return L.optim.SGD([L.nn.Parameter(L.zeros(2))], lr=0.1)


# (what it is, how to build it from the library L, the attributes PyTorch keeps under the
# arguments' names). The arguments differ from the defaults so that a value left at its
# default, or kept under another argument's name, shows.
_KEEPERS = [
    ("Conv2d", lambda L: L.nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2,
                                     padding_mode="reflect"),
     ["in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
      "transposed", "output_padding", "groups", "padding_mode"]),
    ("ConvTranspose1d", lambda L: L.nn.ConvTranspose1d(2, 4, 3, stride=2, output_padding=1),
     ["in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
      "transposed", "output_padding", "groups", "padding_mode"]),
    ("MaxPool2d", lambda L: L.nn.MaxPool2d(3, padding=1, dilation=2, return_indices=True,
                                           ceil_mode=True),
     ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]),
    ("AvgPool3d", lambda L: L.nn.AvgPool3d(2, 1, 1, True, False, 3),
     ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
      "divisor_override"]),
    ("PoissonNLLLoss", lambda L: L.nn.PoissonNLLLoss(False, True, eps=1e-3),
     ["log_input", "full", "eps", "reduction"]),
    ("TripletMarginLoss", lambda L: L.nn.TripletMarginLoss(2.0, 1.0, 1e-3, True),
     ["margin", "p", "eps", "swap", "reduction"]),
    ("MultiMarginLoss", lambda L: L.nn.MultiMarginLoss(2, 0.5, reduction="sum"),
     ["p", "margin", "reduction"]),
    ("CrossEntropyLoss", lambda L: L.nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.1),
     ["ignore_index", "label_smoothing", "reduction"]),
    ("LinearCrossEntropyLoss", lambda L: L.nn.LinearCrossEntropyLoss(
        3, 5, out_features=(2,), ignore_index=1, label_smoothing=0.2),
     ["num_classes", "out_features", "ignore_index", "label_smoothing"]),
    ("BatchNorm1d", lambda L: L.nn.BatchNorm1d(3, 1e-3, 0.2, False, False),
     ["num_features", "eps", "momentum", "affine", "track_running_stats"]),
    ("GroupNorm", lambda L: L.nn.GroupNorm(2, 4, 1e-3, False),
     ["num_groups", "num_channels", "eps", "affine"]),
    ("CrossMapLRN2d", lambda L: L.nn.CrossMapLRN2d(3, 1e-3, 0.5, 2),
     ["size", "alpha", "beta", "k"]),
    ("Embedding", lambda L: L.nn.Embedding(5, 3, -2, 1.5, 3.0, True),
     ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
      "scale_grad_by_freq", "sparse"]),
    ("EmbeddingBag", lambda L: L.nn.EmbeddingBag(5, 3, 1.5, 3.0, True, "max", False,
                                                 include_last_offset=True, padding_idx=-1),
     ["num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq",
      "padding_idx", "mode", "sparse", "include_last_offset"]),
    ("RReLU", lambda L: L.nn.RReLU(0.1, 0.2, True), ["lower", "upper", "inplace"]),
    ("Bilinear", lambda L: L.nn.Bilinear(2, 3, 4, bias=False),
     ["in1_features", "in2_features", "out_features"]),
    ("Upsample", lambda L: L.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True,
                                         recompute_scale_factor=True),
     ["scale_factor", "mode", "align_corners", "recompute_scale_factor"]),
    ("AveragedModel", lambda L: L.optim.swa_utils.AveragedModel(
        L.nn.Linear(2, 1), avg_fn=max, use_buffers=True),
     ["avg_fn", "multi_avg_fn", "use_buffers"]),
    ("StepLR", lambda L: L.optim.lr_scheduler.StepLR(_sgd(L), 3, 0.5),
     ["step_size", "gamma"]),
    ("CosineAnnealingLR", lambda L: L.optim.lr_scheduler.CosineAnnealingLR(_sgd(L), 7, 0.01),
     ["T_max", "eta_min"]),
    ("LinearLR", lambda L: L.optim.lr_scheduler.LinearLR(_sgd(L), 0.5, 0.9, 4),
     ["start_factor", "end_factor", "total_iters"]),
    ("ConstantLR", lambda L: L.optim.lr_scheduler.ConstantLR(_sgd(L), 0.5, 4),
     ["factor", "total_iters"]),
    ("CosineAnnealingWarmRestarts", lambda L: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        _sgd(L), 4, 2, 0.01), ["T_0", "T_i", "T_mult", "eta_min", "T_cur"]),
    ("ReduceLROnPlateau", lambda L: L.optim.lr_scheduler.ReduceLROnPlateau(
        _sgd(L), "max", 0.5, 3, 1e-3, "abs", 2, 0.01, 1e-6),
     ["mode", "factor", "patience", "threshold", "threshold_mode", "cooldown", "eps"]),
    ("WeightedRandomSampler", lambda L: L.utils.data.WeightedRandomSampler(
        [0.5, 1.5], 3, replacement=True), ["num_samples", "replacement", "generator"]),
    ("BatchSampler", lambda L: L.utils.data.BatchSampler(range(5), 2, True),
     ["batch_size", "drop_last"]),
    ("DataLoader", lambda L: L.utils.data.DataLoader(
        [1, 2, 3], batch_size=2, drop_last=True, timeout=5, pin_memory_device="cpu",
        in_order=False),
     ["dataset", "num_workers", "prefetch_factor", "pin_memory", "pin_memory_device",
      "timeout", "worker_init_fn", "multiprocessing_context", "in_order", "batch_size",
      "drop_last", "generator"]),
    ("autograd.profiler.profile", lambda L: L.autograd.profiler.profile(
        record_shapes=True, with_flops=True, profile_memory=True, with_stack=True,
        with_modules=True),
     ["record_shapes", "with_flops", "profile_memory", "with_stack", "with_modules",
      "use_cpu"]),
    ("profiler.profile", lambda L: L.profiler.profile(
        record_shapes=True, profile_memory=True, with_stack=True, with_flops=True,
        with_modules=True),
     ["on_trace_ready", "record_shapes", "profile_memory", "with_stack", "with_flops",
      "with_modules"]),
]


@needs_torch
@pytest.mark.parametrize("name,build,kept", _KEEPERS, ids=[k[0] for k in _KEEPERS])
def test_a_constructor_keeps_pytorchs_attributes(name, build, kept):
    mine, theirs = build(hookgrad), build(torch)
    assert {a: getattr(mine, a) for a in kept} == {a: getattr(theirs, a) for a in kept}


# hookgrad's autograd profiler lacks PyTorch 2.13's two newest keywords
# (post_processing_timeout_s, activity_filters): its signature is not PyTorch's yet
_SIGNED = [k for k in _KEEPERS if k[0] != "autograd.profiler.profile"]


@needs_torch
@pytest.mark.parametrize("name,build,kept", _SIGNED, ids=[k[0] for k in _SIGNED])
def test_a_constructor_that_keeps_its_arguments_has_pytorchs_signature(name, build, kept):
    """Names, kinds and defaults of the parameters (PyTorch annotates some; hookgrad not)."""
    def plain(cls):
        return [(p.name, p.kind, p.default)
                for p in inspect.signature(cls.__init__).parameters.values()]
    assert plain(type(build(hookgrad))) == plain(type(build(torch)))


_NOT_LAYERS = ("LR", "Restarts", "Plateau", "Sampler", "Loader", "profile")
_MODULES = [k for k in _KEEPERS if not k[0].endswith(_NOT_LAYERS)]


@needs_torch
@pytest.mark.parametrize("name,build,kept", _MODULES, ids=[k[0] for k in _MODULES])
def test_a_layer_that_keeps_its_arguments_prints_and_pickles_as_pytorchs(name, build, kept):
    mine = build(hookgrad)
    assert repr(mine) == repr(build(torch))
    again = pickle.loads(pickle.dumps(mine))
    assert repr(again) == repr(mine)
    assert {a: getattr(again, a) for a in kept} == {a: getattr(mine, a) for a in kept}


_SCHEDULERS = [k for k in _KEEPERS if k[0].endswith(("LR", "Restarts", "Plateau"))]


@needs_torch
@pytest.mark.parametrize("name,build,kept", _SCHEDULERS, ids=[k[0] for k in _SCHEDULERS])
def test_a_scheduler_that_keeps_its_arguments_saves_pytorchs_state(name, build, kept):
    mine, theirs = build(hookgrad).state_dict(), build(torch).state_dict()
    assert {a: mine[a] for a in kept} == {a: theirs[a] for a in kept}
    assert set(kept) <= set(mine)


# (name, a wrong call, PyTorch's message): the class that keeps its arguments names itself
_WRONG_CALLS = [
    ("GroupNorm", lambda L: L.nn.GroupNorm(2, 4, bogus=1),
     r"GroupNorm.__init__\(\) got an unexpected keyword argument 'bogus'"),
    ("TripletMarginLoss", lambda L: L.nn.TripletMarginLoss(margin=1.0, nope=2),
     r"TripletMarginLoss.__init__\(\) got an unexpected keyword argument 'nope'"),
    ("CrossMapLRN2d", lambda L: L.nn.CrossMapLRN2d(),
     r"CrossMapLRN2d.__init__\(\) missing 1 required positional argument: 'size'"),
    ("StepLR", lambda L: L.optim.lr_scheduler.StepLR(_sgd(L)),
     r"StepLR.__init__\(\) missing 1 required positional argument: 'step_size'"),
    ("DataLoader", lambda L: L.utils.data.DataLoader([1], 1, False, None, None, 0, None,
                                                     False, False, 0, None, None, None, 2),
     r"DataLoader.__init__\(\) takes from 2 to 14 positional arguments but 15 were given"),
]


@needs_torch
@pytest.mark.parametrize("name,call,match", _WRONG_CALLS, ids=[w[0] for w in _WRONG_CALLS])
def test_a_wrong_call_is_pytorchs_type_error(name, call, match):
    for L in (hookgrad, torch):
        with pytest.raises(TypeError, match=match):
            call(L)
