"""torchvision's ``_C`` extension, defined on hookgrad: the ``torchvision::`` operators.

Same names and schemas as torchvision's C++ registrations, so ``torch.ops.torchvision.*``
and torchvision's own Python (its ``register_fake`` and ``register_autograd`` calls, which
add the backward formulas) find what they expect. ``nms``, ``roi_align`` and
``_roi_align_backward`` compute (``hookgrad._ops.vision``); the other detection kernels
are defined with their schemas and raise "hookgrad does not implement" when called.
"""
from .. import _missing
from .._ops import vision
from ..library import custom_op

_NOT_IMPLEMENTED = {
    "roi_pool": "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                "SymInt pooled_width) -> (Tensor, Tensor)",
    "_roi_pool_backward": "(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, "
                          "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, "
                          "SymInt channels, SymInt height, SymInt width) -> Tensor",
    "ps_roi_align": "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                    "SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
    "_ps_roi_align_backward": "(Tensor grad, Tensor rois, Tensor channel_mapping, "
                              "float spatial_scale, SymInt pooled_height, SymInt pooled_width,"
                              " int sampling_ratio, SymInt batch_size, SymInt channels, "
                              "SymInt height, SymInt width) -> Tensor",
    "ps_roi_pool": "(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                   "SymInt pooled_width) -> (Tensor, Tensor)",
    "_ps_roi_pool_backward": "(Tensor grad, Tensor rois, Tensor channel_mapping, "
                             "float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                             "SymInt batch_size, SymInt channels, SymInt height, SymInt width)"
                             " -> Tensor",
    "deform_conv2d": "(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
                     "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, "
                     "SymInt dilation_h, SymInt dilation_w, SymInt groups, "
                     "SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward": "(Tensor grad, Tensor input, Tensor weight, Tensor offset, "
                               "Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, "
                               "SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
                               "SymInt dilation_w, SymInt groups, SymInt offset_groups, "
                               "bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "qnms": "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qroi_align": "(Tensor input, Tensor rois, float input_scale, int input_zero_point, "
                  "float rois_scale, int rois_zero_point, float spatial_scale, "
                  "SymInt pooled_height, SymInt pooled_width, int sampling_ratio, "
                  "bool aligned) -> Tensor",
}


def _cuda_version():
    return -1  # hookgrad's kernels are not CUDA builds of torchvision


custom_op("torchvision::_cuda_version", _cuda_version, mutates_args=(),
          schema="() -> int")
custom_op("torchvision::nms", vision.nms, mutates_args=(),
          schema="(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
custom_op("torchvision::roi_align", vision.roi_align, mutates_args=(),
          schema="(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                 "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor")
custom_op("torchvision::_roi_align_backward", vision.roi_align_backward, mutates_args=(),
          schema="(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
                 "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, "
                 "SymInt width, int sampling_ratio, bool aligned) -> Tensor")
for _name, _schema in _NOT_IMPLEMENTED.items():
    custom_op(f"torchvision::{_name}", _missing.not_implemented(f"torch.ops.torchvision.{_name}"),
              mutates_args=(), schema=_schema)
