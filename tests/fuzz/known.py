"""Seeds 0-299 whose programs differ from PyTorch on main today, with their class.

Regenerate with ``python tools/fuzz.py --seeds 0:300 --show`` after a fix; test_fuzz.py
marks these xfail(strict=True), so a fixed class shows up as XPASS to remove here.
"""
KNOWN = {
    46: 'raises-only-torch @ retain_graph',
    67: 'shape @ nll_loss+saved_hooks',
    68: 'raises-only-torch @ grad',
    81: 'hook-log @ layer_norm+saved_hooks',
    82: 'shape @ mask+saved_hooks',
    89: 'hook-log @ conv1d+saved_hooks',
    96: 'raises-only-torch @ add_',
    106: 'hook-log @ layer_norm+saved_hooks',
    115: 'hook-log @ atan2+saved_hooks (unpack order: PyTorch unpacks other, then self)',
    116: 'hook-log @ cross_entropy+saved_hooks (total_weight not saved)',
    123: 'hook-log @ conv1d+saved_hooks',
    135: 'value @ multi_output',
    145: 'hook-log @ layer_norm+saved_hooks',
    160: 'hook-log @ nll_loss+saved_hooks',
    203: 'grad_fn @ inplace',
    206: 'grad_fn @ inplace',
    215: 'hook-log @ conv1d+saved_hooks',
    241: 'hook-log @ layer_norm+saved_hooks',
    261: 'hook-log @ cross_entropy+saved_hooks',
    267: 'value @ layer_norm+saved_hooks',
    274: 'hook-log @ cross_entropy+saved_hooks',
    281: 'hook-log @ layer_norm+saved_hooks',
    293: 'shape @ mask+saved_hooks',
    294: 'shape @ backward',
    298: 'value @ grad',
    # seeds 300-399 (beyond test_fuzz.py's range; from ``--seeds 300:400``)
    304: 'shape @ einsum+saved_hooks',
    309: 'hook-log @ nll_loss+saved_hooks (total_weight not saved)',
    316: 'raises-only-torch @ setitem',
    321: 'hook-log @ inputs',
    324: 'hook-log @ nll_loss+saved_hooks (total_weight not saved)',
    340: 'structure @ grad',
    344: 'grad_fn @ inplace',
    368: 'raises-only-torch @ setitem',
    377: 'shape @ mask+saved_hooks',
    390: 'error-type @ index_select (PyTorch CPU: RuntimeError for dim > 0)',
    396: 'shape @ mask+saved_hooks',
}
