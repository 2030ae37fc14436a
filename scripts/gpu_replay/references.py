"""What every recorded kernel family must compute, in numpy (float64 where it
matters), and how close a device's result must come.

`REFERENCES[family](arrays, shape)` takes the family's named arrays (inputs as the
kernel read them) and its sizes and returns the expected contents of the buffers
the kernel writes, by name. record.py checks the recording device's results against
these before anything travels; replay_kit.py checks the replay device's results the
same way, since a GPU-sized output is too large to carry.
"""
import numpy as np

# (rtol, atol) per family: |got - expected| <= atol + rtol * |expected| elementwise.
# fp32 results differ from a float64 reference by rounding and by the order of sums;
# fp16 results by one or two units in the last place.
TOLERANCES = {
    "vector_add": (1e-6, 1e-6),
    "softmax": (1e-4, 1e-7),
    "layer_norm": (1e-2, 1e-2),
    "matmul_fp32": (1e-4, 1e-3),
    "matmul_fp16": (1e-2, 1e-2),
    "attention": (1e-2, 1e-2),
    "cumsum": (1e-4, 1e-3),
    "transpose": (0.0, 0.0),
    "histogram": (0.0, 0.0),
    "hlo_row_sum": (1e-4, 1e-3),
    "hlo_column_sum": (1e-4, 1e-3),
}


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def vector_add(arrays, _shape):
    return {"out": _f64(arrays["x"]) + _f64(arrays["y"])}


def softmax(arrays, _shape):
    x = _f64(arrays["x"])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"out": e / e.sum(axis=1, keepdims=True)}


def layer_norm(arrays, shape):
    x = _f64(arrays["x"])
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + shape["eps"])
    y = (x - mean) * rstd * _f64(arrays["w"]) + _f64(arrays["b"])
    return {"y": y, "mean": mean[:, 0], "rstd": rstd[:, 0]}


def matmul(arrays, _shape):
    return {"c": _f64(arrays["a"]) @ _f64(arrays["b"])}


def attention(arrays, shape):
    """Causal softmax(q k^T * sm_scale) v per head, and the row's log-sum-exp in base 2
    (tutorial 06 stores m_i + log2(l_i) of the scores scaled by sm_scale / ln 2)."""
    q, k, v = _f64(arrays["q"]), _f64(arrays["k"]), _f64(arrays["v"])
    n = q.shape[2]
    scores = np.einsum("zhid,zhjd->zhij", q, k) * shape["sm_scale"]
    if shape.get("causal", True):
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - top)
    total = weights.sum(axis=-1, keepdims=True)
    out = np.einsum("zhij,zhjd->zhid", weights / total, v)
    lse2 = (top[..., 0] + np.log(total[..., 0])) / np.log(2.0)
    return {"o": out, "m": lse2}


def cumsum(arrays, _shape):
    return {"out": np.cumsum(_f64(arrays["x"]), axis=1)}


def transpose(arrays, _shape):
    return {"out": np.ascontiguousarray(arrays["x"].T)}


def histogram(arrays, shape):
    return {"bins": np.bincount(arrays["x"].ravel(), minlength=shape["bins"]).astype(np.int32)}


def hlo_row_sum(arrays, _shape):
    return {"out": _f64(arrays["x"]).sum(axis=1)}


def hlo_column_sum(arrays, _shape):
    return {"out": _f64(arrays["x"]).sum(axis=0)}


REFERENCES = {
    "vector_add": vector_add, "softmax": softmax, "layer_norm": layer_norm,
    "matmul_fp32": matmul, "matmul_fp16": matmul, "attention": attention, "cumsum": cumsum,
    "transpose": transpose, "histogram": histogram, "hlo_row_sum": hlo_row_sum,
    "hlo_column_sum": hlo_column_sum,
}


def mismatch(expected, actual, tolerance):
    """(max abs error, None) when `actual` is within `tolerance` of `expected`, else
    (max abs error, a description of the first element outside it)."""
    rtol, atol = tolerance
    want = _f64(expected).ravel()
    got = _f64(actual).ravel()
    if want.shape != got.shape:
        return float("inf"), f"{got.size} elements, expected {want.size}"
    if want.size == 0:
        return 0.0, None
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want)
        bad = ~(error <= atol + rtol * np.abs(want))
    bad &= ~(np.isnan(want) & np.isnan(got))
    finite = error[np.isfinite(error)]
    worst = float(finite.max()) if finite.size == error.size else float("inf")
    if not bad.any():
        return worst, None
    first = int(np.flatnonzero(bad)[0])
    return worst, (f"{int(bad.sum())} of {want.size} elements outside rtol={rtol}, atol={atol}; "
                   f"first at {first}: got {got[first]!r}, expected {want[first]!r}")
