"""Replay the bundles of record.py on an OpenCL device, check every buffer and time
each kernel, next to torch's CUDA equivalent where torch and CUDA are there.

    python3 scripts/gpu_replay/replay_kit.py [BUNDLES=.gpu_replay] [--families a,b] [--json PATH]

Needs numpy and pyopencl only (torch is optional): inputs are regenerated from their
descriptions (inputs.py) and checked against the recorded SHA-256; every buffer the
kernel writes is compared with the family's numpy reference (references.py, the
family's tolerance), every other one must come back unchanged, and buffers whose
recorded contents travelled (`bufN.out`, at most record.STORE_LIMIT bytes) are also
compared with the recording device's result the way launcher/replay.py compares
(exact for integers, its small tolerance for floats). Each kernel is then launched
again, timed by OpenCL profiling events (median), within a time budget per kernel.

GPU_REPLAY_DEVICE picks the device by a substring of "platform / vendor / device" (default:
the first GPU, else the first device).
"""
import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from inputs import digest, generate  # noqa: E402  (this folder, numpy only)
from references import REFERENCES, mismatch  # noqa: E402

KIT_FORMAT = "triton-spirv-gpu-replay-1"
DEVICE_ENV = "GPU_REPLAY_DEVICE"


def _load_launch_replay():
    """launcher/replay.py by its path: importing the `launcher` package would load the
    whole launcher, which this machine need not have the dependencies of."""
    spec = importlib.util.spec_from_file_location("launch_replay", os.path.join(ROOT, "launcher", "replay.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


launch_replay = _load_launch_replay()


class KitError(Exception):
    """A bundle that cannot be replayed as recorded (format, regenerated inputs)."""


def list_bundles(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(os.path.join(directory, d) for d in os.listdir(directory)
                  if os.path.exists(os.path.join(directory, d, "kit.json")))


def load(folder):
    """(launch.json, kit.json) of a bundle."""
    with open(os.path.join(folder, "kit.json")) as f:
        kit = json.load(f)
    if kit.get("format") != KIT_FORMAT:
        raise KitError(f"{folder}: not a replay bundle ({kit.get('format')!r})")
    with open(os.path.join(folder, "launch.json")) as f:
        return json.load(f), kit


def initial_contents(folder, kit):
    """Per buffer number, the bytes before the launch (regenerated or carried), checked
    against the recording; and the family's inputs by role, typed and shaped."""
    contents, arrays = {}, {}
    for number, entry in kit["buffers"].items():
        spec = entry["input"]
        if spec["kind"] == "stored":
            with open(os.path.join(folder, f"buf{number}.in"), "rb") as f:
                data = np.frombuffer(f.read(), np.uint8)
        else:
            array = generate(spec)
            if entry.get("role") and spec["kind"] != "zeros":
                arrays[entry["role"]] = array
            data = array.view(np.uint8).ravel()
        if entry["in_sha256"] is not None and digest(data) != entry["in_sha256"]:
            raise KitError(f"{os.path.basename(folder)}: buffer {number} ('{entry.get('role')}') regenerated "
                           f"with other bytes than were recorded ({spec})")
        contents[int(number)] = data.copy()
    return contents, arrays


def check_buffers(folder, meta, kit, results, arrays):
    """-> (problems, the largest error against the reference, how the results
    compare with the recording: "bitwise", "close" or "differs")."""
    expected = REFERENCES[kit["family"]](arrays, kit["shape"])
    elements = {p["snapshot"]: p["element"] for p in meta["params"].values() if p["kind"] == "buffer"}
    problems, worst, recording = [], 0.0, "bitwise"
    for number, entry in kit["buffers"].items():
        actual = results[int(number)].tobytes()
        where = f"buffer {number} ('{entry.get('role') or 'scratch'}')"
        if entry["check"] == "reference":
            error, problem = mismatch(expected[entry["role"]], np.frombuffer(actual, entry["dtype"]),
                                      kit["tolerance"])
            worst = max(worst, error)
            if problem:
                problems.append(f"{where} against the reference: {problem}")
        elif entry["check"] == "unchanged" and digest(actual) != entry["in_sha256"]:
            problems.append(f"{where}: an input the kernel changed")
        stored = os.path.join(folder, f"buf{number}.out")
        if os.path.exists(stored):
            with open(stored, "rb") as f:
                recorded = f.read()
            if digest(recorded) != entry["out_sha256"]:
                problems.append(f"{where}: the carried recording bufN.out is damaged (SHA-256)")
            problem = launch_replay.compare(recorded, actual, elements[int(number)])
            if problem:
                recording = "differs"
                problems.append(f"{where} against the recording: {problem}")
            elif recorded != actual and recording == "bitwise":
                recording = "close"
        elif digest(actual) != entry["out_sha256"] and recording == "bitwise":
            recording = "close"     # too large to carry: the reference decides
    return problems, worst, recording


def replay(folder, cl, context, queue, budget_s=1.0, max_launches=200):
    """Build, launch, check and time one bundle; -> a result dict (see main)."""
    meta, kit = load(folder)
    device = queue.device
    result = {"family": kit["family"], "kernel": meta["name"], "ok": False, "problems": [],
              "global_size": meta["global_size"], "local_size": meta["local_size"],
              "bytes": sum(entry["bytes"] for entry in kit["buffers"].values())}
    contents, arrays = initial_contents(folder, kit)
    program = cl.Program(context, meta["source"]).build(options=meta["build_options"])
    kernel = cl.Kernel(program, meta["name"])
    result["local_mem_bytes"] = int(kernel.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE, device))
    mf = cl.mem_flags
    buffers = {number: cl.Buffer(context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                                 hostbuf=data if data.size else np.zeros(16, np.uint8))
               for number, data in contents.items()}
    for index, param in meta["params"].items():
        if param["kind"] == "buffer":
            kernel.set_arg(int(index), buffers[param["snapshot"]])
        else:
            kernel.set_arg(int(index), launch_replay._CODE_TYPES[param["code"]](param["value"]))
    global_size, local_size = tuple(meta["global_size"]), tuple(meta["local_size"])
    first = cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size)
    first.wait()
    results = {}
    for number, data in contents.items():
        results[number] = np.empty_like(data)
        if data.size:
            cl.enqueue_copy(queue, results[number], buffers[number])
    queue.finish()
    problems, worst, recording = check_buffers(folder, meta, kit, results, arrays)
    result.update(ok=not problems, problems=problems, max_error=worst, recording=recording)
    if budget_s > 0:     # 0: one launch only (e.g. under a simulator)
        result.update(time_kernel(cl, queue, kernel, global_size, local_size, first, budget_s, max_launches))
        result["gbytes_per_s"] = result["bytes"] / (result["us"] * 1e3) if result["us"] else None
    return result


def time_kernel(cl, queue, kernel, global_size, local_size, first, budget_s, max_launches):
    """Median device time of repeated launches (OpenCL profiling events), after a
    warm-up, as many as fit in `budget_s` (at least 3)."""
    once = _event_us(first)
    warm = [cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size) for _ in range(2)]
    queue.finish()
    once = min([once] + [_event_us(e) for e in warm])
    count = int(min(max_launches, max(3, budget_s * 1e6 / max(once, 1.0))))
    events = [cl.enqueue_nd_range_kernel(queue, kernel, global_size, local_size) for _ in range(count)]
    queue.finish()
    times = [_event_us(e) for e in events]
    return {"us": statistics.median(times), "us_min": min(times), "launches": count}


def _event_us(event):
    return (event.profile.end - event.profile.start) * 1e-3


def choose_device(cl):
    """The device GPU_REPLAY_DEVICE names, else the first GPU, else the first device."""
    wanted = os.environ.get(DEVICE_ENV, "").strip().lower()
    devices = [(p, d) for p in cl.get_platforms() for d in p.get_devices()]
    if not devices:
        raise RuntimeError("no OpenCL device: is an ICD registered (/etc/OpenCL/vendors, OCL_ICD_VENDORS)?")
    for platform, device in devices:
        if wanted and wanted in f"{platform.name} / {platform.vendor} / {device.name}".lower():
            return device
    if wanted:
        raise RuntimeError(f"{DEVICE_ENV}={wanted!r} names none of: "
                           + "; ".join(f"{p.name.strip()} / {d.name.strip()}" for p, d in devices))
    gpus = [d for _p, d in devices if d.type & cl.device_type.GPU]
    return (gpus or [devices[0][1]])[0]


def describe(cl, device):
    info = {"name": device.name.strip(), "vendor": device.vendor.strip(), "driver": device.driver_version.strip(),
            "version": device.version.strip(), "opencl_c": device.opencl_c_version.strip(),
            "platform": device.platform.name.strip(), "compute_units": int(device.max_compute_units),
            "max_work_group_size": int(device.max_work_group_size),
            "local_mem_bytes": int(device.local_mem_size), "global_mem_bytes": int(device.global_mem_size)}
    try:
        info["il_version"] = device.il_version.strip()
    except (cl.Error, AttributeError):
        info["il_version"] = ""
    return info


def run(folders, budget_s=1.0, with_torch=True, log=print):
    """Replays `folders`; -> {"device": ..., "torch": ..., "kernels": [result, ...]}."""
    import pyopencl as cl
    device = choose_device(cl)
    context = cl.Context([device])
    queue = cl.CommandQueue(context, device, properties=cl.command_queue_properties.PROFILING_ENABLE)
    report = {"device": describe(cl, device), "kernels": []}
    torch_timer = None
    if with_torch:
        import torch_equivalents
        torch_timer, report["torch"] = torch_equivalents.timer()
    log(f"device: {report['device']['name']} ({report['device']['platform']}, {report['device']['driver']})")
    for folder in folders:
        start = time.time()
        try:
            result = replay(folder, cl, context, queue, budget_s)
        except Exception as exc:     # report and go on with the next kernel
            result = {"family": os.path.basename(folder), "ok": False, "problems": [f"{type(exc).__name__}: {exc}"]}
        if torch_timer is not None and "us" in result:     # a kernel that ran, and timed
            result.update(torch_timer(folder, budget_s))
            if result.get("torch_us"):
                result["ratio"] = result["us"] / result["torch_us"]
        result["wall_s"] = round(time.time() - start, 2)
        report["kernels"].append(result)
        for problem in result["problems"]:
            log(f"  {result['family']}: {problem}")
    return report


def table(report):
    columns = [("kernel", 16, lambda r: r["family"]), ("ok", 3, lambda r: "yes" if r["ok"] else "NO"),
               ("max error", 10, lambda r: _number(r.get("max_error"), ".2e")),
               ("recording", 9, lambda r: r.get("recording", "-")),
               ("ours us", 10, lambda r: _number(r.get("us"), ".1f")),
               ("GB/s", 7, lambda r: _number(r.get("gbytes_per_s"), ".1f")),
               ("torch us", 10, lambda r: _number(r.get("torch_us"), ".1f")),
               ("ratio", 6, lambda r: _number(r.get("ratio"), ".2f")),
               ("torch op", 0, lambda r: r.get("torch_op") or "-")]
    def row(cells):      # the first column left-aligned, the last one as it is
        return " ".join([f"{cells[0]:<{columns[0][1]}}"] + [f"{text:>{width}}" for text, (_t, width, _c)
                                                            in zip(cells[1:-1], columns[1:-1])] + [cells[-1]])
    lines = [row([title for title, _width, _cell in columns])]
    lines += [row([cell(r) for _title, _width, cell in columns]) for r in report["kernels"]]
    return "\n".join(lines)


def _number(value, fmt):
    return "-" if value is None else format(value, fmt)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundles", nargs="?", default=os.path.join(ROOT, ".gpu_replay"))
    parser.add_argument("--families", default="", help="comma-separated (default: every bundle)")
    parser.add_argument("--budget-s", type=float, default=1.0, help="timed launches per kernel, in seconds (0: no timing)")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--json", default=None, help="also write the report here (default: $OUT/gpu_replay.json)")
    args = parser.parse_args(argv)
    folders = list_bundles(args.bundles)
    if args.families:
        wanted = args.families.split(",")
        folders = [f for f in folders if os.path.basename(f) in wanted]
    if not folders:
        print(f"no bundles under {args.bundles} (run scripts/gpu_replay/prepare.sh first)", file=sys.stderr)
        return 2
    report = run(folders, args.budget_s, not args.no_torch)
    print(table(report))
    path = args.json or (os.path.join(os.environ["OUT"], "gpu_replay.json") if os.environ.get("OUT") else None)
    if path:
        with open(path, "w") as f:
            json.dump(report, f, indent=1)
        print(f"report: {path}")
    return 0 if all(r["ok"] for r in report["kernels"]) else 1


if __name__ == "__main__":
    sys.exit(main())
