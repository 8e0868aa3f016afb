"""``hookgrad.distributed.algorithms``: DDP communication hooks (``ddp_comm_hooks``)."""


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
