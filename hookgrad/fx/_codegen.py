"""The Python source of a Graph (``GraphModule.code``), written as PyTorch writes it: one
statement per node, each value set to None after its last use, and the module-level
functions the tracer wrapped named in ``torch.fx._symbolic_trace.wrap`` lines."""
import builtins
import operator

from .node import qualified_name

# WRAPPED: ids of the functions the tracer recorded through wrap() or autowrap (math)
WRAPPED = set()

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.matmul: "@", operator.and_: "&", operator.or_: "|", operator.xor: "^",
           operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==",
           operator.ne: "!=", operator.lt: "<", operator.le: "<=", operator.gt: ">",
           operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


def _attr_path(path):
    out = "self"
    for part in path.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
    return out


def _call_args(args, kwargs):
    parts = [repr(a) for a in args] + [f"{k} = {v!r}" for k, v in kwargs.items()]
    return ", ".join(parts)


def _function_name(target, wraps):
    printed = qualified_name(target)
    if printed.startswith("torch."):
        return printed
    module, _, name = printed.rpartition(".")
    if module == "builtins" and getattr(builtins, name, None) is target:
        global_name = name
    else:  # named by its module as Python has it (``_operator_abs``)
        module = getattr(target, "__module__", None) or module
        global_name = f"{module}.{target.__name__}".replace(".", "_")
    if id(target) in WRAPPED and global_name not in wraps:
        wraps.append(global_name)
    return global_name


def _expression(node, wraps):
    op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
    if op == "get_attr":
        return _attr_path(target)
    if op == "call_module":
        return f"{_attr_path(target)}({_call_args(args, kwargs)})"
    if op == "call_method":
        return f"{args[0]!r}.{target}({_call_args(args[1:], kwargs)})"
    if not kwargs and target in _BINARY and len(args) == 2:
        return f"{args[0]!r} {_BINARY[target]} {args[1]!r}"
    if not kwargs and target in _UNARY and len(args) == 1:
        return f"{_UNARY[target]}{args[0]!r}"
    if not kwargs and target is operator.getitem:
        return f"{args[0]!r}[{args[1]!r}]"
    if target is getattr and len(args) == 2 and isinstance(args[1], str):
        return f"{args[0]!r}.{args[1]}"
    return f"{_function_name(target, wraps)}({_call_args(args, kwargs)})"


def python_code(graph) -> str:
    """The source of ``forward`` for ``graph``."""
    nodes = list(graph.nodes)
    last_use = {}  # user -> the values it reads last, in the order it reads them
    seen = set()
    for node in reversed(nodes):
        for inp in node.all_input_nodes:
            if inp not in seen:
                seen.add(inp)
                last_use.setdefault(node, []).append(inp)
    params, body, wraps = ["self"], [], []
    for node in nodes:
        if node.op == "placeholder":
            params.append(node.target + (f" = {node.args[0]!r}" if node.args else ""))
            continue
        if node.op == "output":
            body.append(f"return {node.args[0]!r}")
            continue
        dead = last_use.get(node, []) + ([node] if not node.users else [])
        line = f"{node.name} = {_expression(node, wraps)}"
        if dead:
            line += ";  " + " = ".join(n.name for n in dead) + " = None"
        body.append(line)
    header = "\n".join(f'torch.fx._symbolic_trace.wrap("{w}")' for w in wraps)
    lines = "".join(f"    {line}\n" for line in body)
    return f"\n{header}\n\ndef forward({', '.join(params)}):\n{lines}    "
