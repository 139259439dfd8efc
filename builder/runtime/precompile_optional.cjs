// Bytecode for the optional packs (builder/runtime/optional.py, compiled_wheels): loads Pyodide under Node,
// unpacks the wheels, draws one figure the way a cell does (import pyplot, plot, PNG), and compiles to .pyc
// exactly the modules that loaded (precompile_in_pyodide.py's compile_zip), so the .pyc match the browser's
// CPython and the packs grow only by what a first figure imports (.pyc are bigger than zipped .py).
// node precompile_optional.cjs <pyodide dir> <precompile_in_pyodide.py> <site-packages> <numpy.whl> <in.whl> <out.whl> …
const [pyodideDir, code, sitePackages, numpyWheel, ...pairs] = process.argv.slice(2);
const fs = require("fs");
const { loadPyodide } = require(pyodideDir + "/pyodide.js");
(async () => {
  const py = await loadPyodide({ indexURL: pyodideDir + "/", env: { HOME: "/home/pyodide", MPLBACKEND: "agg" } });
  py.runPython(fs.readFileSync(code, "utf8"));
  const wheels = [numpyWheel, ...pairs.filter((_, i) => i % 2 === 0)];
  wheels.forEach((w, i) => py.FS.writeFile(`/tmp/in${i}.whl`, fs.readFileSync(w)));
  const used = py.runPython(`
import zipfile, sys, io
for i in range(${wheels.length}):
    zipfile.ZipFile(f"/tmp/in{i}.whl").extractall(${JSON.stringify(sitePackages)})
import importlib; importlib.invalidate_caches()
for name in ("dynlibs",):
    pass
import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1], label="x"); ax.bar([0, 1], [1, 2]); ax.set_title("t"); ax.legend()
fig.savefig(io.BytesIO(), format="png")
sorted(m.__file__[len(${JSON.stringify(sitePackages)}):] for m in list(sys.modules.values())
       if (getattr(m, "__file__", None) or "").startswith(${JSON.stringify(sitePackages)}) and m.__file__.endswith(".py"))
`).toJs();
  const compileZip = py.globals.get("compile_zip");
  for (let i = 0; i < pairs.length; i += 2) {
    py.FS.writeFile("/tmp/in.whl", fs.readFileSync(pairs[i]));
    compileZip("/tmp/in.whl", "/tmp/out.whl", sitePackages, py.toPy(used));
    fs.writeFileSync(pairs[i + 1], py.FS.readFile("/tmp/out.whl"));
  }
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
