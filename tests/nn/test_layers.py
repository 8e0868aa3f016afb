"""Layer classes against torch.nn: parameter and buffer names and shapes, state_dict keys,
repr, outputs and gradients with torch's weights copied in; default initialisation and
constructor errors."""
import math
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
import hookgrad.nn as nn

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
_rng = np.random.default_rng(0)


def r(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _copy_from_torch(hm, tm):
    """Write torch's parameter and buffer values into the hookgrad module."""
    mine = dict(hm.named_parameters())
    mine.update(dict(hm.named_buffers()))
    for name, t in list(tm.named_parameters()) + list(tm.named_buffers()):
        arr = t.detach().numpy()
        mine[name]._data = jnp.asarray(arr, mine[name]._data.dtype)


def _spec(m):
    return ([(n, tuple(p.shape)) for n, p in m.named_parameters()],
            [(n, tuple(b.shape)) for n, b in m.named_buffers()],
            list(m.state_dict().keys()))


# (id, constructor(nn), input arrays builder, output index or None, train mode)
LAYERS = [
    ("conv1d", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), lambda: [r(2, 3, 9)]),
    ("conv2d_same_nobias", lambda nn: nn.Conv2d(3, 4, 3, padding="same", bias=False),
     lambda: [r(2, 3, 6, 6)]),
    ("conv2d_groups_reflect", lambda nn: nn.Conv2d(4, 6, 3, padding=1, groups=2,
                                                   padding_mode="reflect"),
     lambda: [r(2, 4, 6, 6)]),
    ("conv2d_circular_same", lambda nn: nn.Conv2d(3, 2, (2, 3), padding="same",
                                                  padding_mode="circular"),
     lambda: [r(2, 3, 6, 6)]),
    ("conv_transpose2d", lambda nn: nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1,
                                                       output_padding=1),
     lambda: [r(2, 3, 5, 5)]),
    ("maxpool2d", lambda nn: nn.MaxPool2d(2), lambda: [r(2, 3, 6, 6)]),
    ("maxpool1d", lambda nn: nn.MaxPool1d(3, 2, 1), lambda: [r(2, 3, 9)]),
    ("avgpool2d", lambda nn: nn.AvgPool2d(3, 2, 1), lambda: [r(2, 3, 6, 6)]),
    ("avgpool1d", lambda nn: nn.AvgPool1d(3), lambda: [r(2, 3, 9)]),
    ("adaptive_avgpool2d", lambda nn: nn.AdaptiveAvgPool2d((2, 3)), lambda: [r(2, 3, 6, 6)]),
    ("adaptive_avgpool1d", lambda nn: nn.AdaptiveAvgPool1d(4), lambda: [r(2, 3, 9)]),
    ("batchnorm1d", lambda nn: nn.BatchNorm1d(3), lambda: [r(4, 3)]),
    ("batchnorm2d", lambda nn: nn.BatchNorm2d(3, momentum=0.2), lambda: [r(2, 3, 4, 4)]),
    ("batchnorm2d_no_affine", lambda nn: nn.BatchNorm2d(3, affine=False),
     lambda: [r(2, 3, 4, 4)]),
    ("batchnorm2d_no_stats", lambda nn: nn.BatchNorm2d(3, track_running_stats=False),
     lambda: [r(2, 3, 4, 4)]),
    ("layernorm", lambda nn: nn.LayerNorm(4), lambda: [r(2, 3, 4)]),
    ("layernorm_nobias", lambda nn: nn.LayerNorm((3, 4), bias=False), lambda: [r(2, 3, 4)]),
    ("groupnorm", lambda nn: nn.GroupNorm(2, 4), lambda: [r(2, 4, 3)]),
    ("rmsnorm", lambda nn: nn.RMSNorm(4), lambda: [r(2, 3, 4)]),
    ("embedding", lambda nn: nn.Embedding(10, 4, padding_idx=0),
     lambda: [np.array([[0, 3, 9], [2, 2, 0]])]),
    ("dropout_eval", lambda nn: nn.Dropout(0.3).eval(), lambda: [r(2, 3)]),
    ("relu", lambda nn: nn.ReLU(), lambda: [r(2, 3)]),
    ("relu6", lambda nn: nn.ReLU6(), lambda: [r(2, 3) * 4]),
    ("gelu_tanh", lambda nn: nn.GELU("tanh"), lambda: [r(2, 3)]),
    ("silu", lambda nn: nn.SiLU(), lambda: [r(2, 3)]),
    ("tanh", lambda nn: nn.Tanh(), lambda: [r(2, 3)]),
    ("sigmoid", lambda nn: nn.Sigmoid(), lambda: [r(2, 3)]),
    ("softmax", lambda nn: nn.Softmax(dim=1), lambda: [r(2, 3)]),
    ("logsoftmax", lambda nn: nn.LogSoftmax(dim=-1), lambda: [r(2, 3)]),
    ("leaky_relu", lambda nn: nn.LeakyReLU(0.2), lambda: [r(2, 3)]),
    ("elu", lambda nn: nn.ELU(0.5), lambda: [r(2, 3)]),
    ("softplus", lambda nn: nn.Softplus(2.0, 5.0), lambda: [r(2, 3)]),
    ("prelu", lambda nn: nn.PReLU(3), lambda: [r(2, 3)]),
    ("flatten", lambda nn: nn.Flatten(), lambda: [r(2, 3, 2, 2)]),
    ("unflatten", lambda nn: nn.Unflatten(1, (2, 2)), lambda: [r(3, 4)]),
    ("mha", lambda nn: nn.MultiheadAttention(8, 2), lambda: [r(5, 2, 8)] * 3),
    ("mha_batch_first_kv", lambda nn: nn.MultiheadAttention(8, 2, batch_first=True, kdim=6,
                                                            vdim=4),
     lambda: [r(2, 5, 8), r(2, 3, 6), r(2, 3, 4)]),
    ("mha_bias_kv_zero_attn", lambda nn: nn.MultiheadAttention(8, 4, add_bias_kv=True,
                                                               add_zero_attn=True, bias=False),
     lambda: [r(5, 2, 8), r(3, 2, 8), r(3, 2, 8)]),
    ("encoder_layer", lambda nn: nn.TransformerEncoderLayer(8, 2, 16).eval(),
     lambda: [r(5, 2, 8)]),
    ("encoder_layer_norm_first_gelu", lambda nn: nn.TransformerEncoderLayer(
        8, 2, 16, activation="gelu", norm_first=True, batch_first=True).eval(),
     lambda: [r(2, 5, 8)]),
    ("encoder", lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(
        8, 2, 16, batch_first=True, dropout=0.0), 2, norm=nn.LayerNorm(8),
        enable_nested_tensor=False), lambda: [r(2, 5, 8)]),
    ("upsample_bilinear", lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"),
     lambda: [r(1, 2, 3, 4)]),
    ("upsample_nearest_size", lambda nn: nn.Upsample(size=(5, 3)), lambda: [r(1, 2, 3, 4)]),
    ("upsample_trilinear_corners", lambda nn: nn.Upsample(
        scale_factor=(1.5, 2.0, 1.0), mode="trilinear", align_corners=True),
     lambda: [r(1, 1, 2, 3, 2)]),
    ("upsampling_nearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
     lambda: [r(1, 2, 3, 4)]),
    ("upsampling_bilinear2d", lambda nn: nn.UpsamplingBilinear2d(size=(5, 7)),
     lambda: [r(1, 2, 3, 4)]),
    ("maxpool3d", lambda nn: nn.MaxPool3d(2, padding=1), lambda: [r(1, 2, 3, 4, 4)]),
    ("avgpool3d", lambda nn: nn.AvgPool3d((1, 2, 2), count_include_pad=False, padding=(0, 1, 1)),
     lambda: [r(1, 2, 3, 4, 4)]),
    ("adaptive_avgpool3d", lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)),
     lambda: [r(1, 2, 3, 4, 5)]),
    ("adaptive_maxpool2d", lambda nn: nn.AdaptiveMaxPool2d((3, 2)), lambda: [r(2, 3, 7, 5)]),
    ("adaptive_maxpool2d_indices", lambda nn: nn.AdaptiveMaxPool2d(3, return_indices=True),
     lambda: [r(3, 4, 4)]),
    ("adaptive_maxpool1d", lambda nn: nn.AdaptiveMaxPool1d(4), lambda: [r(2, 3, 9)]),
    ("instancenorm1d", lambda nn: nn.InstanceNorm1d(3), lambda: [r(2, 3, 5)]),
    ("instancenorm1d_unbatched_stats", lambda nn: nn.InstanceNorm1d(
        3, affine=True, track_running_stats=True, momentum=0.3), lambda: [r(3, 5)]),
    ("instancenorm2d_affine_stats", lambda nn: nn.InstanceNorm2d(
        3, affine=True, track_running_stats=True), lambda: [r(2, 3, 4, 4)]),
    ("instancenorm2d_stats_eval", lambda nn: nn.InstanceNorm2d(
        3, track_running_stats=True).eval(), lambda: [r(2, 3, 4, 4)]),
    ("instancenorm3d", lambda nn: nn.InstanceNorm3d(2, affine=True), lambda: [r(1, 2, 2, 3, 2)]),
    ("cosine_similarity", lambda nn: nn.CosineSimilarity(dim=0, eps=1e-6),
     lambda: [r(3, 4), r(3, 4)]),
    ("pairwise_distance", lambda nn: nn.PairwiseDistance(p=1.5, keepdim=True),
     lambda: [r(3, 4), r(3, 4)]),
    ("embedding_bag_offsets", lambda nn: nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2),
     lambda: [np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 3, 3])]),
    ("embedding_bag_2d_max", lambda nn: nn.EmbeddingBag(10, 3, mode="max"),
     lambda: [np.array([[1, 2, 4], [5, 4, 9]])]),
    ("embedding_bag_last_offset", lambda nn: nn.EmbeddingBag(10, 3, include_last_offset=True),
     lambda: [np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 6])]),
    ("zero_pad1d", lambda nn: nn.ZeroPad1d((2, 1)), lambda: [r(2, 3, 4)]),
    ("zero_pad2d", lambda nn: nn.ZeroPad2d((1, 1, 2, 0)), lambda: [r(2, 3, 4, 4)]),
    ("zero_pad3d_crop", lambda nn: nn.ZeroPad3d((1, -1, 0, 2, 1, 0)), lambda: [r(1, 2, 3, 3, 3)]),
    ("constant_pad1d", lambda nn: nn.ConstantPad1d(2, 3.5), lambda: [r(3, 4)]),
    ("constant_pad2d", lambda nn: nn.ConstantPad2d((1, 0, 2, 1), -1.0), lambda: [r(2, 3, 4)]),
    ("constant_pad3d", lambda nn: nn.ConstantPad3d(1, 0.5), lambda: [r(1, 2, 2, 3, 2)]),
    ("reflection_pad1d", lambda nn: nn.ReflectionPad1d((3, 1)), lambda: [r(2, 3, 5)]),
    ("reflection_pad2d", lambda nn: nn.ReflectionPad2d(2), lambda: [r(2, 3, 4, 4)]),
    ("reflection_pad3d", lambda nn: nn.ReflectionPad3d((1, 0, 2, 1, 0, 1)),
     lambda: [r(1, 2, 3, 4, 3)]),
    ("replication_pad1d", lambda nn: nn.ReplicationPad1d((0, 3)), lambda: [r(2, 3, 5)]),
    ("replication_pad2d", lambda nn: nn.ReplicationPad2d((1, 2, 0, 3)), lambda: [r(3, 4, 4)]),
    ("replication_pad3d", lambda nn: nn.ReplicationPad3d(1), lambda: [r(1, 2, 2, 3, 2)]),
    ("circular_pad1d", lambda nn: nn.CircularPad1d((2, 1)), lambda: [r(2, 3, 5)]),
    ("circular_pad2d", lambda nn: nn.CircularPad2d((1, 2, 2, 0)), lambda: [r(2, 3, 4, 4)]),
    ("circular_pad3d", lambda nn: nn.CircularPad3d(1), lambda: [r(1, 2, 2, 3, 2)]),
    ("conv_transpose3d", lambda nn: nn.ConvTranspose3d(
        4, 2, (2, 3, 2), stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 1, 2)),
     lambda: [r(1, 4, 3, 3, 4)]),
    ("adaptive_maxpool3d", lambda nn: nn.AdaptiveMaxPool3d((2, None, 3)),
     lambda: [r(2, 2, 5, 3, 7)]),
    ("adaptive_maxpool3d_indices", lambda nn: nn.AdaptiveMaxPool3d(2, return_indices=True),
     lambda: [r(2, 3, 5, 4)]),
    ("pixel_shuffle", lambda nn: nn.PixelShuffle(2), lambda: [r(2, 8, 3, 2)]),
    ("decoder_layer", lambda nn: nn.TransformerDecoderLayer(8, 2, 16).eval(),
     lambda: [r(4, 2, 8), r(5, 2, 8)]),
    ("decoder_layer_norm_first_gelu", lambda nn: nn.TransformerDecoderLayer(
        8, 2, 16, activation="gelu", norm_first=True, batch_first=True).eval(),
     lambda: [r(2, 4, 8), r(2, 5, 8)]),
    ("decoder", lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(
        8, 2, 16, batch_first=True, dropout=0.0), 2, norm=nn.LayerNorm(8)),
     lambda: [r(2, 4, 8), r(2, 5, 8)]),
    ("transformer", lambda nn: nn.Transformer(8, 2, 1, 2, 16, dropout=0.0),
     lambda: [r(5, 2, 8), r(4, 2, 8)]),
    ("rrelu_eval", lambda nn: nn.RReLU(0.1, 0.3).eval(), lambda: [r(3, 4)]),
    ("alpha_dropout_eval", lambda nn: nn.AlphaDropout(0.3).eval(), lambda: [r(3, 4)]),
    ("feature_alpha_dropout_eval", lambda nn: nn.FeatureAlphaDropout(0.3).eval(),
     lambda: [r(2, 3, 4)]),
    ("nll_loss2d", lambda nn: nn.NLLLoss2d(ignore_index=1),
     lambda: [r(2, 3, 2, 2), np.array([[[0, 1], [2, 2]], [[1, 0], [0, 2]]])]),
    ("lppool1d", lambda nn: nn.LPPool1d(1.5, 2, 1, True), lambda: [np.abs(r(2, 3, 7))]),
    ("lppool2d", lambda nn: nn.LPPool2d(2, 3), lambda: [r(2, 3, 6, 6)]),
    ("lppool3d", lambda nn: nn.LPPool3d(2, (1, 2, 2)), lambda: [r(1, 2, 3, 4, 4)]),
    ("local_response_norm", lambda nn: nn.LocalResponseNorm(3, k=2.0), lambda: [r(2, 5, 3, 3)]),
    ("pixel_unshuffle", lambda nn: nn.PixelUnshuffle(2), lambda: [r(2, 2, 4, 6)]),
    ("channel_shuffle", lambda nn: nn.ChannelShuffle(2), lambda: [r(2, 4, 3)]),
    ("unfold", lambda nn: nn.Unfold((2, 3), padding=1, stride=2), lambda: [r(2, 3, 5, 5)]),
    ("fold", lambda nn: nn.Fold((4, 5), 2), lambda: [r(2, 12, 12)]),
    ("softmax2d", lambda nn: nn.Softmax2d(), lambda: [r(2, 3, 4, 4)]),
    ("cosine_embedding_loss", lambda nn: nn.CosineEmbeddingLoss(0.1),
     lambda: [r(3, 4), r(3, 4), np.array([1.0, -1.0, -1.0], np.float32)]),
    ("hinge_embedding_loss", lambda nn: nn.HingeEmbeddingLoss(0.5),
     lambda: [r(3, 4), np.sign(r(3, 4))]),
    ("margin_ranking_loss", lambda nn: nn.MarginRankingLoss(0.2, reduction="sum"),
     lambda: [r(4), r(4), np.sign(r(4))]),
    ("multi_margin_loss", lambda nn: nn.MultiMarginLoss(p=2, margin=0.7),
     lambda: [r(3, 4), np.array([0, 3, 1])]),
    ("multilabel_margin_loss", lambda nn: nn.MultiLabelMarginLoss(),
     lambda: [r(2, 4), np.array([[3, 0, -1, 1], [1, 2, 3, 0]])]),
    ("multilabel_soft_margin_loss", lambda nn: nn.MultiLabelSoftMarginLoss(),
     lambda: [r(3, 4), (r(3, 4) > 0).astype(np.float32)]),
    ("poisson_nll_loss", lambda nn: nn.PoissonNLLLoss(full=True),
     lambda: [r(3, 4), np.abs(r(3, 4)) * 3]),
    ("gaussian_nll_loss", lambda nn: nn.GaussianNLLLoss(eps=1e-3),
     lambda: [r(3, 4), r(3, 4), np.abs(r(3, 4))]),
    ("triplet_margin_loss", lambda nn: nn.TripletMarginLoss(margin=0.5, p=1.5, swap=True),
     lambda: [r(3, 4), r(3, 4), r(3, 4)]),
    ("triplet_margin_with_distance_loss", lambda nn: nn.TripletMarginWithDistanceLoss(
        margin=2.0), lambda: [r(3, 4), r(3, 4), r(3, 4)]),
]


def _make(builder, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return builder(lib)


def _forward(m, L, arrays, first_float_grad=True):
    ts = []
    for a in arrays:
        t = L.tensor(a)
        if np.issubdtype(a.dtype, np.floating):
            t.requires_grad_(True)
        ts.append(t)
    if len({id(a) for a in arrays}) == 1 and len(arrays) > 1:
        ts = [ts[0]] * len(arrays)   # self-attention: the same tensor three times
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = m(*ts)
    if isinstance(out, tuple):
        out = out[0]
    return ts, out


@needs_torch
@pytest.mark.parametrize("name,builder,inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(name, builder, inputs):
    torch.manual_seed(0)
    tm = _make(builder, torch.nn)
    hm = _make(builder, nn)
    assert _spec(hm) == _spec(tm)
    assert repr(hm) == repr(tm)
    _copy_from_torch(hm, tm)
    arrays = inputs()
    hts, hout = _forward(hm, hookgrad, arrays)
    tts, tout = _forward(tm, torch, arrays)
    np.testing.assert_allclose(hout.detach().numpy(), tout.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    if tout.requires_grad:
        g = _rng.standard_normal(tuple(tout.shape)).astype(np.float32)
        hout.backward(hookgrad.tensor(g))
        tout.backward(torch.tensor(g))
        hp, tp = dict(hm.named_parameters()), dict(tm.named_parameters())
        for k in tp:
            if tp[k].grad is None:
                assert hp[k].grad is None or not np.any(hp[k].grad.numpy()), k
            else:
                np.testing.assert_allclose(hp[k].grad.numpy(), tp[k].grad.numpy(), rtol=1e-4,
                                           atol=1e-5, err_msg=k)
        for a, b in zip(hts, tts):
            if b.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)
    # buffers after the forward (running statistics)
    hb, tb = dict(hm.named_buffers()), dict(tm.named_buffers())
    for k in tb:
        np.testing.assert_allclose(np.asarray(hb[k].numpy(), np.float64),
                                   tb[k].numpy().astype(np.float64), rtol=1e-5, atol=1e-6,
                                   err_msg=k)


@needs_torch
def test_mha_masks_and_weights_match_torch():
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    hm = nn.MultiheadAttention(8, 2, batch_first=True)
    _copy_from_torch(hm, tm)
    x = r(2, 4, 8)
    am = np.triu(np.ones((4, 4), bool), 1)
    kpm = np.array([[False, False, False, True], [False] * 4])
    for kw in ({"need_weights": True}, {"need_weights": True, "average_attn_weights": False},
               {"need_weights": False}):
        h = hm(*[hookgrad.tensor(x)] * 3, attn_mask=hookgrad.tensor(am),
               key_padding_mask=hookgrad.tensor(kpm), **kw)
        t = tm(*[torch.tensor(x)] * 3, attn_mask=torch.tensor(am),
               key_padding_mask=torch.tensor(kpm), **kw)
        np.testing.assert_allclose(h[0].detach().numpy(), t[0].detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        if t[1] is None:
            assert h[1] is None
        else:
            np.testing.assert_allclose(h[1].detach().numpy(), t[1].detach().numpy(), rtol=1e-4,
                                       atol=1e-6)


@needs_torch
def test_encoder_causal_mask_matches_torch():
    torch.manual_seed(0)
    build = lambda nn: nn.TransformerEncoder(  # noqa: E731
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 1,
        enable_nested_tensor=False)
    tm, hm = build(torch.nn), build(nn)
    _copy_from_torch(hm, tm)
    x = r(2, 5, 8)
    mask = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
    kpm = np.array([[False] * 4 + [True], [False] * 5])
    h = hm(hookgrad.tensor(x), mask=hookgrad.tensor(mask),
           src_key_padding_mask=hookgrad.tensor(kpm))
    t = tm(torch.tensor(x), mask=torch.tensor(mask), src_key_padding_mask=torch.tensor(kpm))
    np.testing.assert_allclose(h.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)


LOSSES = [
    ("mse", lambda nn: nn.MSELoss(), "reg"),
    ("l1_sum", lambda nn: nn.L1Loss(reduction="sum"), "reg"),
    ("smooth_l1", lambda nn: nn.SmoothL1Loss(beta=0.5), "reg"),
    ("huber", lambda nn: nn.HuberLoss(delta=0.5), "reg"),
    ("bce", lambda nn: nn.BCELoss(), "prob"),
    ("bce_logits_pos_weight", lambda nn: nn.BCEWithLogitsLoss(
        pos_weight=(torch if nn is torch.nn else hookgrad).tensor([1.0, 2.0, 3.0, 0.5])),
     "reg"),
    ("kl_div", lambda nn: nn.KLDivLoss(reduction="batchmean"), "reg"),
    ("nll", lambda nn: nn.NLLLoss(ignore_index=2), "cls"),
    ("cross_entropy_weight", lambda nn: nn.CrossEntropyLoss(
        weight=(torch if nn is torch.nn else hookgrad).tensor([1.0, 2.0, 0.5, 1.0]),
        label_smoothing=0.1), "cls"),
]


@needs_torch
@pytest.mark.parametrize("name,builder,kind", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_modules_match_torch(name, builder, kind):
    x = r(3, 4)
    target = {"reg": _rng.uniform(0, 1, (3, 4)).astype(np.float32),
              "prob": _rng.uniform(0, 1, (3, 4)).astype(np.float32),
              "cls": np.array([0, 2, 3])}[kind]
    if kind == "prob":
        x = 1 / (1 + np.exp(-x))
    hm, tm = builder(nn), builder(torch.nn)
    assert _spec(hm) == _spec(tm)
    assert repr(hm) == repr(tm)
    hx, tx = hookgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    h, t = hm(hx, hookgrad.tensor(target)), tm(tx, torch.tensor(target))
    np.testing.assert_allclose(h.item(), t.item(), rtol=1e-5)
    h.backward()
    t.backward()
    np.testing.assert_allclose(hx.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)


# ----------------------------------------------------------------- without torch


def test_batchnorm_train_eval_and_num_batches_tracked():
    bn = nn.BatchNorm2d(2)
    assert bn.num_batches_tracked.item() == 0
    x = hookgrad.tensor(r(4, 2, 3, 3) * 2 + 1)
    y = bn(x)
    assert bn.num_batches_tracked.item() == 1
    yn = y.detach().numpy()
    np.testing.assert_allclose(yn.mean((0, 2, 3)), 0, atol=1e-5)
    np.testing.assert_allclose(yn.var((0, 2, 3)), 1, rtol=1e-3)
    xn = x.numpy()
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * xn.mean((0, 2, 3)), rtol=1e-5)
    bn.eval()
    rm, rv = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    y2 = bn(x).detach().numpy()
    np.testing.assert_allclose(y2, (xn - rm[:, None, None]) / np.sqrt(rv[:, None, None] + 1e-5),
                               rtol=1e-5, atol=1e-5)
    assert bn.num_batches_tracked.item() == 1


def test_batchnorm_momentum_none_is_cumulative_average():
    bn = nn.BatchNorm1d(2, momentum=None)
    a, b = r(8, 2), r(8, 2) + 3
    bn(hookgrad.tensor(a))
    bn(hookgrad.tensor(b))
    np.testing.assert_allclose(bn.running_mean.numpy(), (a.mean(0) + b.mean(0)) / 2, rtol=1e-5)


def test_batchnorm_input_dim_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(hookgrad.tensor(r(2, 3, 4)))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(hookgrad.tensor(r(2, 3, 4, 4)))


def test_dropout_module_train_vs_eval():
    hookgrad.manual_seed(0)
    d = nn.Dropout(0.5)
    x = hookgrad.ones(100)
    y = d(x).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).mean() < 1
    d.eval()
    assert d(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(-0.1)


def test_default_init_distributions():
    hookgrad.manual_seed(0)
    conv = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)
    w = conv.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    b = conv.bias.detach().numpy()
    assert np.abs(b).max() <= bound
    emb = nn.Embedding(200, 50, padding_idx=3)
    e = emb.weight.detach().numpy()
    np.testing.assert_array_equal(e[3], 0)
    assert abs(e.std() - 1) < 0.05 and abs(e.mean()) < 0.05
    mha = nn.MultiheadAttention(16, 4)
    a = math.sqrt(6 / (16 + 48))
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= a
    np.testing.assert_array_equal(mha.in_proj_bias.detach().numpy(), 0)
    np.testing.assert_array_equal(mha.out_proj.bias.detach().numpy(), 0)
    ln = nn.LayerNorm(5)
    np.testing.assert_array_equal(ln.weight.detach().numpy(), 1)
    np.testing.assert_array_equal(ln.bias.detach().numpy(), 0)
    for m in (conv, emb, mha, ln):
        for p in m.parameters():
            assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_embedding_padding_row_gets_no_grad_and_from_pretrained():
    emb = nn.Embedding(5, 2, padding_idx=-1)
    assert emb.padding_idx == 4
    emb(hookgrad.tensor([4, 1, 4])).sum().backward()
    g = emb.weight.grad.numpy()
    np.testing.assert_array_equal(g[4], 0)
    np.testing.assert_array_equal(g[1], 1)
    w = hookgrad.tensor(r(3, 2))
    pre = nn.Embedding.from_pretrained(w)
    assert not pre.weight.requires_grad
    np.testing.assert_array_equal(pre(hookgrad.tensor([2])).numpy(), w.numpy()[[2]])
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_conv_constructor_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(3, 4, 3, padding="full")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        nn.Conv2d(3, 4, 3, padding="same", stride=2)
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for '
                                         'ConvTranspose2d'):
        nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect")


def test_conv_transpose_output_size():
    m = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = hookgrad.tensor(r(1, 2, 4, 4))
    assert m(x).shape == (1, 3, 7, 7)
    assert m(x, output_size=[8, 8]).shape == (1, 3, 8, 8)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(x, output_size=[10, 10])


def test_transformer_layer_errors_and_attributes():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but "
                                         "self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(layer, 2)
    assert len(enc.layers) == 2 and enc.layers[0] is not enc.layers[1]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(enc.layers[0].linear1.weight.detach().numpy(),
                                  enc.layers[1].linear1.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer.self_attn(*[hookgrad.tensor(r(3, 1, 8))] * 3, is_causal=True)


def test_loss_modules_register_weight_buffers():
    w = hookgrad.tensor([1.0, 2.0])
    ce = nn.CrossEntropyLoss(weight=w)
    assert ce.weight is w and list(ce.state_dict()) == ["weight"]
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    bce = nn.BCEWithLogitsLoss(pos_weight=w)
    assert list(bce.state_dict()) == ["pos_weight"]
    assert nn.MSELoss(size_average=False).reduction == "sum"
    assert nn.L1Loss(reduce=False).reduction == "none"



def public_bases(cls):
    return [b.__name__ for b in cls.__mro__ if not b.__name__.startswith("_")]


@needs_torch
def test_every_layer_has_pytorchs_public_bases():
    """The public classes over each layer are PyTorch's: an AvgPool3d is no AvgPool2d, a
    LazyBatchNorm1d no BatchNorm1d until it becomes one, a DataParallel a Generic."""
    layers = [n for n in dir(torch.nn) if isinstance(getattr(torch.nn, n), type)
              and issubclass(getattr(torch.nn, n), torch.nn.Module) and hasattr(nn, n)]
    assert len(layers) > 150
    assert {n: public_bases(getattr(nn, n)) for n in layers} == {
        n: public_bases(getattr(torch.nn, n)) for n in layers}


def test_a_lazy_norm_checks_its_rank_and_becomes_its_layer():
    m = nn.LazyBatchNorm1d()
    assert not isinstance(m, nn.BatchNorm1d)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        m(hookgrad.ones(2, 3, 4, 5))
    m(hookgrad.ones(2, 3))
    assert type(m) is nn.BatchNorm1d and m.num_features == 3
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.LazyInstanceNorm2d()(hookgrad.ones(2, 3))


# name, then two ways of building it: (args, kwargs) each
_ONE_CALL_LAYERS = [
    ("ReLU", (), {}, (), {"inplace": True}), ("SiLU", (), {}, (), {"inplace": True}),
    ("Mish", (), {}, (), {"inplace": True}), ("Hardswish", (), {}, (), {"inplace": True}),
    ("Hardsigmoid", (), {}, (), {"inplace": True}), ("SELU", (), {}, (), {"inplace": True}),
    ("ReLU6", (), {}, (), {"inplace": True}), ("ELU", (), {}, (0.5,), {"inplace": True}),
    ("CELU", (), {}, (0.5,), {"inplace": True}), ("Softshrink", (), {}, (0.3,), {}),
    ("Hardshrink", (), {}, (0.3,), {}), ("GLU", (), {}, (1,), {}),
    ("PixelShuffle", (2,), {}, (3,), {}), ("PixelUnshuffle", (2,), {}, (3,), {}),
    ("ChannelShuffle", (2,), {}, (), {"groups": 4}),
    ("LeakyReLU", (), {}, (0.2, True), {}), ("Softplus", (), {}, (2.0, 10.0), {}),
    ("Hardtanh", (), {}, (-2.0, 3.0, True), {}),
    ("Hardtanh", (), {"min_value": -2.0}, (), {"max_value": 3.0}),  # deprecated names
    ("Threshold", (0.1, 2.0), {}, (0.1, 2.0, True), {}),
    ("LPPool1d", (1.5, 2), {}, (2, 3, 1, True), {}), ("LPPool3d", (2, (1, 2, 2)), {}, (), {
        "norm_type": 1, "kernel_size": 2, "ceil_mode": True}),
    ("Unfold", ((2, 3),), {}, (2,), {"padding": 1, "stride": 2}),
    ("Fold", ((4, 5), 2), {}, ((4, 5), (2, 2), 1, 1), {"stride": 2}),
]


@needs_torch
@pytest.mark.parametrize("name,args,kwargs,args2,kwargs2", _ONE_CALL_LAYERS,
                         ids=[c[0] for c in _ONE_CALL_LAYERS])
def test_one_call_layers_keep_pytorchs_classes(name, args, kwargs, args2, kwargs2):
    """Layers built on a shared private base: PyTorch's public bases (a SiLU is no ReLU, a
    ReLU6 is a Hardtanh), repr, module and a pickle round trip."""
    import pickle

    hcls, tcls = getattr(nn, name), getattr(torch.nn, name)
    assert public_bases(hcls) == public_bases(tcls)
    assert hcls.__module__ == tcls.__module__.replace("torch", "hookgrad", 1)
    for a, kw in ((args, kwargs), (args2, kwargs2)):
        hm = hcls(*a, **kw)
        assert repr(hm) == repr(tcls(*a, **kw))
        assert repr(pickle.loads(pickle.dumps(hm))) == repr(hm)
