"""Values computed from files, remembered on disk while the files stay unchanged.

Some start-up work only digests files that almost never change: Triton's own key
(a sha256 over its sources and the ~500 MB libtriton) and the backend's source hash.
`remembered(name, identity, paths, compute)` returns `compute()`'s string and keeps it
in a small JSON record under Triton's cache directory, next to a fingerprint of the
files: (path, size, mtime_ns, ctime_ns, device, inode) of each. Editing, replacing,
adding or removing a file changes the fingerprint (the caller's path list includes
every file that could matter) and the value is computed again. ctime cannot be set
from user space, so even tools that restore mtimes (cp -p, tar, rsync -a) change it.

Two races are closed: a file that changes while `compute()` reads it (the fingerprint
is taken before and after; a record is only written when both agree), and a file
rewritten twice within one timestamp tick (files changed in the last few seconds are
not trusted, as git does with "racily clean" entries).
"""

import hashlib
import json
import os
import sys
import tempfile
import time

# Changes younger than this may share a timestamp tick with a later change.
RECENT_CHANGE_NS = 3 * 10**9
RECORD_FORMAT = "triton-spirv-file-memo-1"
SUBDIRECTORY = "triton_spirv"


def remembered(name, identity, paths, compute):
    """compute() (a str), or the value it returned before while `paths` are unchanged.

    `identity` names what else the value depends on (a version string) and where the
    files are; records of different identities do not replace each other.
    """
    try:
        before = fingerprint(identity, paths)
    except OSError:  # a file went away while listing: nothing to trust
        return compute()
    record = _record_path(name, identity)
    stored = _stored_value(record, before)
    if stored is not None:
        return stored
    value = compute()
    if record and not _changed_recently(before) and _unchanged_since(before, identity, paths):
        _write_record(record, {"format": RECORD_FORMAT, "fingerprint": before["digest"], "value": value})
    return value


def stored(name, identity, paths):
    """The value remembered() would return now without computing, or None."""
    try:
        return _stored_value(_record_path(name, identity), fingerprint(identity, paths))
    except OSError:
        return None


def _stored_value(record, before):
    """The record's value when its fingerprint is `before`'s, else None."""
    stored = _read_record(record) if record else None
    return stored["value"] if stored is not None and stored["fingerprint"] == before["digest"] else None


def fingerprint(identity, paths):
    """{"digest": sha256 of the identity and every file's stat, "newest": latest change, ns}."""
    digest = hashlib.sha256(identity.encode("utf-8", "surrogateescape"))
    newest = 0
    for path in paths:
        st = os.stat(path)
        digest.update(f"\0{path}\0{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_dev}:{st.st_ino}"
                      .encode("utf-8", "surrogateescape"))
        newest = max(newest, st.st_mtime_ns, st.st_ctime_ns)
    return {"digest": digest.hexdigest(), "newest": newest}


def files_under(directory, suffix=""):
    """Every file under `directory` whose name ends with `suffix`, sorted; bytecode caches
    (__pycache__) left out. Directory links are followed, as Python's imports do."""
    found, seen = [], set()
    for dirpath, dirnames, filenames in os.walk(directory, followlinks=True):
        st = os.stat(dirpath)
        if (st.st_dev, st.st_ino) in seen:  # a link cycle
            dirnames[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        found.extend(os.path.join(dirpath, f) for f in filenames if f.endswith(suffix))
    return sorted(found)


def cache_directory():
    """Triton's cache directory (TRITON_CACHE_DIR or ~/.triton/cache), or None. Triton's
    setting when Triton is loaded; the launcher does not load it (the HLO frontend runs
    without Triton)."""
    knobs = getattr(sys.modules.get("triton"), "knobs", None)
    if knobs is not None:
        try:
            return knobs.cache.dir or None
        except Exception:  # Triton half-loaded: its default place
            pass
    return os.environ.get("TRITON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".triton", "cache")


def cache_file_path(filename):
    """Path of one of this package's files in Triton's cache directory, or None."""
    directory = cache_directory()
    return os.path.join(directory, SUBDIRECTORY, filename) if directory else None


def _record_path(name, identity):
    where = hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return cache_file_path(f"{name}-{where}.json")


def _changed_recently(before):
    return time.time_ns() - before["newest"] < RECENT_CHANGE_NS


def _unchanged_since(before, identity, paths):
    try:
        return fingerprint(identity, paths)["digest"] == before["digest"]
    except OSError:
        return False


def _read_record(path):
    """The record's dict, or None when absent, unreadable or not one of ours."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if (not isinstance(record, dict) or record.get("format") != RECORD_FORMAT
            or not isinstance(record.get("fingerprint"), str) or not isinstance(record.get("value"), str)):
        return None
    return record


def write_atomically(path, data):
    """Write bytes so that readers see the old file or the new one, never a part;
    quietly gives up where the directory is not writable (the cache is an optimisation)."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


# A stored binary's header: a tag, the payload's length and sha256; a payload that does
# not match is not used (a driver may crash on a truncated program binary).
_SEAL_TAG = b"triton-spirv-sealed-1\n"
_SEAL_HEADER = len(_SEAL_TAG) + 8 + 32


def sealed(payload):
    """`payload` (bytes) with a header recording its length and checksum."""
    return _SEAL_TAG + len(payload).to_bytes(8, "little") + hashlib.sha256(payload).digest() + payload


def unsealed(data):
    """The payload of `sealed` bytes, or None where they are not sealed, cut short or
    changed."""
    if data is None or len(data) < _SEAL_HEADER or not data.startswith(_SEAL_TAG):
        return None
    length = int.from_bytes(data[len(_SEAL_TAG):len(_SEAL_TAG) + 8], "little")
    payload = data[_SEAL_HEADER:]
    if len(payload) != length or hashlib.sha256(payload).digest() != data[_SEAL_HEADER - 32:_SEAL_HEADER]:
        return None
    return payload


def _write_record(path, record):
    write_atomically(path, json.dumps(record).encode("utf-8"))
