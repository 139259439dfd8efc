"""Runs inside Pyodide itself, under Node (precompile.cjs loads it; precompile.py says why): `main(spec)` installs
the wheels, runs a first cell and a first figure the way the browser does (cell_runtime.py), and turns the .py
members those loaded, in the stdlib zip and in every wheel, into sourceless .pyc where the .py was (a wheel marked
`all`: every module)."""

import importlib
import importlib._bootstrap_external as be
import json
import sys
import zipfile

STDLIB_PREFIX = "/lib/python312.zip/"


def compile_zip(src, dst, prefix, only=None):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            name, data = info.filename, zin.read(info)
            if name.endswith(".py") and (only is None or name in only):
                try:
                    code = compile(data, prefix + name, "exec", dont_inherit=True)
                except SyntaxError:
                    pass  # e.g. test data written in Python 2: keep the source
                else:
                    name, data = name[:-3] + ".pyc", bytes(be._code_to_timestamp_pyc(code, 0, 0))
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = info.external_attr
            # Stored, not deflated: the transport compresses each file as one Zstandard frame (far better than
            # per-member deflate), and zipimport then reads a member without inflating it.
            zi.compress_type = zipfile.ZIP_STORED
            zout.writestr(zi, data)


def main(spec_json):
    spec = json.loads(spec_json)
    site = spec["site_packages"]
    for wheel in spec["wheels"]:
        zipfile.ZipFile(wheel["in"]).extractall(site)
    importlib.invalidate_caches()
    sys.path.insert(0, spec["cell_runtime_dir"])
    import cell_runtime

    for code in spec["warm"]:
        result = cell_runtime.run_cell(code, "<cell-warm>")
        if not result["ok"]:
            raise RuntimeError(f"the warm-up cell failed: {result['error']}")
    used = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None) or ""
        if f.endswith(".py"):
            used.add(f)
    stdlib_used = {f[len(STDLIB_PREFIX) :] for f in used if f.startswith(STDLIB_PREFIX)}
    compile_zip(spec["stdlib"]["in"], spec["stdlib"]["out"], STDLIB_PREFIX, stdlib_used)
    site_used = {f[len(site) :] for f in used if f.startswith(site)}
    for wheel in spec["wheels"]:
        compile_zip(wheel["in"], wheel["out"], site, None if wheel.get("all") else site_used)
    return len(used)
