"""Engine introspection under the names PyTorch code reaches through ``torch._C``."""
from .autograd.engine import current_autograd_node as _current_autograd_node
from .autograd.engine import current_graph_task_id as _current_graph_task_id
from .autograd.engine import will_engine_execute_node as _will_engine_execute_node
from .autograd.grad_mode import is_grad_enabled, set_grad_enabled as _set_grad_enabled_cls


def _set_grad_enabled(mode):
    _set_grad_enabled_cls(mode)


def _get_tracing_state():
    return None


__all__ = ["_current_graph_task_id", "_will_engine_execute_node", "_current_autograd_node",
           "is_grad_enabled", "_set_grad_enabled", "_get_tracing_state"]
