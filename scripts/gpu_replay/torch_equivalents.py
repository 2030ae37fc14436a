"""torch's CUDA operation for each recorded family, timed by CUDA events, for the
replay's table (replay_kit.py). Optional: without torch or CUDA, nothing is timed.

`OPS[family](tensors, shape)` returns (a name, a function of no arguments running
the operation) on the family's inputs as CUDA tensors.
"""
import statistics

OPS = {
    "vector_add": lambda t, s: ("torch.add", lambda: t["x"] + t["y"]),
    "softmax": lambda t, s: ("torch.softmax", lambda: t["x"].softmax(dim=1)),
    "layer_norm": lambda t, s: ("F.layer_norm", lambda: _F.layer_norm(t["x"], t["x"].shape[1:], t["w"], t["b"],
                                                                      s["eps"])),
    "matmul_fp32": lambda t, s: ("torch.matmul (fp32, TF32 off)", lambda: t["a"] @ t["b"]),
    "matmul_fp16": lambda t, s: ("torch.matmul (fp16)", lambda: t["a"] @ t["b"]),
    "attention": lambda t, s: ("F.scaled_dot_product_attention (causal)",
                               lambda: _F.scaled_dot_product_attention(t["q"], t["k"], t["v"], is_causal=True,
                                                                       scale=s["sm_scale"])),
    "cumsum": lambda t, s: ("torch.cumsum", lambda: t["x"].cumsum(dim=1)),
    "transpose": lambda t, s: ("x.t().contiguous()", lambda: t["x"].t().contiguous()),
    "histogram": lambda t, s: ("torch.bincount", lambda: t["x"].bincount(minlength=s["bins"])),
    "hlo_row_sum": lambda t, s: ("x.sum(dim=1)", lambda: t["x"].sum(dim=1)),
    "hlo_column_sum": lambda t, s: ("x.sum(dim=0)", lambda: t["x"].sum(dim=0)),
}


def timer():
    """(a function bundle folder, budget -> {"torch_op", "torch_us"}, or None; what torch is)."""
    global _torch, _F
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as exc:
        return None, {"available": False, "why": f"no torch ({exc})"}
    if not torch.cuda.is_available():
        return None, {"available": False, "why": f"torch {torch.__version__} without CUDA"}
    _torch, _F = torch, F
    torch.backends.cuda.matmul.allow_tf32 = False
    info = {"available": True, "version": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0)}
    return time_family, info


def time_family(folder, budget_s):
    import replay_kit
    _meta, kit = replay_kit.load(folder)
    op = OPS.get(kit["family"])
    if op is None:
        return {"torch_op": None}
    _contents, arrays = replay_kit.initial_contents(folder, kit)
    tensors = {role: _torch.from_numpy(array).cuda() for role, array in arrays.items()}
    name, run = op(tensors, kit["shape"])
    return {"torch_op": name, "torch_us": median_us(run, budget_s)}


def median_us(run, budget_s, max_launches=200):
    """Median of CUDA-event times of single launches, after a warm-up, as many as fit
    in `budget_s` (at least 3)."""
    for _ in range(3):
        run()
    _torch.cuda.synchronize()
    once = _timed(run)
    count = int(min(max_launches, max(3, budget_s * 1e6 / max(once, 1.0))))
    return statistics.median(_timed(run) for _ in range(count))


def _timed(run):
    start, end = _torch.cuda.Event(enable_timing=True), _torch.cuda.Event(enable_timing=True)
    start.record()
    run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3
