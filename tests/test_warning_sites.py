"""Every warning hookgrad raises names the user's line, as PyTorch's do: each site goes
through ``hookgrad._errors.warn``, which finds the first frame outside the library, and a
trigger per site checks the warning's file is this one, and that PyTorch warns the same."""
import ast
import pathlib
import pickle
import warnings

import pytest

import hookgrad

try:
    import torch
except ImportError:
    torch = None

ROOT = pathlib.Path(hookgrad.__file__).parent


def test_no_warning_bypasses_the_users_frame():
    # a direct ``warnings.warn`` would need a stacklevel counted by hand, which goes stale
    # as soon as the call moves one frame deeper
    direct = []
    for path in ROOT.rglob("*.py"):
        if path.name == "_errors.py" and path.parent == ROOT:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("warn", "warn_explicit") and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "warnings":
                direct.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert direct == [], "use hookgrad._errors.warn, which finds the user's frame"


def _error_ignored(fn):
    # the warning comes before the call's error (PyTorch's order)
    try:
        fn()
    except RuntimeError:
        pass


def _full_backward_hook_without_input_grad(L):
    m = L.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda *a: None)
    m(L.ones(1, 2)).sum().backward()


def _create_graph_cycle(L):
    L.set_warn_always(True)
    try:
        x = L.ones(2, requires_grad=True)
        (x * x).sum().backward(create_graph=True)
    finally:
        L.set_warn_always(False)


def _nonleaf_grad(L):
    x = L.ones(2, requires_grad=True)
    return (x * 2).grad


def _scheduler_before_step(L):
    p = L.nn.Parameter(L.ones(1))
    opt = L.optim.SGD([p], lr=0.1)
    sched = L.optim.lr_scheduler.StepLR(opt, 1)
    sched.step()


def _checkpoint_without_use_reentrant(L):
    x = L.ones(2, requires_grad=True)
    L.utils.checkpoint.checkpoint(lambda t: t * 2, x)


def _module_call_in_a_hook_list(L):
    # the warning raised deep inside a module's call still names the line calling it
    m = L.nn.Sequential(L.nn.Softmax())
    m(L.ones(2, 3))


def _pickle_a_hooked_tensor(L):
    x = L.ones(2, requires_grad=True)
    x.register_hook(lambda g: g)
    pickle.dumps(x)


def _detect_anomaly(L):
    with L.autograd.detect_anomaly():
        pass


def _scheduler_get_lr(L):
    opt = L.optim.SGD([L.nn.Parameter(L.ones(1))], lr=0.1)
    L.optim.lr_scheduler.StepLR(opt, 1).get_lr()


def _backward_hook_on_a_dict_output(L):
    class M(L.nn.Module):
        def forward(self, x):
            return {"y": x * 2}
    m = M()
    m.register_full_backward_hook(lambda *a: None)
    m(L.ones(1, requires_grad=True))


def _checkpoint_sequential(L):
    L.utils.checkpoint.checkpoint_sequential(L.nn.Sequential(L.nn.Linear(2, 2)), 1,
                                             L.ones(1, 2, requires_grad=True))


# (name, trigger(L), a fragment of the message); every row runs under PyTorch too
SITES = [
    ("full backward hook, no input requires grad", _full_backward_hook_without_input_grad,
     "Full backward hook is firing"),
    ("backward with create_graph", _create_graph_cycle, "reference cycle"),
    ("grad of a non-leaf", _nonleaf_grad, "not a leaf Tensor"),
    ("backward grad_variables", lambda L: L.autograd.backward(
        L.ones(1, requires_grad=True).sum(), grad_variables=[L.tensor(1.0)]), "grad_variables"),
    ("grad only_inputs", lambda L: L.autograd.grad(
        (L.ones(1, requires_grad=True) * 2).sum(), L.ones(1, requires_grad=True),
        only_inputs=False, allow_unused=True), "only_inputs argument is deprecated"),
    ("softmax without dim", lambda L: L.nn.functional.softmax(L.ones(2, 3)),
     "Implicit dimension choice for softmax"),
    ("log_softmax without dim", lambda L: L.nn.functional.log_softmax(L.ones(2, 3)),
     "Implicit dimension choice for log_softmax"),
    ("softmin without dim", lambda L: L.nn.functional.softmin(L.ones(2, 3)),
     "Implicit dimension choice for softmin"),
    ("nn.Softmax inside Sequential", _module_call_in_a_hook_list,
     "Implicit dimension choice for softmax"),
    ("mse_loss target size", lambda L: L.nn.functional.mse_loss(L.ones(2, 3), L.ones(3)),
     "Using a target size"),
    ("kl_div mean", lambda L: L.nn.functional.kl_div(L.ones(2), L.ones(2)),
     "reduction: 'mean' divides"),
    ("var with no degrees of freedom", lambda L: L.ones(1).var(), "degrees of freedom is <= 0"),
    ("out= resized", lambda L: L.add(L.ones(3), 1, out=L.ones(2)), "was resized"),
    ("scheduler before optimizer.step", _scheduler_before_step,
     "Detected call of `lr_scheduler.step()` before `optimizer.step()`"),
    ("checkpoint use_reentrant", _checkpoint_without_use_reentrant, "use_reentrant"),
    ("Module positional state_dict args", lambda L: L.nn.Linear(1, 1).state_dict(None, ""),
     "Positional args are being deprecated"),
    ("RNN dropout with one layer", lambda L: L.nn.LSTM(2, 2, dropout=0.5),
     "dropout option adds dropout"),
    ("trunc_normal_ far from the mean", lambda L: L.nn.init.trunc_normal_(
        L.empty(3), mean=10.0, a=-1.0, b=1.0), "mean is more than 2 std"),
    ("init of an empty tensor", lambda L: L.nn.init.kaiming_uniform_(L.empty(0, 3)),
     "Initializing zero-element tensors is a no-op"),
    ("clip_grad_norm deprecated", lambda L: L.nn.utils.clip_grad_norm(
        [L.nn.Parameter(L.ones(1))], 1.0), "clip_grad_norm` is now deprecated"),
    ("clip_grad_norm_ of nothing", lambda L: L.nn.utils.clip_grad_norm_((p for p in ()), 1.0),
     "`parameters` is an empty generator"),
    ("upsample deprecated", lambda L: L.nn.functional.upsample(L.ones(1, 1, 2), scale_factor=2),
     "upsample` is deprecated"),
    ("grid_sample align_corners", lambda L: L.nn.functional.affine_grid(
        L.eye(2, 3)[None], [1, 1, 2, 2]), "align_corners"),
    ("dropout2d of a 3-D input", lambda L: L.nn.functional.dropout2d(L.ones(2, 3, 4)),
     "Received a 3D input to dropout2d"),
    ("complex to real", lambda L: L.zeros(2).copy_(L.ones(2, dtype=L.complex64)),
     "discards the imaginary part"),
    ("optimizer with duplicate parameters", lambda L: L.optim.SGD(
        [L.nn.Parameter(L.ones(1))] * 2, lr=0.1), "duplicate parameters"),
    ("random_split of an empty length", lambda L: L.utils.data.random_split(
        range(2), [1.0, 0.0]), "Length of split at index 1 is 0"),
    ("set_default_tensor_type", lambda L: L.set_default_tensor_type(L.FloatTensor),
     "set_default_tensor_type() is deprecated"),
    ("pickle of a hooked tensor", _pickle_a_hooked_tensor, "will not be serialized"),
    ("Function instantiated", lambda L: L.autograd.Function(), "should not be instantiated"),
    ("anomaly detection on", _detect_anomaly, "Anomaly Detection has been enabled"),
    ("cross without dim", lambda L: L.cross(L.ones(3, 3), L.ones(3, 3)),
     "Using torch.cross without specifying the dim"),
    (".T of a 3-D tensor", lambda L: L.ones(2, 3, 4).T,
     "The use of `x.T` on tensors of dimension other than 2"),
    (".mT of a 0-d tensor", lambda L: L.tensor(1.0).mT, "Tensor.mT is deprecated on 0-D"),
    ("cuda.amp.autocast", lambda L: L.cuda.amp.autocast(enabled=False),
     "torch.cuda.amp.autocast(args...)` is deprecated"),
    ("cpu.amp.autocast", lambda L: L.cpu.amp.autocast(enabled=False),
     "torch.cpu.amp.autocast(args...)` is deprecated"),
    ("nn.Container", lambda L: L.nn.Container(), "`nn.Container` is deprecated"),
    ("NLLLoss2d", lambda L: L.nn.NLLLoss2d(), "NLLLoss2d` has been deprecated"),
    ("Variable volatile", lambda L: L.autograd.Variable(L.ones(1), volatile=True),
     "volatile was removed"),
    ("scheduler get_lr", _scheduler_get_lr, "please use `get_last_lr()`"),
    ("ConcatDataset.cummulative_sizes", lambda L: L.utils.data.ConcatDataset(
        [range(2)]).cummulative_sizes, "cummulative_sizes` attribute is renamed"),
    ("stateless.functional_call", lambda L: L.nn.utils.stateless.functional_call(
        L.nn.Linear(1, 1), {}, (L.ones(1, 1),)), "stateless.functional_call` is deprecated"),
    ("sample_n", lambda L: L.distributions.Normal(0.0, 1.0).sample_n(2),
     "`sample_n(n)` will be deprecated"),
    ("backward hook on a dict output", _backward_hook_on_a_dict_output,
     "module output should be a Tensor or a tuple of Tensors"),
    ("checkpoint_sequential use_reentrant", _checkpoint_sequential, "use_reentr"),
    ("grid_sample align_corners", lambda L: L.nn.functional.grid_sample(
        L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2)), "align_corners"),
    ("loss module size_average", lambda L: L.nn.MSELoss(size_average=True),
     "size_average and reduce args will be deprecated, please use reduction='mean'"),
    ("nll_loss reduce", lambda L: L.nn.functional.nll_loss(
        L.zeros(2, 3), L.tensor([0, 1]), reduce=False),
     "size_average and reduce args will be deprecated, please use reduction='none'"),
    ("init.normal", lambda L: L.nn.init.normal(L.empty(2)),
     "`nn.init.normal` is now deprecated in favor of `nn.init.normal_`"),
    ("transformer nested tensor", lambda L: L.nn.TransformerEncoder(
        L.nn.TransformerEncoderLayer(4, 2), 1), "enable_nested_tensor is True"),
    ("chain_matmul", lambda L: L.chain_matmul(L.eye(2), L.eye(2)), "chain_matmul is deprecated"),
    ("torch.lu", lambda L: L.lu(L.eye(2)), "torch.lu is deprecated"),
    ("instance norm features", lambda L: L.nn.InstanceNorm1d(3)(L.ones(2, 4, 5)),
     "does not match num_features"),
    ("Hardtanh min_value", lambda L: L.nn.Hardtanh(min_value=-2.0),
     "keyword argument `min_value` is deprecated and renamed to `min_val`"),
    ("Hardtanh max_value", lambda L: L.nn.Hardtanh(max_value=2.0),
     "keyword argument `max_value` is deprecated and renamed to `max_val`"),
    ("masked_scatter byte mask", lambda L: _error_ignored(lambda: L.zeros(2).masked_scatter_(
        L.ones(2, dtype=L.uint8), L.ones(2))), "received a mask with dtype torch.uint8"),
    ("istft longer than its signal", lambda L: L.istft(
        L.ones(3, 5, dtype=L.complex64), 4, hop_length=1, window=L.ones(4), length=20),
     "The length of signal is shorter than the length parameter"),
]


def _warned(L, trigger, fragment):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trigger(L)
    hits = [w for w in caught if fragment in str(w.message)]
    assert hits, f"{L.__name__} did not warn {fragment!r}: {[str(w.message) for w in caught]}"
    return {pathlib.Path(w.filename).name for w in hits}


# PyTorch shows these once per process (TORCH_WARN_ONCE, or a flag): after another test
# made it warn, it is silent, so only hookgrad's side is compared in a whole-suite run
_TORCH_ONCE = {"discards the imaginary part", "set_default_tensor_type() is deprecated",
               "Using torch.cross without specifying the dim",
               "The use of `x.T` on tensors of dimension other than 2",
               "Tensor.mT is deprecated on 0-D", "chain_matmul is deprecated",
               "torch.lu is deprecated",
               "The length of signal is shorter than the length parameter"}


@pytest.mark.parametrize("trigger,fragment", [s[1:] for s in SITES], ids=[s[0] for s in SITES])
def test_the_warning_names_the_users_line(trigger, fragment):
    assert _warned(hookgrad, trigger, fragment) == {pathlib.Path(__file__).name}
    if torch is not None and fragment not in _TORCH_ONCE:
        _warned(torch, trigger, fragment)   # PyTorch warns the same (some name its files)
