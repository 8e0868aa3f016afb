"""``torch.nn.modules.batchnorm``: the batch-norm layers and their bases at PyTorch's path
(hookgrad defines ``BatchNorm1d/2d/3d`` in ``normalization``), and ``SyncBatchNorm``."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose statistics cover the whole batch, over any number of dims
    ``(N, C, *)``.

    ::

        SyncBatchNorm(num_features, eps=1e-05, momentum=0.1, affine=True,
                      track_running_stats=True, process_group=None, device=None, dtype=None,
                      *, bias=True)

    In hookgrad a batch is one array, sharded or not: the statistics are those of the whole
    batch (across devices when it is sharded, as XLA computes them), so there is nothing to
    synchronize; ``process_group`` is kept for PyTorch's API.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every ``BatchNorm*d`` layer in it replaced by a ``SyncBatchNorm``
        sharing its parameters, running statistics and training flag (a ``BatchNorm*d``
        ``module`` itself is returned converted)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
