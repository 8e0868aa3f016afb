"""``weights_only`` loading: the globals a checkpoint may name, the user's additions
(``hookgrad.serialization.add_safe_globals``) and PyTorch's refusal messages."""
import pickle
import re

# modules never allowed, even when the user allowlists one of their functions
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_user_globals = set()

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


def add(safe_globals):
    global _user_globals
    _user_globals = _user_globals | set(safe_globals)


def remove(safe_globals):
    global _user_globals
    _user_globals = _user_globals - set(safe_globals)


def get():
    return list(_user_globals)


def clear():
    global _user_globals
    _user_globals = set()


def _user_allowed():
    out = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(entry[1])}")
            out[entry[1]] = entry[0]
        else:
            out[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return out


def allowed_global(module, name, plain_safe):
    """The object ``module.name`` stands for, if a weights-only load may use it."""
    path = f"{module}.{name}"
    if module in _BLOCKED_MODULES:
        raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {path} whose module "
                                     f"{module} is blocked.")
    if path in plain_safe:
        return plain_safe[path]
    user = _user_allowed()
    if path in user:
        return user[path]
    if module == "builtins":
        path = name  # PyTorch names builtins bare: `set`, `eval`
    raise pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {path} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{path}])` or the "
        f"`torch.serialization.safe_globals([{path}])` context manager to allowlist this "
        "global if you trust this class/function.")


def weights_only_message(message):
    """PyTorch's ``Weights only load failed`` text around the unpickler's ``message``."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        text = ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load "
                "with `weights_only=True` please check the recommended steps in the following "
                "error message.\n\tWeightsUnpickler error: " + message)
    else:
        text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if not re.search(r"whose module (\S+) is blocked", message):
            text += ("Please file an issue with the following so that we can make "
                     "`weights_only=True` compatible with your use case: WeightsUnpickler "
                     "error: ")
        text += "\n\n" + message
    return text + _DOCS_MESSAGE
