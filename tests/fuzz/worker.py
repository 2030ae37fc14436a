"""A worker process: runs generated programs in the configuration its environment
selects (TRITON_INTERPRET=1 for the reference, TRITON_OPENCL_DEVICE for ours).

Protocol: one JSON request per line on stdin, {"path", "out", "options", "record"};
one reply per request on stdout, on a line starting with REPLY_MARK:
{"status": "ok"} (the outputs saved as .npz at "out") or {"status": "error",
"type", "message"}. Other lines on stdout (a runtime's chatter) are ignored.
"""

import importlib.util
import json
import sys
import traceback

REPLY_MARK = "@@fuzz-reply "


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _run(request, index):
    import numpy as np
    module = _load(request["path"], f"fuzz_program_{index}")
    if request.get("record"):
        from launcher.replay import recording
        with recording(request["record"]):
            outputs = module.run(**request["options"])
    else:
        outputs = module.run(**request["options"])
    np.savez(request["out"], **outputs)


def main():
    for index, line in enumerate(sys.stdin):
        request = json.loads(line)
        try:
            _run(request, index)
            reply = {"status": "ok"}
        except BaseException as exc:  # every failure is a finding, reported to the parent
            reply = {"status": "error", "type": type(exc).__name__, "message": str(exc)[:4000],
                     "traceback": traceback.format_exc()[-4000:]}
        sys.stdout.write(REPLY_MARK + json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
