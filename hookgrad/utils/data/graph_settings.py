"""``torch.utils.data.graph_settings``: settings applied across a DataPipe graph (sharding,
shuffling, seeds). They need the graph traversal (``graph.traverse_dps``), which is not
implemented: calling one raises hookgrad's "does not implement" error."""
from ... import _missing

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_seed",
           "apply_shuffle_settings", "get_all_graph_pipes"]

globals().update({name: _missing.not_implemented(f"torch.utils.data.graph_settings.{name}")
                  for name in __all__})

__getattr__ = _missing.module_getattr(__name__)
