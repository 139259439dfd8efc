"""Runs inside Pyodide itself, under Node (builder/runtime/precompile.cjs loads it; see precompile.py for why):
`main()` turns .py members of the stdlib zip and the NumPy wheel into sourceless .pyc where the .py was."""

import importlib._bootstrap_external as be
import sys
import zipfile


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
            # Stored, not deflated: the transport compresses the whole zip as one Zstandard frame (far better
            # than per-member deflate), and zipimport then reads a member without inflating it.
            zi.compress_type = zipfile.ZIP_STORED
            zout.writestr(zi, data)


def main(stdlib_in, stdlib_out, numpy_in, numpy_out, site_packages, warm_imports):
    zipfile.ZipFile(numpy_in).extractall(site_packages)
    for name in warm_imports.split(","):
        try:
            __import__(name.strip())
        except ImportError:
            pass  # e.g. a package attention_core imports that Pyodide lacks: reported when it is imported
    used = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None) or ""
        for root in ("/lib/python312.zip/", "/lib/python3.12/"):
            if f.startswith(root) and not f.startswith(site_packages) and f.endswith(".py"):
                used.add(f[len(root) :])
    compile_zip(stdlib_in, stdlib_out, "/lib/python312.zip/", used)
    compile_zip(numpy_in, numpy_out, site_packages)
    return len(used)
