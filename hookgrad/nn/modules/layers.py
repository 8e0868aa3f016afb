"""Layer classes: the index that modules/__init__ star-imports."""
__all__ = []

from . import activation, conv, dropout, flatten, loss, normalization, pooling  # noqa: E402
from . import sparse, transformer  # noqa: E402
from .activation import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .dropout import *  # noqa: E402,F401,F403
from .flatten import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
from .normalization import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .sparse import *  # noqa: E402,F401,F403
from .transformer import *  # noqa: E402,F401,F403
for _m in (activation, conv, dropout, flatten, loss, normalization, pooling, sparse,
           transformer):
    __all__ += _m.__all__
del _m

from . import distance, upsampling  # noqa: E402
from .distance import *  # noqa: E402,F401,F403
from .upsampling import *  # noqa: E402,F401,F403
__all__ += distance.__all__ + upsampling.__all__

from .container import Container, ParameterDict, ParameterList  # noqa: E402
from .linear import Bilinear, Identity, Linear  # noqa: E402
__all__ += ["Identity", "Linear", "Bilinear", "ParameterList", "ParameterDict", "Container"]

from . import channelshuffle, fold, padding, pixelshuffle  # noqa: E402
from .channelshuffle import *  # noqa: E402,F401,F403
from .fold import *  # noqa: E402,F401,F403
from .padding import *  # noqa: E402,F401,F403
from .pixelshuffle import *  # noqa: E402,F401,F403
__all__ += channelshuffle.__all__ + fold.__all__ + padding.__all__ + pixelshuffle.__all__

from . import lazy  # noqa: E402
from .lazy import *  # noqa: E402,F401,F403
__all__ += lazy.__all__

from . import rnn  # noqa: E402
from .rnn import *  # noqa: E402,F401,F403
__all__ += rnn.__all__

from .batchnorm import SyncBatchNorm  # noqa: E402
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: E402
__all__ += ["SyncBatchNorm", "AdaptiveLogSoftmaxWithLoss", "LinearCrossEntropyOptions"]


from ... import _missing  # noqa: E402
__getattr__ = _missing.module_getattr(__name__)
