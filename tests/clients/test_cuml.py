"""RAPIDS cuML (cuml-cu13) on cuemu, run as a user starts it: `cuemu run --device-profile gb10 -- python`.

Algorithms whose kernels carry PTX run; cuML's linear models call cuBLAS's matrix-vector products, whose kernels
cuBLAS ships as SASS only (README, "NVIDIA's math libraries"), and fail with a cuBLAS error naming gemv.
"""

import numpy as np
import pytest

cuml = pytest.importorskip("cuml")


def test_kmeans_finds_the_three_blobs():
    rng = np.random.default_rng(0)
    centers = np.array([[0, 0], [8, 8], [-8, 8]], np.float32)
    pts = np.concatenate([rng.standard_normal((200, 2)).astype(np.float32) + c for c in centers])
    km = cuml.cluster.KMeans(n_clusters=3, random_state=0).fit(pts)
    found = np.asarray(km.cluster_centers_)
    for c in centers:
        assert np.min(np.linalg.norm(found - c, axis=1)) < 0.3
    labels = np.asarray(km.labels_)
    assert sorted(np.bincount(labels).tolist()) == [200, 200, 200]


def test_pca_matches_numpys_decomposition():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((300, 3)) @ np.array([[3, 0, 0], [1, 1, 0], [0, 0, 0.1]])).astype(np.float32)
    pca = cuml.decomposition.PCA(n_components=2).fit(x)
    centred = x.astype(np.float64) - x.mean(0)
    eig = np.sort(np.linalg.eigvalsh(np.cov(centred.T)))[::-1]
    np.testing.assert_allclose(np.asarray(pca.explained_variance_), eig[:2], rtol=1e-3)
