"""The CPU dropout (hashlib_core.dropout): nn.Dropout's semantics with a cheaper mask."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from hashlib_core.dropout import Dropout, keep_mask, replace_dropout


def test_mask_rate_is_p_quantised_to_16_bits():
    torch.manual_seed(0)
    keep = keep_mask((400, 1000), 0.1)
    assert keep.dtype == torch.bool and keep.shape == (400, 1000)
    rate = 1 - keep.float().mean().item()
    # 6554 / 65536 with 400,000 draws: standard error 0.00047
    assert abs(rate - 6554 / 65536) < 0.003


@pytest.mark.parametrize("shape", [(1,), (3,), (5, 7), (2, 3, 5)])
def test_mask_of_any_shape_including_sizes_not_a_multiple_of_four(shape):
    assert keep_mask(shape, 0.5).shape == shape


def test_masks_follow_torch_manual_seed():
    torch.manual_seed(3)
    a = keep_mask((64, 64), 0.3)
    torch.manual_seed(3)
    b = keep_mask((64, 64), 0.3)
    c = keep_mask((64, 64), 0.3)
    assert torch.equal(a, b) and not torch.equal(b, c)


def test_forward_and_backward_are_inverted_dropout():
    layer = Dropout(0.25).train()
    x = torch.randn(32, 50, requires_grad=True)
    torch.manual_seed(7)
    y = layer(x)
    torch.manual_seed(7)
    keep = keep_mask(x.shape, 0.25)
    torch.testing.assert_close(y, torch.where(keep, x, 0.0) / 0.75)
    y.backward(torch.ones_like(y))
    torch.testing.assert_close(x.grad, keep.float() / 0.75)


def test_mean_is_preserved():
    torch.manual_seed(1)
    y = Dropout(0.1).train()(torch.ones(200_000))
    assert abs(y.mean().item() - 1.0) < 0.01


def test_eval_p0_p1_and_inplace_behave_as_nn_dropout():
    x = torch.randn(8, 9)
    assert torch.equal(Dropout(0.5).eval()(x), x)
    assert torch.equal(Dropout(0.0).train()(x), x)
    assert torch.equal(Dropout(1.0).train()(x), torch.zeros_like(x))
    y = x.clone()
    Dropout(0.5, inplace=True).train()(y)
    assert ((y == 0) | torch.isclose(y, 2 * x)).all()


def test_bad_probability_is_rejected():
    with pytest.raises(ValueError, match="dropout probability"):
        Dropout(1.5)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        keep_mask((3,), -0.1)


def test_replace_dropout_swaps_nested_plain_dropouts():
    layer = nn.TransformerEncoderLayer(16, 2, 32, 0.2, batch_first=True)
    replace_dropout(layer)
    dropouts = [m for m in layer.modules() if isinstance(m, nn.Dropout)]
    assert len(dropouts) == 3 and all(type(m) is Dropout and m.p == 0.2 for m in dropouts)
    layer.train()(torch.randn(2, 5, 16)).sum().backward()
