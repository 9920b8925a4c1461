"""TensorFlow (tensorflow[and-cuda], CUDA 12 libraries) on cuemu, run as a user starts it:
`cuemu run --device-profile gb10 -- python`.

TensorFlow's own kernels carry PTX for compute_90 (which a compute-capability-12.1 device runs), its cuBLAS and
cuDNN wheels carry PTX for compute_120/121 only, and the kernels it generates at run time it assembles with the
ptxas of XLA's CUDA data folder, which `cuemu run` sets to cuemu's ptx-toolkit (XLA_FLAGS). Each result is compared
with TensorFlow's CPU device in the same process.
"""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

GPUS = tf.config.list_physical_devices("GPU")
pytestmark = pytest.mark.skipif(not GPUS, reason="TensorFlow registered no GPU (run through `cuemu run`)")

# Full float32 products on both devices: by default TensorFlow multiplies in TF32 on a GPU, as it does here.
tf.config.experimental.enable_tensor_float_32_execution(False)


def both(fn, *args):
    out = []
    for device in ("/GPU:0", "/CPU:0"):
        with tf.device(device):
            result = fn(*[tf.constant(a) for a in args])
        out.append(tf.nest.map_structure(lambda t: t.numpy(), result))
    return out


def test_the_device_is_cuemus():
    details = tf.config.experimental.get_device_details(GPUS[0])
    assert details["device_name"].startswith("cuemu virtual")
    with tf.device("/GPU:0"):
        x = tf.range(10)
    assert "GPU" in x.device


def test_elementwise_and_reductions():
    rng = np.random.default_rng(1)
    f = rng.standard_normal((33, 129)).astype(np.float32)
    i = rng.integers(-1000, 1000, size=(33, 129)).astype(np.int32)

    def fn(f, i):
        return tf.nn.relu(f), i * 3 + 1, tf.reduce_max(i, axis=0), tf.reduce_sum(i), tf.abs(f) - f

    (gpu, cpu) = both(fn, f, i)
    for a, b in zip(gpu, cpu):
        np.testing.assert_array_equal(a, b)
    gpu, cpu = both(lambda f: (tf.sigmoid(f), tf.exp(f * 0.5), tf.reduce_sum(f, axis=1), tf.math.cumsum(f, 1)), f)
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)


def test_matrix_products_through_cublas():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((70, 90)).astype(np.float32)
    b = rng.standard_normal((90, 50)).astype(np.float32)
    gpu, cpu = both(lambda a, b: tf.linalg.matmul(a, b), a, b)
    np.testing.assert_allclose(gpu, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-4)


def test_convolution_through_cudnn():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 16, 16, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 8)).astype(np.float32)
    gpu, cpu = both(lambda x, w: tf.nn.conv2d(x, w, strides=1, padding="SAME"), x, w)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-4)


def test_stateless_random_numbers_and_sorting():
    gpu, cpu = both(lambda: (tf.random.stateless_uniform((1000,), seed=(3, 4), maxval=100, dtype=tf.int32),))
    np.testing.assert_array_equal(gpu[0], cpu[0])
    v = np.random.default_rng(4).standard_normal(999).astype(np.float32)
    gpu, cpu = both(lambda v: (tf.sort(v), tf.argsort(v, stable=True), tf.math.top_k(v, 5).indices), v)
    for a, b in zip(gpu, cpu):
        np.testing.assert_array_equal(a, b)


def test_a_keras_model_trains():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((256, 8)).astype(np.float32)
    y = (x[:, :1] * 2 - x[:, 1:2]).astype(np.float32)
    with tf.device("/GPU:0"):
        tf.keras.utils.set_random_seed(0)
        model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(1)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
        first = model.evaluate(x, y, verbose=0)
        model.fit(x, y, epochs=20, batch_size=64, verbose=0)
        last = model.evaluate(x, y, verbose=0)
    assert last < first / 4
