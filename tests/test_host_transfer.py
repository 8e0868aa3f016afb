"""hookgrad._host_transfer.put: NumPy results become JAX arrays as jax.device_put makes them."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from hookgrad import _host_transfer


@pytest.mark.parametrize("value", [np.arange(12, dtype=np.float32).reshape(3, 4),
                                   np.array(2.5, np.float64), np.array([True, False]),
                                   np.arange(5, dtype=np.int8), np.zeros((0, 3), np.int32)])
def test_put_gives_device_puts_array(value):
    aval = jax.core.ShapedArray(value.shape, value.dtype)
    want = jax.device_put(value)
    got, = _host_transfer.put([value], [aval])
    assert isinstance(got, type(want)) and not got._committed
    assert got.dtype == want.dtype and got.shape == want.shape and not got.weak_type
    assert got.devices() == want.devices()
    np.testing.assert_array_equal(np.asarray(got), value)
    np.testing.assert_array_equal(np.asarray(jnp.add(got, got)), value + value)


@pytest.mark.parametrize("value", [np.arange(6, dtype=np.int64).reshape(2, 3).T,
                                   np.zeros((0,), np.float32), np.array([1 + 2j], np.complex64)])
def test_put_plain_gives_device_puts_array_or_leaves_it_to_device_put(value):
    # hookgrad.tensor's transfer: a transposed (non-contiguous) value too
    got, want = _host_transfer.put_plain(value), jax.device_put(value)
    assert got.dtype == want.dtype and got.shape == want.shape and not got._committed
    np.testing.assert_array_equal(np.asarray(got), value)
    assert _host_transfer.put_plain(np.zeros(2, "V8")) is None  # a dtype JAX has not


def test_a_configured_default_device_is_jax_device_puts_to_honour():
    value = np.ones(3, np.float32)
    device = jax.devices()[-1]
    with jax.default_device(device):
        got, = _host_transfer.put([value], [jax.core.ShapedArray((3,), np.float32)])
    assert got.devices() == {device} and not got._committed


def test_numbers_placed_are_the_scalars_jax_jit_makes_of_them_kept_per_value():
    # a jitted program's Python number arguments: each as the JAX scalar jax.jit's own
    # dispatch would put on the device, made once per value (its sign for a zero)
    numbers = (3, 2.5, True, -0.0, 0.0, float("nan"), -7, 1)
    args = (jnp.ones(2),) + numbers
    placed = _host_transfer.numbers_placed(args)
    assert placed[0] is args[0]
    for number, got in zip(numbers, placed[1:]):
        want = jax.device_put(number)
        assert got.aval == want.aval and got.weak_type == want.weak_type and not got._committed
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.signbit(np.asarray(got)) == np.signbit(number)
    again = _host_transfer.numbers_placed(list(args))
    assert all(again[k] is placed[k] for k in range(len(args)))
    for zero in (0.0, -0.0, 0.0):  # equal values, not the same: one is negative
        got, = _host_transfer.numbers_placed((zero,))
        assert np.signbit(np.asarray(got)) == np.signbit(zero)
    arrays = (jnp.ones(2), np.ones(3))
    assert _host_transfer.numbers_placed(arrays) is arrays
    huge = (jnp.ones(2), 2 ** 70, 1.5)  # past int64: left to jax.jit's own error
    assert _host_transfer.numbers_placed(huge) is huge
    with jax.enable_x64(False):  # an int is an int32 scalar there, as jax.jit makes it
        small = _host_transfer.numbers_placed((3, 2.5))
        assert [a.dtype for a in small] == [jnp.int32, jnp.float32]
    assert _host_transfer.numbers_placed((3,))[0].dtype == jnp.int64
